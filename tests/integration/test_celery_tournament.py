"""A whole tournament of real HTTP house bots through Celery, on this machine's Redis and
PostgreSQL: the test only starts it; the workers play each match, and each recorded match's
task advances the tournament and submits what became ready, until the event finishes."""

from __future__ import annotations

import io

import pytest
from arena_procs import Workers, house_bots, wait_until
from celery_fixtures import *  # noqa: F403 - pytest fixtures
from celery_fixtures import broker_drained
from rich.console import Console
from sqlalchemy import func, select

from arena.db.models import (
    BotRow,
    BotStatsRow,
    MatchResultRow,
    MatchRow,
    RatingFitRow,
    RatingHistoryRow,
    TournamentRow,
)
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor
from arena.reading.progress import standings_table
from arena.reading.replay import load_record, verify_record
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.sweeper import fit_is_behind
from arena.services.tournaments import create_tournament, load_plan, start_tournament
from arena.states import MatchStatus, TournamentStatus

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

WORKER_ENV = {
    "ARENA_ALLOW_LOOPBACK": "true",
    "ARENA_LEASE_SECONDS": "10",
    "ARENA_TASK_SOFT_TIME_LIMIT": "50",
    "ARENA_TASK_TIME_LIMIT": "60",
    "ARENA_VISIBILITY_TIMEOUT": "90",
}
RULES = RuleSet(target=100, best_of=1)
KINDS = ["strong", "balanced", "greedy", "random"]
FINISH_TIMEOUT = 180.0


@pytest.fixture
def worker_env() -> dict[str, str]:
    return WORKER_ENV


def tournament_status(db: Database, tournament_id: int) -> TournamentStatus:
    with db.session() as s:
        return s.get_one(TournamentRow, tournament_id).status


@pytest.mark.parametrize(
    ("format_name", "options", "matches"),
    [("round_robin", {}, 6), ("double_elimination", {"reset": True}, (6, 7))],
    ids=["round_robin", "double_elimination"],
)
def test_a_tournament_of_http_bots_runs_itself_through_celery(
    db: Database,
    workers: Workers,
    executor: CeleryExecutor,
    redis_url: str,
    format_name: str,
    options: dict[str, object],
    matches: int | tuple[int, int],
) -> None:
    workers.start("t1", "t2", concurrency=3)
    with house_bots(KINDS) as bots:
        ids = [register_bot(db, name=b.info.name, owner="tests", url=b.url).bot_id for b in bots]
        tid = create_tournament(
            db,
            name=f"celery {format_name}",
            format_name=format_name,
            options=options,
            bot_ids=ids,
            rules=RULES,
            seed=2024,
        )
        started = start_tournament(db, tid, executor.submit)
        # The worker that finishes the event refits the ratings after it marks the event
        # finished (in a transaction of its own): wait for both, or the fits read below may
        # be an earlier round's (seen once in CI: 10 fitted matches of 12).
        wait_until(
            lambda: (
                tournament_status(db, tid) is TournamentStatus.FINISHED and not fit_is_behind(db)
            ),
            timeout=FINISH_TIMEOUT,
            what=f"the {format_name} to finish and the ratings to be refit",
            explain=workers.logs,
        )

    with db.session() as s:
        rows = list(s.scalars(select(MatchRow).where(MatchRow.tournament_id == tid)))
        elo = {b.id: b.elo for b in s.scalars(select(BotRow))}
        stats = {st.bot_id: st for st in s.scalars(select(BotStatsRow))}
        fits = {f.bot_id: f for f in s.scalars(select(RatingFitRow))}
        history = s.scalar(select(func.count()).select_from(RatingHistoryRow))
        results = s.scalar(select(func.count()).select_from(MatchResultRow))
    expected = matches if isinstance(matches, tuple) else (matches,)
    assert len(rows) in expected
    assert {m.status for m in rows} == {MatchStatus.FINISHED}
    assert len({m.match_key for m in rows}) == len(rows)  # each scheduled once
    if format_name == "double_elimination":
        # Only the first round was scheduled here; the workers scheduled the rest.
        assert len(started.scheduled) == 2 < len(rows)
    for m in rows:
        assert verify_record(load_record(db, m.id)) == [], m.match_key
    assert results == len(rows) and history == 2 * len(rows)
    assert sum(elo.values()) == pytest.approx(1500.0 * len(ids))
    assert sum(st.matches for st in stats.values()) == 2 * len(rows)
    assert set(fits) == set(ids)  # refit by the worker that finished the event
    assert sum(f.matches for f in fits.values()) == 2 * len(rows)

    tournament, plan = load_plan(db, tid)
    assert plan.finished and tournament.summary == plan.to_dict()
    assert {s.participant for s in plan.standings} == {str(i) for i in ids}
    if format_name == "round_robin":
        assert all(s.played == 3 for s in plan.standings)
    else:
        assert plan.champion is not None
    out = io.StringIO()
    Console(file=out, width=120).print(standings_table(db, tid))
    table = out.getvalue()
    assert "(finished)" in table
    assert all(b.info.name in table for b in bots)
    wait_until(lambda: broker_drained(redis_url), timeout=30, what="the broker to drain")
