"""Celery for real: `gin-arena worker` subprocesses on this machine's Redis and PostgreSQL,
matches between HTTP house bots on loopback, submitted through CeleryExecutor.

Short leases and a short visibility timeout make redelivery happen within seconds. The kill
test runs once per pool in the suite; run it N times in a row with ``ARENA_KILL_REPEATS=N``.
Playing, the kill and the time limit run in both of ``gin-arena worker``'s pools (``--pool
threads``, the default, and ``--pool gevent``).
"""

from __future__ import annotations

import os

import pytest
from arena_procs import Workers, house_bots, wait_until
from celery_fixtures import *  # noqa: F403 - pytest fixtures
from celery_fixtures import broker_drained
from sqlalchemy import func, select

from arena.db.models import (
    BotRow,
    BotStatsRow,
    GameRow,
    HandRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
)
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor
from arena.reading.replay import load_record, verify_record
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.states import MatchStatus

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

KILL_REPEATS = int(os.environ.get("ARENA_KILL_REPEATS", "1"))
#: soft < hard < visibility; a lease far shorter than the visibility timeout, so a killed
#: worker's lease has run out by the time its task is delivered again. The soft limit (which
#: the match job enforces itself) leaves a slow CI machine room to play the match whole.
WORKER_ENV = {
    "ARENA_ALLOW_LOOPBACK": "true",
    "ARENA_LEASE_SECONDS": "2",
    "ARENA_TASK_SOFT_TIME_LIMIT": "12",
    "ARENA_TASK_TIME_LIMIT": "13",
    "ARENA_VISIBILITY_TIMEOUT": "16",
    "ARENA_MAX_ATTEMPTS": "5",
}
RULES = RuleSet(target=100)
FINISH_TIMEOUT = 120.0
POOLS = ["threads", "gevent"]


def pool_options(pool: str) -> list[str]:
    return ["--pool", pool]


@pytest.fixture
def worker_env() -> dict[str, str]:
    return WORKER_ENV


def schedule(db: Database, bot_urls: list[str], seeds: list[int]) -> list[int]:
    ids = [
        register_bot(db, name=f"house-{i}", owner="tests", url=url).bot_id
        for i, url in enumerate(bot_urls)
    ]
    with db.session() as s:
        return [schedule_match(s, ids[0], ids[1], rules=RULES, seed=seed).id for seed in seeds]


def statuses(db: Database, match_ids: list[int]) -> dict[int, MatchStatus]:
    with db.session() as s:
        return dict(
            s.execute(select(MatchRow.id, MatchRow.status).where(MatchRow.id.in_(match_ids))).all()
        )


def all_finished(db: Database, match_ids: list[int]) -> bool:
    return set(statuses(db, match_ids).values()) == {MatchStatus.FINISHED}


def rows(db: Database, model: type, *where: object) -> int:
    with db.session() as s:
        return int(s.scalar(select(func.count()).select_from(model).where(*where)) or 0)


def assert_recorded_once(db: Database, match_id: int) -> None:
    """Exactly one result, one replay (games and deals), one set of statistics and ratings."""
    record = load_record(db, match_id)
    assert verify_record(record) == []
    assert rows(db, MatchResultRow, MatchResultRow.match_id == match_id) == 1
    assert rows(db, GameRow, GameRow.match_id == match_id) == len(record.games)
    hands = sum(len(g.hands) for g in record.games)
    assert rows(db, HandRow, HandRow.match_id == match_id) == hands
    assert rows(db, RatingHistoryRow, RatingHistoryRow.match_id == match_id) == 2


@pytest.mark.parametrize("pool", POOLS)
def test_celery_workers_play_matches_that_replay(
    db: Database, workers: Workers, executor: CeleryExecutor, redis_url: str, pool: str
) -> None:
    workers.start("w1", concurrency=4, options=pool_options(pool))
    with house_bots(["greedy", "strong"]) as bots:
        match_ids = schedule(db, [b.url for b in bots], seeds=[11, 12, 13, 14])
        executor.submit(match_ids)
        wait_until(
            lambda: all_finished(db, match_ids),
            timeout=FINISH_TIMEOUT,
            what="the matches to finish",
            explain=workers.logs,
        )
    for match_id in match_ids:
        assert_recorded_once(db, match_id)
    with db.session() as s:
        assert s.scalars(select(BotStatsRow.matches)).all() == [4, 4]
        elo = s.scalars(select(BotRow.elo)).all()
    assert sum(elo) == pytest.approx(3000.0)
    wait_until(lambda: broker_drained(redis_url), timeout=30, what="the broker to drain")


@pytest.mark.parametrize("pool", POOLS)
@pytest.mark.parametrize("round_", range(KILL_REPEATS))
def test_a_worker_killed_mid_match_leaves_exactly_one_result(
    db: Database,
    workers: Workers,
    executor: CeleryExecutor,
    redis_url: str,
    round_: int,
    pool: str,
) -> None:
    if pool == "threads":
        w1, w2 = workers.start("k1", "k2", concurrency=2, options=pool_options(pool))
    else:
        # As deployed (deploy/README.md): gevent workers play the matches; a threads worker
        # takes the periodic jobs, and its event loop is what puts a dead worker's unacked
        # tasks back in their queues (kombu does that from an event loop's timer, which a
        # gevent worker does not run).
        w1, w2 = workers.start(
            "k1", "k2", concurrency=2, options=[*pool_options(pool), "--queues", "celery"]
        )
        workers.start("c1", concurrency=1, options=["--queues", "control"])
    by_pid = {w.pid: w for w in (w1, w2)}
    # ~2 ms per action: the match lasts a few seconds, long enough to kill it in the middle.
    with house_bots(["greedy", "strong"], delay_s=0.002) as bots:
        (match_id,) = schedule(db, [b.url for b in bots], seeds=[100 + round_])
        executor.submit([match_id])

        def holder() -> int | None:
            with db.session() as s:
                m = s.get_one(MatchRow, match_id)
                if m.status is not MatchStatus.RUNNING or m.lease_owner is None:
                    return None
                return next((pid for pid in by_pid if f"-{pid}-" in m.lease_owner), None)

        pid = wait_until(
            holder, timeout=60, what="a worker to start the match", explain=workers.logs
        )
        victim = by_pid[pid]
        victim.kill()
        survivor = w2 if victim is w1 else w1
        assert statuses(db, [match_id])[match_id] is MatchStatus.RUNNING, (
            "the match ended before the kill; make it longer"
        )
        wait_until(
            lambda: all_finished(db, [match_id]),
            timeout=FINISH_TIMEOUT,
            what="the surviving worker to finish the match",
            explain=workers.logs,
        )
    assert survivor.proc.poll() is None
    with db.session() as s:
        m = s.get_one(MatchRow, match_id)
        result = s.get_one(MatchResultRow, match_id)
        assert m.attempt >= 2 and result.attempt == m.attempt
        assert s.scalars(select(BotStatsRow.matches)).all() == [1, 1]
    assert_recorded_once(db, match_id)
    wait_until(
        lambda: broker_drained(redis_url),
        timeout=30,
        what="the broker to drain",
        explain=workers.logs,
    )


def test_the_same_task_twice_at_once_records_one_result(
    db: Database, workers: Workers, executor: CeleryExecutor, redis_url: str
) -> None:
    w1, w2 = workers.start("d1", "d2", concurrency=1)
    with house_bots(["greedy", "strong"], delay_s=0.001) as bots:
        (match_id,) = schedule(db, [b.url for b in bots], seeds=[7])
        executor.submit([match_id, match_id])
        wait_until(
            lambda: all_finished(db, [match_id]),
            timeout=FINISH_TIMEOUT,
            what="the match to finish",
            explain=workers.logs,
        )
        wait_until(
            lambda: broker_drained(redis_url),
            timeout=60,
            what="both tasks to end",
            explain=workers.logs,
        )

    def outcomes() -> list[str]:
        return [
            line.rsplit(": ", 1)[-1].strip("'")
            for w in (w1, w2)
            for line in w.log().splitlines()
            if "run_match" in line and " succeeded in " in line
        ]

    wait_until(
        lambda: len(outcomes()) == 2, timeout=30, what="both tasks' outcomes", explain=workers.logs
    )
    # One played and recorded; the other found the match held by a live lease ("skipped"),
    # or, if a starved heartbeat let the lease lapse, took it over and fenced the first out.
    assert outcomes().count("recorded") == 1, workers.logs()
    assert set(outcomes()) - {"recorded"} <= {"skipped", "fenced"}, workers.logs()
    assert_recorded_once(db, match_id)
    with db.session() as s:
        assert s.scalars(select(BotStatsRow.matches)).all() == [1, 1]


@pytest.mark.parametrize(
    "worker_env",
    [
        {
            **WORKER_ENV,
            "ARENA_TASK_SOFT_TIME_LIMIT": "1",
            "ARENA_TASK_TIME_LIMIT": "2",
            "ARENA_VISIBILITY_TIMEOUT": "5",
        }
    ],
)
@pytest.mark.parametrize("pool", POOLS)
def test_a_match_past_the_soft_time_limit_is_stopped_by_its_job_and_fails(
    db: Database, workers: Workers, executor: CeleryExecutor, redis_url: str, pool: str
) -> None:
    """Celery enforces no time limit in the threads pool, and only the hard one in the gevent
    pool; the match job's own clock stops the match at the soft limit, after a deal: it is
    marked failed with the reason, and not retried."""
    (w1,) = workers.start("t1", concurrency=1, options=pool_options(pool))
    with house_bots(["greedy", "strong"], delay_s=0.01) as bots:
        (match_id,) = schedule(db, [b.url for b in bots], seeds=[3])
        executor.submit([match_id])
        wait_until(
            lambda: statuses(db, [match_id])[match_id] is MatchStatus.FAILED,
            timeout=FINISH_TIMEOUT,
            what="the match to be stopped by its time limit",
            explain=workers.logs,
        )
    with db.session() as s:
        m = s.get_one(MatchRow, match_id)
        assert m.error is not None and "ARENA_TASK_SOFT_TIME_LIMIT" in m.error
        assert m.attempt == 1
    assert rows(db, MatchResultRow, MatchResultRow.match_id == match_id) == 0
    assert rows(db, HandRow, HandRow.match_id == match_id) == 0
    wait_until(
        lambda: broker_drained(redis_url), timeout=30, what="the broker to drain", explain=w1.log
    )
