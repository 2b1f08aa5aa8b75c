"""SPRT tests through the real service and the real match job, with in-process players (SQLite
and PostgreSQL): pairs are duplicate, unrated and of the test; the state is recomputed from the
stored matches (so advancing twice, or after a lost advance, changes nothing); the test stops at
a bound or the cap and says so with ``test.finished``; cancelling stops it."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import pytest
from sqlalchemy import func, select

from arena.db.models import EventRow, MatchRow, RatingHistoryRow, SprtTestRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.measures.sprt import SprtParams, Verdict
from arena.playing.jobs import run_match_job
from arena.playing.players import HeuristicPlayer, Player, RandomPlayer
from arena.reading.embargo import redact_sprt_test
from arena.reading.queries.sprt_tests import sprt_test_detail
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot, set_status, update_bot
from arena.services.challenges import BotInactiveError
from arena.services.matches import Claim
from arena.services.sprt_tests import (
    TestStateError,
    VersionNotPlayableError,
    advance_running_tests,
    advance_test,
    cancel_test,
    create_test,
    pair_seed,
    recompute_state,
)
from arena.services.tournaments import advance_for_match
from arena.settings import Settings, load_settings
from arena.states import BotStatus, MatchStatus

SHORT = RuleSet(target=50, best_of=1)
SETTINGS = load_settings({}, lease_seconds=30)


class Queue:
    """An executor on this thread: submitted matches are played one by one (oldest first, or
    with ``newest_first`` the last submitted first, so later pairs are recorded before earlier
    ones), each followed by the hook the executors run after a record."""

    def __init__(self, db: Database, strong: set[int], *, newest_first: bool = False) -> None:
        self.db = db
        self.strong = strong
        self.queue: deque[int] = deque()
        self.submitted: list[int] = []
        self.recorded: list[int] = []
        self.advance = True
        self.newest_first = newest_first

    def submit(self, ids: Iterable[int]) -> None:
        new = list(ids)
        self.submitted += new
        self.queue.extend(new)

    def players(self, claim: Claim, _settings: Settings) -> list[Player]:
        """Heuristic for a bot in ``strong``, random otherwise."""
        return [
            HeuristicPlayer(name=b.name)
            if b.id in self.strong
            else RandomPlayer(seed=claim.spec.seed + seat, name=b.name)
            for seat, b in enumerate(claim.spec.bots)
        ]

    def after(self, match_id: int) -> None:
        self.recorded.append(match_id)
        if self.advance:
            advance_for_match(self.db, match_id, self.submit)

    def drain(self, limit: int = 2000) -> None:
        for _ in range(limit):
            if not self.queue:
                return
            run_match_job(
                self.db,
                SETTINGS,
                self.queue.pop() if self.newest_first else self.queue.popleft(),
                "test",
                make_players=self.players,
                after_record=self.after,
            )
        raise AssertionError("the test never stopped")


def _bots(db: Database, *names: str) -> list[int]:
    return [register_bot(db, name=n, owner="o", url=f"http://{n}.example").bot_id for n in names]


def _start(db: Database, queue: Queue, a: int, b: int, **kw: object) -> int:
    fields: dict[str, object] = {
        "params": SprtParams(0.0, 100.0),
        "max_pairs": 200,
        "concurrency": 2,
        "rules": SHORT,
        "created_by": "organiser",
    }
    fields.update(kw)
    return create_test(
        db,
        candidate_id=a,
        baseline_id=b,
        submit=queue.submit,
        **fields,  # type: ignore[arg-type]
    )


def test_a_stronger_candidate_is_accepted_as_h1_over_unrated_duplicate_pairs(
    db: Database,
) -> None:
    strong, weak = _bots(db, "strong", "weak")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak)
    assert len(queue.submitted) == 4  # two pairs in flight
    queue.drain()
    report = sprt_test_detail(db, test_id)
    assert report["status"] == "finished"
    assert report["verdict"] == "h1"
    assert report["llr"] >= report["bounds"]["upper"]
    assert len(report["llr_history"]) == report["pairs"] == sum(report["pentanomial"])
    assert report["elo"]["estimate"] > 100 and report["los"] > 0.99
    with db.session() as s:
        rows = s.execute(
            select(MatchRow.match_key, MatchRow.seed, MatchRow.bot_a_id, MatchRow.rated).where(
                MatchRow.test_id == test_id
            )
        ).all()
        assert not any(rated for *_, rated in rows)
        assert s.scalar(select(func.count()).select_from(RatingHistoryRow)) == 0
        legs = {key: (seed, a) for key, seed, a, _ in rows}
        for key, (seed, a) in legs.items():
            pair, _, leg = str(key).partition(":")
            other = legs[f"{pair}:{3 - int(leg)}"]
            assert other[0] == seed  # same deals
            assert other[1] != a  # seats swapped
            assert a == (strong if leg == "1" else weak)
        events = s.scalars(select(EventRow).where(EventRow.type == "test.finished")).all()
        assert [e.data["verdict"] for e in events] == ["h1"]
        assert events[0].data["test"] == test_id
        # The seed is revealed with the verdict, as the report reveals it once the test is over.
        seed = s.scalar(select(SprtTestRow.seed).where(SprtTestRow.id == test_id))
        assert seed is not None and events[0].data["seed"] == seed


def test_a_bot_against_itself_is_accepted_as_h0(db: Database) -> None:
    (bot,) = _bots(db, "mirror")
    queue = Queue(db, {bot})
    test_id = _start(db, queue, bot, bot)
    queue.drain()
    report = sprt_test_detail(db, test_id)
    assert report["verdict"] == "h0"
    assert report["llr"] <= report["bounds"]["lower"]
    # The same deterministic player in both seats: every pair splits.
    assert report["pentanomial"][2] == report["pairs"]


def test_the_cap_ends_an_undecided_test_and_cancels_what_is_pending(db: Database) -> None:
    strong, weak = _bots(db, "s", "w")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak, max_pairs=3, concurrency=2)
    queue.drain()
    report = sprt_test_detail(db, test_id)
    assert report["verdict"] == "capped"
    assert report["pairs"] == 3
    assert report["scheduled_pairs"] == 3


def test_advancing_twice_or_from_the_sweep_recomputes_the_same_state(db: Database) -> None:
    strong, weak = _bots(db, "a1", "b1")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak, concurrency=3)
    queue.advance = False  # the worker "dies" after each record: no advance
    queue.drain()
    before = sprt_test_detail(db, test_id)
    assert before["pairs"] == 0 and before["scheduled_pairs"] == 3  # nobody advanced
    scheduled = advance_running_tests(db, queue.submit)  # the sweep makes it up
    first = sprt_test_detail(db, test_id)
    assert first["pairs"] == 3 and len(scheduled) == 6
    again = advance_test(db, test_id, queue.submit)
    assert again == []  # the flight is full: nothing scheduled twice
    second = sprt_test_detail(db, test_id)
    for key in ("pairs", "pentanomial", "llr", "llr_history", "scheduled_pairs"):
        assert first[key] == second[key]


def test_cancelling_stops_the_test_and_its_pending_matches(db: Database) -> None:
    strong, weak = _bots(db, "c1", "c2")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak)
    cancelled = cancel_test(db, test_id)
    assert sorted(cancelled) == sorted(queue.submitted)
    queue.drain()
    report = sprt_test_detail(db, test_id)
    assert report["verdict"] == "cancelled" and report["reason"] == "cancelled by request"
    assert {m["status"] for m in report["matches"]} == {"cancelled"}
    with pytest.raises(TestStateError, match="already over"):
        cancel_test(db, test_id)
    with pytest.raises(NotFoundError):
        cancel_test(db, 999)


def test_a_side_that_changes_version_cancels_the_test(db: Database) -> None:
    strong, weak = _bots(db, "v1", "v2")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak)
    update_bot(db, strong, url="http://v1-next.example")  # a new version of the candidate
    queue.drain()
    report = sprt_test_detail(db, test_id)
    assert report["verdict"] == "cancelled"
    assert "changed version" in report["reason"]


def test_only_the_current_version_of_an_active_bot_can_be_tested(db: Database) -> None:
    strong, weak = _bots(db, "p1", "p2")
    update_bot(db, strong, url="http://p1-next.example")  # version 2 is current
    queue = Queue(db, {strong})
    with pytest.raises(VersionNotPlayableError, match="only the current version plays"):
        _start(db, queue, strong, weak, candidate_version=1)
    test_id = _start(db, queue, strong, weak, candidate_version=2)
    assert sprt_test_detail(db, test_id)["candidate"]["version"]["number"] == 2
    set_status(db, weak, BotStatus.INACTIVE)
    with pytest.raises(BotInactiveError):
        _start(db, queue, strong, weak)
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(SprtTestRow)) == 1


def test_a_side_that_stops_being_active_cancels_the_test(db: Database) -> None:
    strong, weak = _bots(db, "i1", "i2")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak)
    set_status(db, weak, BotStatus.SUSPENDED)
    queue.drain()
    report = sprt_test_detail(db, test_id)
    assert report["verdict"] == "cancelled"
    assert "became suspended" in report["reason"]
    assert MatchStatus.CANCELLED.value in {m["status"] for m in report["matches"]}


def _keys(db: Database, test_id: int) -> dict[int, str]:
    with db.session() as s:
        rows = s.execute(
            select(MatchRow.id, MatchRow.match_key).where(MatchRow.test_id == test_id)
        ).all()
    return {match_id: str(key) for match_id, key in rows}


def test_the_same_seed_gives_the_same_llr_path_and_verdict_whatever_order_pairs_finish_in(
    db: Database,
) -> None:
    """Deterministic players, one seed: played oldest first with one pair in flight, and newest
    first with three (pair 2 recorded before pair 1, pair 6 before 4...), the two tests count
    the same pairs in the same order and stop at the same pair with the same verdict."""
    strong, weak = _bots(db, "det-strong", "det-weak")
    reports = []
    orders = []
    for newest_first, concurrency in ((False, 1), (True, 3)):
        queue = Queue(db, {strong}, newest_first=newest_first)
        test_id = _start(db, queue, strong, weak, seed=20261201, concurrency=concurrency)
        queue.drain()
        reports.append(sprt_test_detail(db, test_id))
        keys = _keys(db, test_id)
        orders.append([keys[m] for m in queue.recorded])
        with db.session() as s:
            seeds = dict(
                s.execute(
                    select(MatchRow.match_key, MatchRow.seed).where(MatchRow.test_id == test_id)
                ).all()
            )
        for key, seed in seeds.items():
            assert seed == pair_seed(20261201, int(str(key).partition(":")[0]))
    in_order, reversed_ = orders
    assert in_order.index("1:1") < in_order.index("2:1")
    assert reversed_.index("2:1") < reversed_.index("1:1")  # pair 2 over before pair 1
    first, second = reports
    assert first["verdict"] == second["verdict"] == "h1"
    for key in ("pairs", "pentanomial", "llr", "llr_history", "elo", "seed"):
        assert first[key] == second[key], key
    assert first["seed"] == 20261201


def test_a_pair_over_before_an_earlier_one_waits_to_be_counted() -> None:
    params = SprtParams(0.0, 100.0)
    over, playing = MatchStatus.FINISHED, MatchStatus.RUNNING
    waiting = recompute_state(
        [("1:1", over, "a"), ("1:2", playing, None), ("2:1", over, "a"), ("2:2", over, "b")],
        params,
        100,
    )
    assert waiting.counted == () and waiting.path == () and waiting.in_flight == 2
    legs: list[tuple[str, MatchStatus, str | None]] = [
        ("1:1", over, "a"),
        ("1:2", over, "b"),
        ("2:1", over, "a"),
        ("2:2", over, "a"),
    ]
    legs.append(("3:1", MatchStatus.CANCELLED, None))  # a cancelled leg: skipped
    legs.append(("3:2", over, "a"))
    legs += [("4:1", over, "b"), ("4:2", over, "a")]
    states = [recompute_state(order, params, 100) for order in (legs, legs[::-1])]
    assert states[0] == states[1]
    assert [p.pair for p in states[0].counted] == [1, 2, 4]
    assert [p.bucket for p in states[0].counted] == [4, 2, 0]  # leg 2's "a" is the baseline
    assert states[0].dropped == 1 and states[0].in_flight == 0
    capped = recompute_state(legs, params, 2)
    assert capped.verdict is Verdict.CAPPED and [p.pair for p in capped.counted] == [1, 2]
    assert capped.in_flight == 1  # pair 4, past the cap: not counted


def test_a_test_without_a_seed_draws_one_and_keeps_it_secret_while_it_runs(db: Database) -> None:
    strong, weak = _bots(db, "seedless-a", "seedless-b")
    queue = Queue(db, {strong})
    test_id = _start(db, queue, strong, weak)
    report = sprt_test_detail(db, test_id)
    seed = report["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**62
    assert redact_sprt_test(dict(report))["seed"] is None  # running: its future deals
    with db.session() as s:
        seeds = set(s.scalars(select(MatchRow.seed).where(MatchRow.test_id == test_id)))
    assert seeds == {pair_seed(seed, 1), pair_seed(seed, 2)}
    queue.drain()
    assert redact_sprt_test(sprt_test_detail(db, test_id))["seed"] == seed
