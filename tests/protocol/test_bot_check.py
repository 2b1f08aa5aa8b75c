"""``gin-arena bot check``: passes the house bots, fails hostile ones naming the illegal answers.

Every position it sends is a real deal (a bot rebuilding it from ``history`` finds what it was
sent), it covers every phase and special case, and with ``--secret`` it fails a bot that accepts
unsigned, forged, stale or replayed requests.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

import pytest
from hostile import (
    RawBot,
    card_not_held,
    discards_taken_card,
    house,
    misknocker,
    running,
    sdk_bot,
    wrong_phase,
)
from rebuild import inconsistencies

from arena.bots.check import DEAL_SEED, CheckReport, check_bot, positions
from arena.bots.house import HOUSE_KINDS, house_bot
from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.protocol.signing import generate_secret
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.actions import ActionKind, Phase, knock
from arena.rules.game import deal_deck
from arena.rules.hand import HandState, legal_actions, play
from arena.rules.melds import best_arrangements, deadwood_mask
from arena.rules.scoring import Outcome

POSITIONS = len(positions())


def failures(report: CheckReport) -> dict[str, str]:
    return {i.name: i.detail for i in report.items if not i.passed and not i.warning}


@pytest.mark.parametrize("kind", HOUSE_KINDS)
def test_house_bots_pass(kind: str) -> None:
    bot = house(kind)
    with running(bot):
        report = check_bot(bot.url, repeats=5)
    assert report.passed, report.render()
    assert failures(report) == {}
    assert sum(i.name.startswith("act: ") for i in report.items) == POSITIONS


# --- every position is a real deal --------------------------------------------------------------


class Rebuilder:
    """A stateless SDK bot that rebuilds each deal from its request's history and refuses (500)
    any position that history contradicts; otherwise it plays greedy."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []
        self.lock = threading.Lock()
        self.server = BotServer(self.act, name="rebuilder")

    def act(self, obs: ActRequest) -> WireAction:
        problems = inconsistencies(obs)
        with self.lock:
            self.seen.append((obs.request_id, problems))
        if problems:
            raise AssertionError("; ".join(problems))
        return greedy(obs)


def test_every_checker_position_rebuilds_from_its_history() -> None:
    bot = Rebuilder()
    with running(bot.server):
        report = check_bot(bot.server.url, repeats=POSITIONS)
    assert report.passed, report.render()
    assert len(bot.seen) == 2 * POSITIONS
    assert [p for _, p in bot.seen if p] == []
    ids = [rid for rid, _ in bot.seen]
    assert len(set(ids)) == len(ids), "request ids are unique"


def test_checker_positions_are_states_of_the_checkers_seeded_deals() -> None:
    for p in positions():
        assert p.state.deck == deal_deck(DEAL_SEED, 0, p.deal), p.name
        assert not p.state.is_over
        assert p.match_id == f"check-{p.slug}"
    assert len({p.match_id for p in positions()}) == POSITIONS


def _position(slug: str) -> HandState:
    return next(p for p in positions() if p.slug == slug).state


def test_checker_covers_gin_big_gin_and_a_knock_with_melds() -> None:
    gin = _position("gin")
    hand = gin.hands[gin.to_act]
    gin_knocks = [
        a
        for a in legal_actions(gin)
        if a.kind is ActionKind.KNOCK and deadwood_mask(hand & ~(1 << (a.card or 0))) == 0
    ]
    assert gin_knocks and deadwood_mask(hand) > 0
    result = play(gin, gin.to_act, gin_knocks[0]).result
    assert result is not None and result.outcome is Outcome.GIN

    big = _position("big-gin")
    big_gin = [a for a in legal_actions(big) if a.kind is ActionKind.BIG_GIN]
    assert big_gin
    result = play(big, big.to_act, big_gin[0]).result
    assert result is not None and result.outcome is Outcome.BIG_GIN

    plain = _position("knock")
    held = plain.hands[plain.to_act]
    card = min(
        (a.card for a in legal_actions(plain) if a.kind is ActionKind.KNOCK and a.card is not None),
        key=lambda c: deadwood_mask(held & ~(1 << c)),
    )
    arrangement = best_arrangements(held & ~(1 << card))[0]
    assert 0 < arrangement.deadwood <= plain.knock_limit and arrangement.melds
    result = play(plain, plain.to_act, knock(card, arrangement.melds)).result
    assert result is not None and result.outcome in (Outcome.KNOCK, Outcome.UNDERCUT)


def test_checker_covers_misknock_response_last_chance_and_an_exposed_hand() -> None:
    misknock = _position("misknock")
    assert misknock.phase is Phase.MISKNOCK_RESPONSE
    assert misknock.rules.misknock.value == "opponent_may_accept"
    chance = _position("last-chance")
    assert chance.phase is Phase.LAST_CHANCE
    assert any(a.kind is ActionKind.TAKE_DISCARD for a in legal_actions(chance))
    after = _position("last-chance-knock")
    assert after.knock_only and all(
        a.kind in (ActionKind.KNOCK, ActionKind.BIG_GIN) for a in legal_actions(after)
    )
    exposed = _position("exposed")
    assert exposed.exposed[1 - exposed.to_act] and not exposed.exposed[exposed.to_act]
    stock_only = _position("stock-only")
    assert stock_only.to_act != stock_only.dealer
    assert [a.kind for a in legal_actions(stock_only)] == [ActionKind.DRAW_STOCK]


# --- signatures --------------------------------------------------------------------------------

SIGNATURE_CHECKS = (
    "refuses an unsigned request",
    "refuses a forged signature",
    "refuses a stale timestamp",
    "refuses a replayed webhook-id",
)


def test_a_signed_sdk_bot_passes_the_signature_checks() -> None:
    secret = generate_secret()
    signed = house_bot("greedy", secret=secret)
    with running(signed):
        report = check_bot(signed.url, secret=secret, repeats=0)
    assert report.passed, report.render()
    items = {i.name: i for i in report.items}
    statuses = {name: items[name].detail for name in SIGNATURE_CHECKS}
    assert statuses == {
        "refuses an unsigned request": "refused (HTTP 401)",
        "refuses a forged signature": "refused (HTTP 401)",
        "refuses a stale timestamp": "refused (HTTP 401)",
        "refuses a replayed webhook-id": "refused (HTTP 409)",
    }
    assert all(items[name].passed for name in SIGNATURE_CHECKS)


def test_a_bot_that_accepts_forged_requests_fails_the_check() -> None:
    trusting = house_bot("greedy")  # verifies nothing
    with running(trusting):
        report = check_bot(trusting.url, secret=generate_secret(), repeats=0)
    assert not report.passed
    failed = failures(report)
    assert set(SIGNATURE_CHECKS) <= set(failed), report.render()
    assert failed["refuses a forged signature"] == ("accepted a request signed with another secret")
    assert failed["refuses a stale timestamp"] == "accepted a request signed 60 minutes ago"
    assert failed["refuses a replayed webhook-id"] == "accepted the same signed request twice"


class NoReplayMemory(BotServer):
    """Checks signatures and timestamps, but forgets every webhook-id."""

    def first_sighting(self, msg_id: str, window_s: float = 600.0) -> bool:
        return True


def test_a_bot_that_accepts_a_replayed_id_fails_only_that_check() -> None:
    secret = generate_secret()
    bot = NoReplayMemory(greedy, name="forgetful", secret=secret)
    with running(bot):
        report = check_bot(bot.url, secret=secret, repeats=0)
    assert list(failures(report)) == ["refuses a replayed webhook-id"], report.render()


HOSTILE: list[tuple[Callable[[ActRequest], WireAction], str, str]] = [
    (card_not_held, "act: discard", "is not in the hand"),
    (wrong_phase, "act: draw", "discard is not allowed in the draw phase"),
    (
        discards_taken_card,
        "act: discard after taking the discard (restricted card)",
        "was just taken from the discard pile",
    ),
]


@pytest.mark.parametrize(("act", "check", "detail"), HOSTILE, ids=[h[0].__name__ for h in HOSTILE])
def test_hostile_bots_fail_with_the_illegal_answer_named(
    act: Callable[[ActRequest], WireAction], check: str, detail: str
) -> None:
    bot = sdk_bot(act, act.__name__)
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    assert not report.passed
    failed = failures(report)
    assert check in failed, report.render()
    assert failed[check].startswith("illegal answer ")
    assert detail in failed[check]
    assert report.render().endswith("RESULT: FAIL")


def test_misknocks_are_legal_answers_for_the_checker() -> None:
    bot = sdk_bot(misknocker, "misknocker")
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    assert report.passed, report.render()
    assert any("a misknock: legal, but penalised" in i.detail for i in report.items)


def test_a_bot_answering_500_fails_every_act() -> None:
    bot = RawBot("status_500")
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    failed = failures(report)
    assert len([n for n in failed if n.startswith("act: ")]) == POSITIONS
    assert all(d.startswith("status: HTTP 500") for n, d in failed.items() if n.startswith("act: "))


def test_a_wrong_protocol_version_fails_at_once() -> None:
    bot = RawBot("wrong_version")
    with running(bot):
        report = check_bot(bot.url, repeats=0)
    assert not report.passed
    (item,) = report.items
    assert "gin-arena/2" in item.detail


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "bot", "check", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_command_fails_a_hostile_bot_with_exit_status_1() -> None:
    bot = sdk_bot(discards_taken_card, "taker")
    with running(bot):
        done = _cli(bot.url, "--repeats", "0")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "RESULT: FAIL"
    fail = [line for line in lines if "[FAIL]" in line]
    assert any(
        "act: discard after taking the discard (restricted card): illegal answer discard" in line
        and "was just taken from the discard pile" in line
        for line in fail
    ), done.stdout


def test_the_command_passes_a_house_bot_with_exit_status_0() -> None:
    bot = house("strong")
    with running(bot):
        done = _cli(bot.url, "--repeats", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "RESULT: PASS"
