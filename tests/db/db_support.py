"""Helpers shared by the database tests: bots, matches, in-process players, row counts.

Kept in a plain module (not a conftest) so that worker processes started with ``spawn`` can
import :func:`record_matches_worker` by name.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import func, select

from arena.db.models import (
    BotStatsRow,
    GameRow,
    HandRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
)
from arena.db.session import Database
from arena.playing.jobs import run_match_job
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    Player,
    RandomPlayer,
    Turn,
)
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import Claim, schedule_match
from arena.settings import Settings, load_settings

SHORT = RuleSet(target=50)
TABLES = {
    "results": MatchResultRow,
    "games": GameRow,
    "hands": HandRow,
    "rating_history": RatingHistoryRow,
}


def add_bots(db: Database, n: int, *, prefix: str = "bot") -> list[int]:
    """Register ``n`` bots (URLs are never called by in-process players)."""
    return [
        register_bot(
            db, name=f"{prefix}-{i}", owner="tests", url=f"http://127.0.0.1:{9000 + i}"
        ).bot_id
        for i in range(n)
    ]


def add_match(
    db: Database, a: int, b: int, *, seed: int = 1, rules: RuleSet = SHORT, rated: bool = True
) -> int:
    with db.session() as session:
        return schedule_match(session, a, b, rules=rules, seed=seed, rated=rated).id


def heuristic_v_random(claim: Claim, _settings: Settings) -> list[Player]:
    """In-process players for both seats (deterministic given the match seed)."""
    return [
        HeuristicPlayer(name=claim.spec.bots[0].name),
        RandomPlayer(seed=claim.spec.seed, name=claim.spec.bots[1].name),
    ]


class FaultyPlayer:
    """Answers every request with a fault: the match forfeits after ``max_strikes``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def start(self, context: MatchContext) -> Fault | None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        return Fault(FaultKind.TIMEOUT, "never answers")

    def end(self, summary: dict[str, object]) -> None:
        return None


def heuristic_v_faulty(claim: Claim, _settings: Settings) -> list[Player]:
    return [HeuristicPlayer(name=claim.spec.bots[0].name), FaultyPlayer(claim.spec.bots[1].name)]


def count(db: Database, model: Any, *where: Any) -> int:
    with db.session() as session:
        return int(session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


def counts(db: Database, match_id: int | None = None) -> dict[str, int]:
    """Rows per table (of one match, or all)."""
    out = {}
    for name, model in TABLES.items():
        where = [] if match_id is None else [model.match_id == match_id]
        out[name] = count(db, model, *where)
    return out


def stats_of(db: Database, bot_id: int) -> dict[str, Any]:
    with db.session() as session:
        row = session.get_one(BotStatsRow, bot_id)
        return {c.name: getattr(row, c.name) for c in BotStatsRow.__table__.columns}


def match_row(db: Database, match_id: int) -> MatchRow:
    with db.session() as session:
        return session.get_one(MatchRow, match_id)


def record_matches_worker(
    url: str, match_ids: Sequence[int], worker: str, threads: int, start: Any, out: Any
) -> None:
    """A process recording matches with several threads at once; reports every outcome."""
    db = Database(url)
    settings = load_settings({}, lease_seconds=30)
    results: list[tuple[int, str, str]] = []

    def play(match_id: int) -> tuple[int, str, str]:
        try:
            outcome = run_match_job(
                db, settings, match_id, f"{worker}-{match_id}", make_players=heuristic_v_random
            )
            return match_id, outcome.status.value, outcome.detail
        except Exception:
            return match_id, "error", traceback.format_exc()

    try:
        start.wait(60)
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(play, match_ids))
    finally:
        db.dispose()
        out.put(results)
