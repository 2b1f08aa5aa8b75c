"""`gin-arena rerun`: a stored match played again with your bot in one seat, and one stored
request sent again (``--step``), from the embedded database and from a live API server, with
real HTTP bots on loopback (SQLite and PostgreSQL).

A bot identical to the stored one never diverges and ends with the same result; a changed bot
diverges exactly at its first different answer, both answers shown; unknown matches, embargoed
replays, steps that do not exist, unreachable bots and a bot that wants signatures are one line.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
from live_api import waitress_serving
from loopback import free_port

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES
from arena.cli import main
from arena.db.session import Database
from arena.playing.jobs import run_match_job
from arena.playing.rerun import stored_steps
from arena.protocol.signing import generate_secret
from arena.protocol.wire import ActRequest, WireAction
from arena.reading.replay import load_record
from arena.reading.seat_replay import seat_replay
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.settings import Settings

RULES = RuleSet(target=100, best_of=3)
SEED = 7


class ChangedBot:
    """The greedy house strategy, except that its ``change_on``-th ``/act`` (from 1) answers
    another legal action; keeps every request body it was sent."""

    def __init__(self, change_on: int | None = None, secret: str | None = None) -> None:
        self.change_on = change_on
        self.greedy = STRATEGIES["greedy"](0)
        self.bodies: list[dict[str, Any]] = []
        self.changed: WireAction | None = None
        self.lock = threading.Lock()
        self.server = BotServer(self._act, name="changed", port=0, secret=secret).start()

    def _act(self, obs: ActRequest) -> WireAction:
        with self.lock:
            self.bodies.append(msgspec.to_builtins(obs))
            n = len(self.bodies)
        usual = self.greedy(obs)
        if n != self.change_on:
            return usual
        self.changed = next(
            a for a in obs.legal_actions if (a.action, a.card) != (usual.action, usual.card)
        )
        return self.changed

    def reset(self) -> None:
        """Count from 1 again (for another rerun)."""
        with self.lock:
            self.bodies, self.changed = [], None

    @property
    def url(self) -> str:
        return self.server.url

    def stop(self) -> None:
        self.server.stop()


@dataclass
class Stored:
    db: Database
    match_id: int
    greedy: BotServer
    strong: BotServer
    bots: tuple[int, int]


@pytest.fixture
def stored(db: Database) -> Iterator[Stored]:
    """A finished match of two real HTTP house bots (greedy in seat a, strong in b), played
    as a worker plays it and stored."""
    greedy = house_bot("greedy", name="alice-bot").start()
    strong = house_bot("strong", name="bob-bot").start()
    try:
        a = register_bot(db, name="alice", owner="a@example.org", url=greedy.url).bot_id
        b = register_bot(db, name="bob", owner="b@example.org", url=strong.url).bot_id
        with db.session() as session:
            match_id = schedule_match(session, a, b, rules=RULES, seed=SEED).id
        settings = Settings(database_url=db.url, allow_loopback=True)
        run_match_job(db, settings, match_id, "test")
        yield Stored(db, match_id, greedy, strong, (a, b))
    finally:
        greedy.stop()
        strong.stop()


def rerun(
    capsys: pytest.CaptureFixture[str], *args: str, db: Database | None = None
) -> tuple[int, str, str]:
    argv = ["rerun", *args, "--wait", "0"]
    if db is not None:
        argv += ["--database", db.url]
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def rerun_json(capsys: pytest.CaptureFixture[str], *args: str, db: Database) -> Any:
    status, out, err = rerun(capsys, *args, "--json", db=db)
    assert status == 0, err
    return json.loads(out)


def totals(summary: dict[str, Any]) -> list[Any]:
    return [(g["winner"], g["totals"]) for g in summary["games"]]


# --- the whole match --------------------------------------------------------------------------


def test_the_same_bot_never_diverges_and_ends_with_the_stored_result(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    record = load_record(stored.db, stored.match_id)
    mine = [s for s in stored_steps(record) if s.entry.seat == 0]
    same = house_bot("greedy", name="my-greedy").start()
    try:
        report = rerun_json(
            capsys, str(stored.match_id), "--seat", "a", "--bot", same.url, db=stored.db
        )
    finally:
        same.stop()
    assert report["divergence"] is None
    assert report["agreed"] == len(mine) > 20
    assert report["same_result"] is True
    assert report["rerun"]["winner"] == report["stored"]["winner"] == record.winner
    assert totals(report["rerun"]) == totals(report["stored"])
    # Every deal was played on the stored deck with the stored actions.
    rerun_deals = [h for g in report["record"]["games"] for h in g["hands"]]
    stored_deals = [h for g in record.to_dict()["games"] for h in g["hands"]]
    assert [h["deck"] for h in rerun_deals] == [h["deck"] for h in stored_deals]
    assert [[e[:2] for e in h["actions"]] for h in rerun_deals] == [
        [e[:2] for e in h["actions"]] for h in stored_deals
    ]


def test_your_bot_gets_the_stored_requests_up_to_the_divergence(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    record = load_record(stored.db, stored.match_id)
    view = seat_replay(record, "b")
    copy = ChangedBot()  # greedy where strong played: the requests up to the divergence
    try:
        report = rerun_json(
            capsys, str(stored.match_id), "--seat", "b", "--bot", copy.url, db=stored.db
        )
    finally:
        copy.stop()
    agreed = report["agreed"]
    sent = copy.bodies[: agreed + 1]
    wanted = [s["request"] for s in view["steps"][: agreed + 1]]
    for body in (*sent, *wanted):
        body.pop("previous_rtt_ms")
    assert sent == wanted


def test_a_changed_bot_diverges_at_its_first_different_answer_and_plays_on(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    record = load_record(stored.db, stored.match_id)
    mine = [s for s in stored_steps(record) if s.entry.seat == 0]
    changed = ChangedBot(change_on=12)
    try:
        report = rerun_json(
            capsys, str(stored.match_id), "--seat", "a", "--bot", changed.url, db=stored.db
        )
        changed.reset()
        status, out, err = rerun(
            capsys, str(stored.match_id), "--seat", "a", "--bot", changed.url, db=stored.db
        )
        assert status == 0, err
    finally:
        changed.stop()
    expected = mine[11]  # the 12th answer of seat a
    where = f"{expected.address.game}:{expected.address.deal}:{expected.address.step}"
    divergence = report["divergence"]
    assert divergence["step"] == where and divergence["seat"] == "a"
    assert report["agreed"] == 11
    assert divergence["stored"]["action"] == expected.entry.action.to_dict()
    assert changed.changed is not None
    assert divergence["yours"]["action"] == msgspec.to_builtins(changed.changed)
    assert divergence["request"]["hand"] == changed.bodies[11]["hand"]
    # The text shows the step, the position and both answers, then the results side by side.
    assert f"diverged at step {where}" in out
    assert f"hand: {' '.join(changed.bodies[11]['hand'])}" in out
    stored_action = json.dumps(expected.entry.action.to_dict(), separators=(",", ":"))
    assert f"stored answer: {stored_action}" in out
    assert "your answer:   " in out and "house:strong (the default" in out
    assert "result stored: " in out and "result rerun:  " in out
    # Played on to the end of a match on the same deals.
    assert report["rerun"]["winner"] in ("a", "b") and report["rerun"]["forfeit"] is None
    first = report["record"]["games"][0]["hands"][0]["deck"]
    assert first == record.games[0].hands[0].deck


# --- one step ---------------------------------------------------------------------------------


def test_step_sends_the_exact_stored_request_and_shows_both_answers(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    record = load_record(stored.db, stored.match_id)
    steps = [s for s in stored_steps(record) if s.entry.seat == 1]
    target = steps[7]
    where = f"{target.address.game}:{target.address.deal}:{target.address.step}"
    view = seat_replay(record, "b")
    same = ChangedBot()  # greedy answers where strong answered: maybe not the same
    strong = house_bot("strong", name="my-strong").start()
    try:
        report = rerun_json(
            capsys, str(stored.match_id), "--step", where, "--bot", strong.url, db=stored.db
        )
        rerun_json(capsys, str(stored.match_id), "--step", where, "--bot", same.url, db=stored.db)
        status, out, err = rerun(
            capsys, str(stored.match_id), "--step", where, "--bot", strong.url, db=stored.db
        )
    finally:
        same.stop()
        strong.stop()
    assert status == 0, err
    assert report["seat"] == "b" and report["same"] is True
    assert report["request"] == view["steps"][7]["request"]
    assert same.bodies == [view["steps"][7]["request"]]  # byte for byte what was stored
    assert report["stored"]["action"] == report["yours"]["action"] == target.entry.action.to_dict()
    assert f"step {where} (seat b" in out and "the same answer" in out


def test_a_step_that_does_not_exist_is_one_line(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    for step, named in (("9:0:0", "there is no game 9"), ("0:0:999", "has no step 999")):
        status, _, err = rerun(
            capsys, str(stored.match_id), "--step", step, "--bot", stored.greedy.url, db=stored.db
        )
        assert status == 2 and named in err and len(err.strip().splitlines()) == 1, err
    status, _, err = rerun(
        capsys, str(stored.match_id), "--step", "x:1", "--bot", stored.greedy.url, db=stored.db
    )
    assert status == 2 and "GAME:DEAL:STEP" in err
    first = stored_steps(load_record(stored.db, stored.match_id))[0]
    other = "ba"[first.entry.seat]
    status, _, err = rerun(
        capsys, str(stored.match_id), "--step", "0:0:0", "--seat", other, "--bot",
        stored.greedy.url, db=stored.db,
    )  # fmt: skip
    assert status == 2 and f"is seat {'ab'[first.entry.seat]}'s, not seat {other}'s" in err


# --- errors -----------------------------------------------------------------------------------


def test_unknown_matches_and_unreachable_bots_are_one_line(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = rerun(capsys, "999", "--seat", "a", "--bot", stored.greedy.url, db=stored.db)
    assert status == 2 and err.strip() == "gin-arena: error: no match 999"
    dead = f"http://127.0.0.1:{free_port()}"
    status, _, err = rerun(capsys, str(stored.match_id), "--seat", "a", "--bot", dead, db=stored.db)
    assert status == 2 and dead in err and "no bot answers" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    status, _, err = rerun(
        capsys,
        str(stored.match_id),
        "--seat",
        "a",
        "--bot",
        stored.greedy.url,
        "--opponent",
        "house:nobody",
        db=stored.db,
    )
    assert status == 2 and "no such house bot" in err


def test_an_embargoed_replay_is_refused(stored: Stored, capsys: pytest.CaptureFixture[str]) -> None:
    """The other leg of a duplicate pair (the same seed) is still to play: the deals stay secret."""
    with stored.db.session() as session:
        twin = schedule_match(session, stored.bots[1], stored.bots[0], rules=RULES, seed=SEED).id
    status, _, err = rerun(
        capsys, str(stored.match_id), "--seat", "a", "--bot", stored.greedy.url, db=stored.db
    )
    assert status == 2 and "withheld" in err and len(err.strip().splitlines()) == 1
    url = stored.greedy.url
    status, _, err = rerun(capsys, str(twin), "--seat", "a", "--bot", url, db=stored.db)
    assert status == 2 and f"match {twin} is pending: only a finished match" in err


def test_a_bot_that_wants_signatures_gets_signed_requests_with_secret(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = generate_secret()
    signed = house_bot("greedy", name="signed-greedy", secret=secret).start()
    try:
        status, _, err = rerun(
            capsys, str(stored.match_id), "--seat", "a", "--bot", signed.url, db=stored.db
        )
        assert status == 2 and "--secret" in err and len(err.strip().splitlines()) == 1, err
        report = rerun_json(
            capsys,
            str(stored.match_id),
            "--seat",
            "a",
            "--bot",
            signed.url,
            "--secret",
            secret,
            db=stored.db,
        )
    finally:
        signed.stop()
    assert report["divergence"] is None and report["same_result"] is True


# --- a remote arena -----------------------------------------------------------------------------


def test_rerun_and_step_through_a_live_api_server(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    record = load_record(stored.db, stored.match_id)
    target = next(s for s in stored_steps(record) if s.entry.seat == 0 and s.address.step > 3)
    where = f"{target.address.game}:{target.address.deal}:{target.address.step}"
    changed = ChangedBot(change_on=5)
    with waitress_serving(stored.db.url) as api:
        try:
            status, out, err = rerun(
                capsys,
                str(stored.match_id),
                "--seat",
                "a",
                "--bot",
                changed.url,
                "--api",
                f"{api}/api/v1/",
                "--json",
            )
            assert status == 0, err
            full = json.loads(out)
            status, out, err = rerun(
                capsys, str(stored.match_id), "--step", where, "--bot", stored.greedy.url,
                "--api", api, "--json",
            )  # fmt: skip
            assert status == 0, err
            step = json.loads(out)
            status, _, err = rerun(
                capsys, "999", "--seat", "a", "--bot", stored.greedy.url, "--api", api
            )
            assert status == 2 and "no match 999" in err
        finally:
            changed.stop()
    mine = [s for s in stored_steps(record) if s.entry.seat == 0]
    assert full["divergence"]["step"] == str(mine[4].address)
    assert step["same"] is True and step["seat"] == "a"
    assert step["request"] == seat_replay(record, "a")["steps"][mine.index(target)]["request"]


def test_an_unreachable_api_is_one_line(stored: Stored, capsys: pytest.CaptureFixture[str]) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    status, _, err = rerun(capsys, "1", "--seat", "a", "--bot", stored.greedy.url, "--api", dead)
    assert status == 2 and "cannot reach the arena" in err and len(err.strip().splitlines()) == 1


def test_an_embargoed_replay_is_refused_through_the_api(
    stored: Stored, capsys: pytest.CaptureFixture[str]
) -> None:
    with stored.db.session() as session:
        schedule_match(session, stored.bots[1], stored.bots[0], rules=RULES, seed=SEED)
    with waitress_serving(stored.db.url) as api:
        status, _, err = rerun(
            capsys, str(stored.match_id), "--seat", "a", "--bot", stored.greedy.url, "--api", api
        )
    assert status == 2 and "HTTP 409" in err and "withheld" in err
