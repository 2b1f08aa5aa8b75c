"""A ladder of real HTTP house bots through Celery, on this machine's Redis and PostgreSQL, for
several rounds: the test runs each round (with an injected time, one slot after another) and
real workers play its matches; one bot is stopped (its matches forfeit, then, suspended, it is
left out), started again and resumed (it plays again). Last, the periodic task itself
(``workers.tasks.ladder``, as beat sends it on the control queue) runs the current slot's
round in a worker."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from arena_procs import Workers, wait_until
from celery_fixtures import *  # noqa: F403 - pytest fixtures
from celery_fixtures import broker_drained
from sqlalchemy import func, select

from arena.bots.house import house_bot, start_house_bots
from arena.db.models import LadderRatingRow, LadderRoundRow, MatchRow
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor
from arena.services.bots import register_bot, set_status
from arena.services.ladder import run_ladder
from arena.services.periodic import CONTROL_QUEUE
from arena.settings import Settings
from arena.states import BotStatus, MatchStatus

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

WORKER_ENV = {
    "ARENA_ALLOW_LOOPBACK": "true",
    "ARENA_LEASE_SECONDS": "10",
    "ARENA_TASK_SOFT_TIME_LIMIT": "100",
    "ARENA_TASK_TIME_LIMIT": "120",
    "ARENA_VISIBILITY_TIMEOUT": "180",
}
KINDS = ["strong", "balanced", "greedy", "random"]
#: The injected rounds' day: long past, so the real slot of the task's round is never one of them.
NOON = datetime(2020, 1, 1, 12, 0, tzinfo=UTC)
ROUND_TIMEOUT = 240.0


@pytest.fixture
def worker_env() -> dict[str, str]:
    return WORKER_ENV


def _statuses(db: Database, ids: Sequence[int]) -> dict[int, MatchStatus]:
    with db.session() as s:
        rows = s.execute(select(MatchRow.id, MatchRow.status).where(MatchRow.id.in_(ids)))
        return {row.id: row.status for row in rows}


def _round(
    db: Database, settings: Settings, executor: CeleryExecutor, workers: Workers, k: int
) -> list[MatchRow]:
    """Run the round of slot ``k`` after noon, wait for its matches, return them."""
    ids = run_ladder(db, settings, executor.submit, now=NOON + timedelta(minutes=5 * k))
    wait_until(
        lambda: all(s is MatchStatus.FINISHED for s in _statuses(db, ids).values()),
        timeout=ROUND_TIMEOUT,
        what=f"round {k}'s {len(ids)} matches to finish",
        explain=workers.logs,
    )
    with db.session() as s:
        return list(s.scalars(select(MatchRow).where(MatchRow.id.in_(ids)).order_by(MatchRow.id)))


def _bots_of(matches: Sequence[MatchRow]) -> set[int]:
    return {b for m in matches for b in (m.bot_a_id, m.bot_b_id)}


def test_a_ladder_of_http_bots_runs_round_after_round_through_celery(
    db: Database,
    workers: Workers,
    executor: CeleryExecutor,
    settings: Settings,
    redis_url: str,
) -> None:
    workers.start("ladder1", "ladder2", concurrency=4)
    servers = start_house_bots(KINDS)
    try:
        ids = {
            s.info.name: register_bot(db, name=s.info.name, owner="t", url=s.url).bot_id
            for s in servers
        }
        everyone = set(ids.values())
        first = _round(db, settings, executor, workers, 0)
        second = _round(db, settings, executor, workers, 1)
        for matches in (first, second):
            assert len(matches) == 4 and _bots_of(matches) == everyone
            assert all(m.forfeit_seat is None and m.winner in ("a", "b") for m in matches)
        assert run_ladder(db, settings, executor.submit, now=NOON + timedelta(minutes=9)) == []

        # One bot goes down: its next matches forfeit as unreachable.
        down = servers[KINDS.index("random")]
        port, gone = down.port, ids["house-random"]
        down.stop()
        third = _round(db, settings, executor, workers, 2)
        mine = [m for m in third if gone in (m.bot_a_id, m.bot_b_id)]
        assert len(mine) == 2
        for m in mine:
            seat = "a" if m.bot_a_id == gone else "b"
            assert m.forfeit_seat == seat and m.winner == ("b" if seat == "a" else "a")
        # Suspended (as the health sweep does after its failed probes), it is left out.
        set_status(db, gone, BotStatus.SUSPENDED)
        fourth = _round(db, settings, executor, workers, 3)
        assert len(fourth) == 2 and gone not in _bots_of(fourth)
        # Back on its port and resumed, it plays again.
        servers[KINDS.index("random")] = house_bot(
            "random", name="house-random", port=port, seed="house-random"
        ).start()
        set_status(db, gone, BotStatus.ACTIVE)
        fifth = _round(db, settings, executor, workers, 4)
        back = [m for m in fifth if gone in (m.bot_a_id, m.bot_b_id)]
        assert len(back) == 2 and all(m.forfeit_seat is None for m in back)

        # The periodic task, as beat sends it: the current slot's round, in a worker.
        before = int(datetime.now(UTC).timestamp() // 300)
        executor.app.send_task("workers.tasks.ladder", queue=CONTROL_QUEUE)
        wait_until(
            lambda: _round_count(db) == 6, timeout=60, what="the task's round", explain=workers.logs
        )
        with db.session() as s:
            latest = s.scalars(select(LadderRoundRow).order_by(LadderRoundRow.id.desc())).first()
            assert latest is not None
            task_ids = list(
                s.scalars(select(MatchRow.id).where(MatchRow.ladder_round_id == latest.id))
            )
        assert before <= latest.slot <= int(datetime.now(UTC).timestamp() // 300)
        assert len(task_ids) == 4
        wait_until(
            lambda: all(st is MatchStatus.FINISHED for st in _statuses(db, task_ids).values()),
            timeout=ROUND_TIMEOUT,
            what="the task's matches to finish",
            explain=workers.logs,
        )
    finally:
        for s in servers:
            s.stop()

    with db.session() as s:
        ladder = {r.bot_id: r for r in s.scalars(select(LadderRatingRow))}
        decided = s.scalar(
            select(func.count()).select_from(MatchRow).where(MatchRow.winner.is_not(None))
        )
        keys = s.execute(select(MatchRow.ladder_round_id, MatchRow.match_key)).all()
    assert set(ladder) == everyone and all(r.preset == "standard" for r in ladder.values())
    assert sum(r.elo for r in ladder.values()) == pytest.approx(1500.0 * 4)
    assert sum(r.matches for r in ladder.values()) == 2 * decided
    assert len(keys) == len(set(keys))  # each match scheduled once
    wait_until(lambda: broker_drained(redis_url), timeout=30, what="the broker to drain")


def _round_count(db: Database) -> int:
    with db.session() as s:
        return int(s.scalar(select(func.count()).select_from(LadderRoundRow)) or 0)
