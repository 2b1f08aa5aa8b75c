"""An SPRT test on the Celery path: real ``gin-arena worker`` processes on this machine's Redis
and PostgreSQL play its duplicate pairs of HTTP house bots, and the task that records each match
advances the test (schedules the next pairs, recounts the LLR in pair order); the worker that
records the last pair under the cap finishes it, cancels what is still pending, and emits
``test.finished`` with the seed revealed. The service-level tests pin the statistics; this pins
that the worker's hook, not the sweep or the test, drives a test to its end."""

from __future__ import annotations

import pytest
from arena_procs import Workers, house_bots, wait_until
from celery_fixtures import *  # noqa: F403 - pytest fixtures
from celery_fixtures import broker_drained
from sqlalchemy import select

from arena.db.models import EventRow, MatchRow, SprtTestRow
from arena.db.session import Database
from arena.measures.sprt import SprtParams
from arena.playing.executors import CeleryExecutor
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.sprt_tests import create_test
from arena.states import MatchStatus

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

WORKER_ENV = {
    "ARENA_ALLOW_LOOPBACK": "true",
    "ARENA_LEASE_SECONDS": "10",
    "ARENA_TASK_SOFT_TIME_LIMIT": "50",
    "ARENA_TASK_TIME_LIMIT": "60",
    "ARENA_VISIBILITY_TIMEOUT": "90",
}
PAIRS = 3


@pytest.fixture
def worker_env() -> dict[str, str]:
    return WORKER_ENV


def test_celery_workers_play_a_test_to_its_cap_and_the_last_record_finishes_it(
    db: Database, workers: Workers, executor: CeleryExecutor, redis_url: str
) -> None:
    workers.start("s1", "s2", concurrency=2)
    with house_bots(["strong", "greedy"]) as bots:
        strong, greedy = (
            register_bot(db, name=b.info.name, owner="ada@example.org", url=b.url).bot_id
            for b in bots
        )
        test_id = create_test(
            db,
            candidate_id=strong,
            baseline_id=greedy,
            # Bounds no three pairs can cross: the cap ends it.
            params=SprtParams(elo0=0, elo1=5),
            max_pairs=PAIRS,
            concurrency=1,
            rules=RuleSet(target=50, best_of=1),
            created_by="tests",
            submit=executor.submit,
            seed=20,
        )

        def verdict() -> str | None:
            with db.session() as s:
                return s.scalar(select(SprtTestRow.verdict).where(SprtTestRow.id == test_id))

        wait_until(
            lambda: verdict() is not None,
            timeout=300,
            what="the workers to bring the test to its cap",
            explain=workers.logs,
        )

    with db.session() as s:
        test = s.get_one(SprtTestRow, test_id)
        matches = list(s.scalars(select(MatchRow).where(MatchRow.test_id == test_id)))
        events = list(s.scalars(select(EventRow).where(EventRow.type == "test.finished")))
        assert (test.verdict, test.pairs, sum(test.pentanomial)) == ("capped", PAIRS, PAIRS)
        # One pair at a time (concurrency 1): each record scheduled the next pair, so no more
        # than the cap was ever scheduled, and every leg was played once, unrated.
        assert len(matches) == 2 * PAIRS
        assert {m.status for m in matches} == {MatchStatus.FINISHED}
        assert all(m.attempt == 1 and m.rated is False for m in matches)
        assert len({m.match_key for m in matches}) == len(matches)
        assert [e.data["verdict"] for e in events] == ["capped"]
        assert events[0].data["seed"] == 20 and events[0].data["pairs"] == PAIRS
    wait_until(lambda: broker_drained(redis_url), timeout=30, what="the broker to drain")
