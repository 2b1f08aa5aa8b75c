"""The outbox read in order: what the tournament and ladder streams (:mod:`arena.live.outbox`)
replay after a ``Last-Event-ID`` and tail as events are committed."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from arena.db.models import EventRow
from arena.db.session import Database

__all__ = ["events_after", "last_event_id"]


def last_event_id(db: Database) -> int:
    """The id of the newest event (0 when there is none)."""
    with db.session() as session:
        return int(session.scalar(select(func.max(EventRow.id))) or 0)


def events_after(
    db: Database, after: int, *, limit: int = 1000, tournament_id: int | None = None
) -> list[dict[str, Any]]:
    """Up to ``limit`` events with ids above ``after``, oldest first (only those about
    ``tournament_id`` when given): each ``{"id", "type", "tournament_id", "match_id",
    "data"}``."""
    query = select(
        EventRow.id, EventRow.type, EventRow.tournament_id, EventRow.match_id, EventRow.data
    ).where(EventRow.id > after)
    if tournament_id is not None:
        query = query.where(EventRow.tournament_id == tournament_id)
    with db.session() as session:
        rows = session.execute(query.order_by(EventRow.id).limit(limit)).all()
    return [
        {
            "id": int(r.id),
            "type": r.type,
            "tournament_id": r.tournament_id,
            "match_id": r.match_id,
            "data": r.data,
        }
        for r in rows
    ]
