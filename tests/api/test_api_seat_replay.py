"""The per-seat replay is exactly what each bot was sent: the requests rebuilt from the stored
record equal, byte for byte, the bodies real HTTP bots received during the match (faults,
forfeits and misknock responses included)."""

from __future__ import annotations

import threading
from typing import Any

import msgspec
import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api

from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES
from arena.playing.jobs import run_match_job
from arena.playing.match import MatchRunner
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    RandomPlayer,
    Turn,
)
from arena.playing.stored import parse_record
from arena.protocol.wire import ActRequest, act_request
from arena.reading.seat_replay import SeatReplayError, seat_replay
from arena.rules.actions import Action
from arena.rules.ruleset import MisknockPolicy, RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.settings import Settings


class Recorder:
    """Wraps a player; keeps the ``/act`` body of every turn it was given."""

    def __init__(self, inner: Any, fault_every: int = 0) -> None:
        self.inner, self.name, self.sent, self.fault_every = inner, inner.name, [], fault_every

    def start(self, context: MatchContext) -> Fault | None:
        self.rules = context.rules.to_dict()
        return self.inner.start(context)

    def act(self, turn: Turn) -> Action | Fault:
        self.sent.append(msgspec.to_builtins(act_request(turn, self.rules)))
        if self.fault_every and len(self.sent) % self.fault_every == 0:
            return Fault(FaultKind.BAD_JSON, "not JSON")
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        self.inner.end(summary)


@pytest.mark.parametrize(
    ("rules", "fault_every"),
    [
        (RuleSet(target=100, best_of=3), 0),
        (RuleSet(target=100, best_of=3), 9),  # faults and, after three, a forfeit
        (RuleSet(target=100, misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT), 0),
        (RuleSet.oklahoma(target=60), 0),
        (RuleSet(target=60, best_of=3, match_scoring="hollywood"), 0),
        (RuleSet(target=60, best_of=3, match_scoring="hollywood"), 9),
    ],
    ids=[
        "plain",
        "faults-and-forfeit",
        "misknock-response",
        "oklahoma",
        "hollywood",
        "hollywood-forfeit",
    ],
)
def test_rebuilt_requests_equal_the_sent_ones(rules: RuleSet, fault_every: int):
    for seed in range(3):
        a = Recorder(HeuristicPlayer(name="h"))
        b = Recorder(RandomPlayer(seed=seed, name="r"), fault_every)
        record = MatchRunner([a, b], rules, seed, match_id=f"m{seed}").run().to_stored()
        for seat, player in (("a", a), ("b", b)):
            view = seat_replay(record, seat)
            assert [s["request"] for s in view["steps"]] == player.sent
            assert view["start"]["opponent"] == ("r" if seat == "a" else "h")


def test_a_tampered_record_is_refused():
    record = (
        MatchRunner([HeuristicPlayer(), RandomPlayer()], RuleSet(target=50, best_of=1), 1)
        .run()
        .to_dict()
    )
    record["games"][0]["hands"][0]["actions"] = record["games"][0]["hands"][0]["actions"][:3]
    with pytest.raises(SeatReplayError):
        seat_replay(parse_record(record), "a")


def recording_bot(kind: str, name: str) -> tuple[BotServer, list[dict[str, Any]]]:
    strategy = STRATEGIES[kind](name)
    received: list[dict[str, Any]] = []
    lock = threading.Lock()

    def act(obs: ActRequest) -> Any:
        with lock:
            received.append(msgspec.to_builtins(obs))
        return strategy(obs)

    return BotServer(act, name=name, port=0).start(), received


def play_through_the_job(api: Api, bots: dict[str, BotServer], rules: RuleSet, seed: int) -> int:
    """Register the bots (by name: seat a, then b), then play one match between them the way a
    worker does (:func:`arena.playing.jobs.run_match_job`); the match's id."""
    ids = [register_bot(api.db, name=n, owner="o", url=bot.url).bot_id for n, bot in bots.items()]
    with api.db.session() as session:
        match_id = schedule_match(session, ids[0], ids[1], rules=rules, seed=seed).id
    run_match_job(api.db, Settings(database_url=api.db.url, allow_loopback=True), match_id, "test")
    return match_id


def test_seat_view_through_the_api_equals_what_real_http_bots_received(api: Api):
    a, got_a = recording_bot("greedy", "rec-a")
    b, got_b = recording_bot("strong", "rec-b")
    try:
        bots = {"rec-a": a, "rec-b": b}
        match_id = play_through_the_job(api, bots, RuleSet(target=100, best_of=3), seed=3)
        for seat, got in (("a", got_a), ("b", got_b)):
            view = api.get(f"/api/v1/matches/{match_id}/replay?seat={seat}").json
            assert [s["request"] for s in view["steps"]] == got
    finally:
        a.stop()
        b.stop()


def test_the_seat_view_keeps_each_answer_exactly_as_the_bot_sent_it(api: Api) -> None:
    """Issue 10, 2.5: answers are kept raw beside the parsed action (``10H`` stays ``10H``, melds
    keep the bot's order), stored with the match and served by the per-seat replay."""
    strategy = STRATEGIES["strong"]("raw")
    sent: list[bytes] = []
    lock = threading.Lock()

    def act(obs: ActRequest) -> Any:
        answer = msgspec.to_builtins(strategy(obs))
        if answer.get("card"):  # "Th" -> "10H", the other spellings the protocol accepts
            answer["card"] = answer["card"].upper().replace("T", "10")
        if answer.get("melds"):
            answer["melds"] = [list(reversed(m)) for m in reversed(answer["melds"])]
        answer["note"] = "ünïcode, kept"
        with lock:
            sent.append(msgspec.json.encode(answer))
        return answer

    raw_bot = BotServer(act, name="raw", port=0).start()
    other, _ = recording_bot("greedy", "plain")
    try:
        bots = {"raw": raw_bot, "plain": other}
        match_id = play_through_the_job(api, bots, RuleSet(target=100, best_of=1), seed=4)
        steps = api.get(f"/api/v1/matches/{match_id}/replay?seat=a").json["steps"]
    finally:
        raw_bot.stop()
        other.stop()
    assert [s["answer_raw"].encode() for s in steps] == sent
    assert {s["answer_raw_encoding"] for s in steps} == {"utf-8"}
    assert any("10" in s["answer_raw"] for s in steps)
    for step in steps:  # the parsed action beside it is the arena's canonical form
        assert step["answer"] == step["applied"] and "note" not in step["answer"]
