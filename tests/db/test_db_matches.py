"""Matches as durable jobs: claim with a lease, fence older attempts, record exactly once in one
transaction, sweep stuck matches, give up after max_attempts (SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from db_support import (
    SHORT,
    add_bots,
    add_match,
    count,
    counts,
    heuristic_v_faulty,
    heuristic_v_random,
    match_row,
    stats_of,
)
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError

from arena.db.models import (
    BotRow,
    GameRow,
    HandRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
    utcnow,
)
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.match import MatchRunner
from arena.playing.players import Player
from arena.playing.records import MatchRecord
from arena.playing.stored import record_digest
from arena.reading.replay import load_record, verify_record
from arena.rules.ruleset import RuleSet
from arena.services.matches import (
    Claim,
    claim_match,
    fail_match,
    renew_lease,
    schedule_match,
    sweep_stuck,
)
from arena.services.recording import record_match_result
from arena.settings import Settings, load_settings
from arena.states import MatchStatus

LEASE = 60


def claim(
    db: Database, match_id: int, worker: str = "w1", *, max_attempts: int = 5
) -> Claim | None:
    return claim_match(db, match_id, worker, lease_seconds=LEASE, max_attempts=max_attempts)


def expire_lease(db: Database, match_id: int) -> None:
    """What the clock does to a worker that died: its lease runs out."""
    with db.session() as s:
        s.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(lease_expires_at=utcnow() - timedelta(seconds=1))
        )


def play(c: Claim, make: Any = heuristic_v_random) -> MatchRecord:
    players: list[Player] = make(c, load_settings({}))
    return MatchRunner(players, c.spec.rules, c.spec.seed, match_id=f"m{c.match_id}").run()


def record(db: Database, c: Claim, rec: MatchRecord) -> bool:
    return record_match_result(db, c, rec, duration_ms=5, bot_time_ms=3, elo_k=24.0)


@pytest.fixture
def pair(db: Database) -> tuple[int, int]:
    a, b = add_bots(db, 2)
    return a, b


def test_schedule_match_is_pending_and_refuses_self_play(
    db: Database, pair: tuple[int, int]
) -> None:
    match_id = add_match(db, *pair, seed=99)
    m = match_row(db, match_id)
    assert (m.status, m.attempt, m.seed, m.lease_owner) == (MatchStatus.PENDING, 0, 99, None)
    assert m.rules == SHORT.to_dict()
    with pytest.raises(ValueError, match="itself"), db.session() as s:
        schedule_match(s, pair[0], pair[0], rules=SHORT, seed=1)


def test_claim_while_the_lease_is_live_gets_none(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair)
    first = claim(db, match_id, "w1")
    assert first is not None and first.attempt == 1
    assert first.spec.bots[0].id == pair[0] and first.spec.rules == SHORT
    assert claim(db, match_id, "w2") is None
    m = match_row(db, match_id)
    assert (m.status, m.attempt, m.lease_owner) == (MatchStatus.RUNNING, 1, "w1")


def test_an_expired_lease_is_claimed_again_with_the_next_attempt(
    db: Database, pair: tuple[int, int]
) -> None:
    match_id = add_match(db, *pair)
    first = claim(db, match_id, "w1")
    assert first is not None
    expire_lease(db, match_id)
    second = claim(db, match_id, "w2")
    assert second is not None and second.attempt == 2
    # The first attempt is fenced out: it can no longer renew; the second can.
    assert not renew_lease(db, first, lease_seconds=LEASE)
    assert renew_lease(db, second, lease_seconds=LEASE)
    assert match_row(db, match_id).lease_owner == "w2"


def test_renew_lease_moves_the_deadline(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair)
    c = claim_match(db, match_id, "w1", lease_seconds=1, max_attempts=5)
    assert c is not None
    before = match_row(db, match_id).lease_expires_at
    assert renew_lease(db, c, lease_seconds=600)
    after = match_row(db, match_id).lease_expires_at
    assert before is not None and after is not None
    assert after - before > timedelta(seconds=500)


def test_a_fenced_attempt_records_nothing(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair)
    old = claim(db, match_id, "slow")
    assert old is not None
    expire_lease(db, match_id)
    new = claim(db, match_id, "fast")
    assert new is not None
    rec = play(old)
    stats_before = [stats_of(db, b) for b in pair]
    assert not record(db, old, rec)
    assert counts(db, match_id) == {"results": 0, "games": 0, "hands": 0, "rating_history": 0}
    assert [stats_of(db, b) for b in pair] == stats_before
    m = match_row(db, match_id)
    assert (m.status, m.attempt, m.winner) == (MatchStatus.RUNNING, 2, None)
    # The live attempt records; then nobody can record again, not even itself.
    assert record(db, new, play(new))
    assert not record(db, new, rec)
    assert not record(db, old, rec)
    assert counts(db, match_id)["results"] == 1
    assert stats_of(db, pair[0])["matches"] == 1


def test_recording_writes_everything_in_one_transaction(
    db: Database, pair: tuple[int, int]
) -> None:
    match_id = add_match(db, *pair)
    c = claim(db, match_id)
    assert c is not None
    rec = play(c)
    data = rec.to_dict()
    assert record(db, c, rec)

    m = match_row(db, match_id)
    assert m.status is MatchStatus.FINISHED and m.lease_owner is None
    assert m.winner == data["winner"]
    assert (m.games_won_a, m.games_won_b) == (data["games_won"]["a"], data["games_won"]["b"])
    assert (m.duration_ms, m.bot_time_ms) == (5, 3)
    hands = [h for g in data["games"] for h in g["hands"]]
    assert counts(db, match_id) == {
        "results": 1,
        "games": len(data["games"]),
        "hands": len(hands),
        "rating_history": 2,
    }
    with db.session() as s:
        result = s.get_one(MatchResultRow, match_id)
        assert result.attempt == 1
        assert result.digest == record_digest(hands)
        assert "hands" not in result.summary["games"][0]
        logs = [h.log for h in s.query(HandRow).order_by(HandRow.game_id, HandRow.index)]
        assert logs == hands
        history = {h.bot_id: h for h in s.query(RatingHistoryRow)}
        elo = {b.id: b.elo for b in s.query(BotRow)}
    # Elo: both bots moved once, by opposite amounts, and the winner went up.
    a, b = pair
    assert history[a].before == history[b].before == 1500.0
    assert history[a].after + history[b].after == pytest.approx(3000.0)
    assert elo == {a: history[a].after, b: history[b].after}
    winner, loser = (a, b) if data["winner"] == "a" else (b, a)
    assert elo[winner] > 1500.0 > elo[loser]
    # Statistics: once per match, from both seats' point of view.
    sa, sb = stats_of(db, a), stats_of(db, b)
    assert sa["matches"] == sb["matches"] == 1
    assert sa["wins"] + sb["wins"] == 1 and sa["losses"] + sb["losses"] == 1
    assert sa["games_won"] == sb["games_lost"] == data["games_won"]["a"]
    assert sa["hands_played"] == sb["hands_played"] == len(hands)
    assert sa["hands_won"] + sb["hands_won"] == sum(1 for h in hands if h["winner"])
    assert sa["calls"] == len(rec.latencies[0]) and sb["calls"] == len(rec.latencies[1])
    assert sum(sa["latency_histogram"]) == sa["calls"]
    # And the stored replay reproduces the result.
    assert verify_record(load_record(db, match_id)) == []


def test_unrated_matches_leave_ratings_alone(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair, rated=False)
    c = claim(db, match_id)
    assert c is not None and not c.spec.rated
    assert record(db, c, play(c))
    assert counts(db, match_id)["rating_history"] == 0
    with db.session() as s:
        assert {b.elo for b in s.query(BotRow)} == {1500.0}
    assert stats_of(db, pair[0])["matches"] == 1


def test_a_forfeit_is_recorded_with_its_unfinished_game(
    db: Database, pair: tuple[int, int]
) -> None:
    match_id = add_match(db, *pair)
    c = claim(db, match_id)
    assert c is not None
    rec = play(c, heuristic_v_faulty)
    assert rec.forfeit is not None
    assert record(db, c, rec)
    m = match_row(db, match_id)
    assert (m.winner, m.forfeit_seat) == ("a", "b")
    assert m.forfeit_reason
    assert stats_of(db, pair[1])["forfeits"] == 1
    assert stats_of(db, pair[1])["faults"] == len(rec.faults) > 0
    stored = load_record(db, match_id)
    assert stored.to_dict()["forfeit"]["seat"] == "b"
    assert verify_record(stored) == []


def test_unique_constraints_make_a_second_result_impossible(
    db: Database, pair: tuple[int, int]
) -> None:
    match_id = add_match(db, *pair)
    c = claim(db, match_id)
    assert c is not None
    assert record(db, c, play(c))
    with db.session() as s:
        game_id = s.query(GameRow.id).filter_by(match_id=match_id, index=0).scalar()
    duplicates: list[Any] = [
        MatchResultRow(match_id=match_id, attempt=2, summary={}, digest="0" * 64),
        GameRow(
            match_id=match_id, index=0, winner="a", points_a=0, points_b=0, totals_a=0, totals_b=0
        ),
        HandRow(
            game_id=game_id,
            match_id=match_id,
            index=0,
            dealer="a",
            outcome="dead",
            winner=None,
            points=0,
            log={},
        ),
        RatingHistoryRow(bot_id=pair[0], match_id=match_id, before=1.0, after=2.0),
    ]
    before = counts(db, match_id)
    for row in duplicates:
        with pytest.raises(IntegrityError), db.session() as s:
            s.add(row)
    assert counts(db, match_id) == before


def test_a_second_recording_that_passes_the_guard_is_rolled_back_whole(
    db: Database, pair: tuple[int, int]
) -> None:
    """Even if the status guard were wrong, the unique keys stop a second result, and the
    transaction takes the match row, statistics and ratings back with it."""
    match_id = add_match(db, *pair)
    c = claim(db, match_id)
    assert c is not None
    rec = play(c)
    assert record(db, c, rec)
    before = (counts(db, match_id), [stats_of(db, b) for b in pair])
    with db.session() as s:  # a bug puts the finished match back in its attempt's hands
        s.execute(
            update(MatchRow).where(MatchRow.id == match_id).values(status=MatchStatus.RUNNING)
        )
    with pytest.raises(IntegrityError):
        record(db, c, rec)
    assert (counts(db, match_id), [stats_of(db, b) for b in pair]) == before
    assert match_row(db, match_id).status is MatchStatus.RUNNING  # the update was rolled back


def test_sweep_stuck_returns_expired_leases_to_pending(db: Database, pair: tuple[int, int]) -> None:
    stuck, live, done, fresh = (add_match(db, *pair, seed=i) for i in range(4))
    for match_id in (stuck, live, done):
        assert claim(db, match_id) is not None
    c = claim(db, done, "again")
    assert c is None
    with db.session() as s:
        s.execute(update(MatchRow).where(MatchRow.id == done).values(status=MatchStatus.FINISHED))
    expire_lease(db, stuck)
    expire_lease(db, done)
    assert sweep_stuck(db, pending_grace_s=300) == [stuck]
    m = match_row(db, stuck)
    assert (m.status, m.lease_owner, m.attempt) == (MatchStatus.PENDING, None, 1)
    assert match_row(db, live).status is MatchStatus.RUNNING
    assert match_row(db, done).status is MatchStatus.FINISHED
    # Pending matches whose queue message may be lost come back after the grace period.
    # (By then the live lease has run out too.)
    later = utcnow() + timedelta(seconds=LEASE + 301)
    assert sweep_stuck(db, now=later, pending_grace_s=300) == sorted([stuck, live, fresh])
    assert match_row(db, done).status is MatchStatus.FINISHED
    # The swept match is claimed again with the next attempt.
    again = claim(db, stuck)
    assert again is not None and again.attempt == 2


def test_max_attempts_marks_the_match_failed(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair)
    for attempt in (1, 2):
        c = claim(db, match_id, max_attempts=2)
        assert c is not None and c.attempt == attempt
        expire_lease(db, match_id)
    assert claim(db, match_id, max_attempts=2) is None
    m = match_row(db, match_id)
    assert m.status is MatchStatus.FAILED
    assert m.error is not None and "2 attempts" in m.error
    assert claim(db, match_id, max_attempts=10) is None  # failed is final


def test_fail_match_only_for_the_current_attempt(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair)
    old = claim(db, match_id)
    assert old is not None
    expire_lease(db, match_id)
    new = claim(db, match_id)
    assert new is not None
    assert not fail_match(db, old, "stale")
    assert fail_match(db, new, "boom")
    m = match_row(db, match_id)
    assert (m.status, m.error) == (MatchStatus.FAILED, "boom")


def test_run_match_job_records_once_and_then_skips(db: Database, pair: tuple[int, int]) -> None:
    match_id = add_match(db, *pair)
    settings = load_settings({})
    seen: list[int] = []
    first = run_match_job(
        db, settings, match_id, "w1", make_players=heuristic_v_random, after_record=seen.append
    )
    second = run_match_job(
        db, settings, match_id, "w2", make_players=heuristic_v_random, after_record=seen.append
    )
    assert (first.status, second.status) == (JobStatus.RECORDED, JobStatus.SKIPPED)
    assert seen == [match_id]
    assert counts(db, match_id)["results"] == 1


def test_the_same_job_twice_at_once_records_once(db: Database, pair: tuple[int, int]) -> None:
    match_ids = [add_match(db, *pair, seed=s) for s in range(3)]
    settings = load_settings({})
    outcomes: list[JobStatus] = []
    barrier = threading.Barrier(6)

    def run(match_id: int, worker: str) -> None:
        barrier.wait()
        outcome = run_match_job(db, settings, match_id, worker, make_players=heuristic_v_random)
        outcomes.append(outcome.status)

    threads = [threading.Thread(target=run, args=(m, f"w{i}")) for m in match_ids for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The loser of each race finds the match finished (skipped) or still held by the winner's
    # live lease (busy); either way it plays nothing.
    assert outcomes.count(JobStatus.RECORDED) == 3
    assert all(
        o in (JobStatus.SKIPPED, JobStatus.BUSY) for o in outcomes if o is not JobStatus.RECORDED
    )
    assert count(db, MatchResultRow) == 3
    assert stats_of(db, pair[0])["matches"] == 3
    assert count(db, RatingHistoryRow) == 6


def test_a_job_that_loses_its_lease_mid_match_records_nothing(
    db: Database, pair: tuple[int, int]
) -> None:
    """A slow attempt whose lease expired and was taken over is fenced out: FENCED, no rows."""
    match_id = add_match(db, *pair)
    settings = load_settings({}, lease_seconds=LEASE)
    stolen: list[Claim] = []

    def players(c: Claim, s: Settings) -> list[Player]:
        inner = heuristic_v_random(c, s)

        class Thief:
            name = inner[0].name

            def start(self, context: Any) -> Any:
                return inner[0].start(context)

            def act(self, turn: Any) -> Any:
                if not stolen:  # another worker takes the match over
                    expire_lease(db, match_id)
                    taken = claim(db, match_id, "thief")
                    assert taken is not None
                    stolen.append(taken)
                return inner[0].act(turn)

            def end(self, summary: Any) -> None:
                inner[0].end(summary)

        return [Thief(), inner[1]]

    outcome = run_match_job(db, settings, match_id, "victim", make_players=players)
    assert outcome.status is JobStatus.FENCED
    assert counts(db, match_id) == {"results": 0, "games": 0, "hands": 0, "rating_history": 0}
    m = match_row(db, match_id)
    assert (m.status, m.attempt, m.lease_owner) == (MatchStatus.RUNNING, 2, "thief")


def test_an_arena_bug_on_every_attempt_voids_the_match(db: Database, pair: tuple[int, int]) -> None:
    """Tried ARENA_MAX_ATTEMPTS times, then void: failed, no result, no loss for either bot."""
    match_id = add_match(db, *pair)
    tried: list[int] = []

    def broken(c: Claim, s: Settings) -> list[Player]:
        tried.append(c.attempt)
        raise RuntimeError("cannot build players")

    settings = load_settings({}, max_attempts=3)
    outcome = run_match_job(db, settings, match_id, "w", make_players=broken)
    assert outcome.status is JobStatus.FAILED
    assert tried == [1, 2, 3]
    m = match_row(db, match_id)
    assert (m.status, m.winner, m.forfeit_seat) == (MatchStatus.FAILED, None, None)
    assert m.error is not None and "gave up after 3 attempts" in m.error
    assert "cannot build players" in m.error
    assert counts(db, match_id) == {"results": 0, "games": 0, "hands": 0, "rating_history": 0}
    for bot in pair:
        assert stats_of(db, bot)["losses"] == 0


def test_an_arena_exception_mid_match_is_played_again_and_recorded_once(
    db: Database, pair: tuple[int, int]
) -> None:
    """An exception that is no bot's fault (raised by the arena's side of a player, not a
    Fault) releases the attempt; the next attempt plays the match from the start."""
    match_id = add_match(db, *pair)

    def flaky(c: Claim, s: Settings) -> list[Player]:
        inner = heuristic_v_random(c, s)
        if c.attempt > 1:
            return inner

        class Crashing:
            name = inner[0].name
            calls = 0

            def start(self, context: Any) -> Any:
                return inner[0].start(context)

            def act(self, turn: Any) -> Any:
                self.calls += 1
                if self.calls == 3:
                    raise RecursionError("maximum recursion depth exceeded")
                return inner[0].act(turn)

            def end(self, summary: Any) -> None:
                inner[0].end(summary)

        return [Crashing(), inner[1]]

    outcome = run_match_job(db, load_settings({}), match_id, "w", make_players=flaky)
    assert outcome.status is JobStatus.RECORDED
    m = match_row(db, match_id)
    assert (m.status, m.attempt, m.error) == (MatchStatus.FINISHED, 2, None)
    assert m.winner in ("a", "b") and m.forfeit_seat is None
    assert counts(db, match_id)["results"] == 1
    assert verify_record(load_record(db, match_id)) == []


def test_a_match_past_the_soft_time_limit_is_stopped_and_marked_failed(
    db: Database, pair: tuple[int, int]
) -> None:
    """The job keeps its own clock (Celery's threads pool enforces no time limit): past
    ARENA_TASK_SOFT_TIME_LIMIT it stops after the deal in play, records nothing and says why."""
    match_id = add_match(db, *pair)
    settings = load_settings({}, task_soft_time_limit=0)
    outcome = run_match_job(db, settings, match_id, "w", make_players=heuristic_v_random)
    assert outcome.status is JobStatus.FAILED
    assert "past the time limit of 0 s" in outcome.detail
    m = match_row(db, match_id)
    assert m.status is MatchStatus.FAILED
    assert m.error is not None and "ARENA_TASK_SOFT_TIME_LIMIT" in m.error
    assert counts(db, match_id) == {"results": 0, "games": 0, "hands": 0, "rating_history": 0}


def test_a_hollywood_match_is_recorded_and_its_stored_replay_verifies(
    db: Database, pair: tuple[int, int]
) -> None:
    """Hollywood scoring (issue 10, 3.3): each deal stored once, under the game it belongs to,
    and the stored games add up again when replayed (verify_record scores them all at once)."""
    rules = RuleSet(target=60, best_of=3, match_scoring="hollywood")
    match_id = add_match(db, *pair, rules=rules)
    c = claim(db, match_id)
    assert c is not None
    rec = play(c)
    assert record(db, c, rec)
    data = rec.to_dict()
    assert len(data["games"]) == 3
    assert counts(db, match_id)["hands"] == sum(len(g["hands"]) for g in data["games"])
    stored = load_record(db, match_id)
    assert [g.net for g in stored.games] == [g["net"] for g in data["games"]]
    assert verify_record(stored) == []
