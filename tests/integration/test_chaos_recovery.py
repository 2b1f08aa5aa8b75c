"""Recovery for real (issue 14, part 1): `gin-arena worker` subprocesses on this machine's Redis
and PostgreSQL, HTTP house bots on loopback.

* What the sweep resubmits jumps the queue: with a backlog waiting, the match a dead worker
  left is played next, before the matches queued ahead of it.
* An early or duplicate resubmission is harmless: every pending match sent again while its
  first message still waits, and running ones sent again while they play, still leave exactly
  one result each.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
import redis
from arena_procs import Workers, house_bots, wait_until
from celery_fixtures import *  # noqa: F403 - pytest fixtures
from celery_fixtures import broker_drained
from sqlalchemy import select, update
from test_celery import all_finished, assert_recorded_once, statuses

from arena.db.models import BotStatsRow, MatchRow, utcnow
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.periodic import CONTROL_QUEUE, PERIODIC_JOBS
from arena.services.queue_loss import MARKER_KEY, begin_resend, mark_queue
from arena.settings import Settings
from arena.states import MatchStatus
from workers.tasks import send_matches

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

WORKER_ENV = {
    "ARENA_ALLOW_LOOPBACK": "true",
    "ARENA_LEASE_SECONDS": "2",
    "ARENA_TASK_SOFT_TIME_LIMIT": "30",
    "ARENA_TASK_TIME_LIMIT": "31",
    "ARENA_VISIBILITY_TIMEOUT": "40",
    "ARENA_LADDER_PRESETS": "",
}
FINISH_TIMEOUT = 300.0


#: Short matches (one game to 25): the order of play is what is looked at, not the games.
RULES = RuleSet(target=25, best_of=1)


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


def started_order(db: Database, match_ids: list[int]) -> list[int]:
    """The matches in the order their last attempt was claimed."""
    with db.session() as s:
        rows = s.execute(
            select(MatchRow.id, MatchRow.started_at).where(MatchRow.id.in_(match_ids))
        ).all()
    return [match_id for match_id, _ in sorted(rows, key=lambda r: r[1])]


def send_sweep(executor: CeleryExecutor) -> None:
    """What beat sends: the sweep task on the control queue."""
    executor.app.send_task("workers.tasks.sweep", queue=CONTROL_QUEUE)


def test_a_match_the_sweep_resubmits_is_played_before_the_backlog(
    db: Database, workers: Workers, executor: CeleryExecutor, redis_url: str, settings: Settings
) -> None:
    assert next(job for job in PERIODIC_JOBS if job.name == "sweep").urgent
    workers.start("p1", concurrency=1)  # one slot: the order of the queue is the order of play
    with house_bots(["greedy", "strong"], delay_s=0.003) as bots:
        *backlog, orphan = schedule(db, [b.url for b in bots], seeds=[21, 22, 23, 24, 25])
        # What a worker SIGKILLed mid-match leaves: running, its lease run out, no message.
        with db.session() as s:
            s.execute(
                update(MatchRow)
                .where(MatchRow.id == orphan)
                .values(
                    status=MatchStatus.RUNNING,
                    attempt=1,
                    lease_owner="celery-dead-1-x",
                    lease_expires_at=utcnow() - timedelta(seconds=1),
                )
            )
        # A broker swept before (else the first sweep resends them all).
        assert mark_queue(settings, begin_resend(settings))
        executor.submit(backlog)
        wait_until(
            lambda: statuses(db, [backlog[0]])[backlog[0]] is MatchStatus.RUNNING,
            timeout=60,
            what="the first match of the backlog to start",
            explain=workers.logs,
        )
        send_sweep(executor)
        wait_until(
            lambda: all_finished(db, [*backlog, orphan]),
            timeout=FINISH_TIMEOUT,
            what="the backlog and the orphan to finish",
            explain=workers.logs,
        )
    order = started_order(db, [*backlog, orphan])
    # The sweep is acknowledged when it starts, which frees the one slot's prefetch while it
    # runs: the worker may take the next backlog match before the sweep resubmits the orphan.
    # So the orphan is played second or third, never behind the backlog.
    assert order[0] == backlog[0] and order.index(orphan) <= 2, (order, workers.logs())
    for match_id in (*backlog, orphan):
        assert_recorded_once(db, match_id)
    wait_until(lambda: broker_drained(redis_url), timeout=60, what="the broker to drain")


def test_early_and_duplicate_resubmissions_leave_one_result_each(
    db: Database, workers: Workers, executor: CeleryExecutor, redis_url: str
) -> None:
    workers.start("e1", "e2", concurrency=2)
    with house_bots(["greedy", "strong"], delay_s=0.002) as bots:
        match_ids = schedule(db, [b.url for b in bots], seeds=[31, 32, 33, 34, 35, 36])
        executor.submit(match_ids)
        wait_until(
            lambda: MatchStatus.RUNNING in statuses(db, match_ids).values(),
            timeout=60,
            what="a match to start",
            explain=workers.logs,
        )
        # A false alarm: the marker gone while every message is still queued, so the sweep
        # resubmits every pending match; and every match sent again, urgently, as it runs.
        client = redis.Redis.from_url(redis_url)
        try:
            client.delete(MARKER_KEY)
        finally:
            client.close()
        send_sweep(executor)
        send_matches(executor.app, match_ids, urgent=True)
        wait_until(
            lambda: all_finished(db, match_ids),
            timeout=FINISH_TIMEOUT,
            what="the matches to finish",
            explain=workers.logs,
        )
        wait_until(
            lambda: broker_drained(redis_url),
            timeout=FINISH_TIMEOUT,
            what="every duplicate to be delivered and end",
            explain=workers.logs,
        )
    for match_id in match_ids:
        assert_recorded_once(db, match_id)
    with db.session() as s:
        assert s.scalars(select(BotStatsRow.matches)).all() == [6, 6]
