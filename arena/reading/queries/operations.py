"""What the operations endpoints read: whether the database answers, and the counts that
Prometheus scrapes (:mod:`arena.api.metrics`), a few aggregate statements per scrape."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select, text

from arena.db.models import BotRow, BotStatsRow, MatchRow
from arena.db.session import Database

__all__ = ["metric_counts", "ping"]


def ping(db: Database) -> None:
    """Raise unless the database answers a ``SELECT 1`` (on a connection of its own)."""
    with db.engine.connect() as connection:
        connection.execute(text("SELECT 1"))


def metric_counts(db: Database) -> dict[str, Any]:
    """Matches and bots by status (only the statuses present), and per bot with statistics, by
    id: its name, faults, forfeits and latency histogram (:mod:`arena.measures.stats` buckets).
    """
    with db.session() as session:
        matches = session.execute(
            select(MatchRow.status, func.count()).group_by(MatchRow.status)
        ).all()
        bots = session.execute(select(BotRow.status, func.count()).group_by(BotRow.status)).all()
        per_bot = session.execute(
            select(
                BotRow.name,
                BotStatsRow.faults,
                BotStatsRow.forfeits,
                BotStatsRow.latency_histogram,
            )
            .join(BotStatsRow, BotStatsRow.bot_id == BotRow.id)
            .order_by(BotRow.id)
        ).all()
    return {
        "matches": {status.value: n for status, n in matches},
        "bots": {status.value: n for status, n in bots},
        "per_bot": [
            {
                "name": name,
                "faults": faults,
                "forfeits": forfeits,
                "latency_histogram": histogram or [],
            }
            for name, faults, forfeits, histogram in per_bot
        ],
    }
