"""What the query modules share: timestamps as ISO text and bot names by id."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.db.models import BotRow

__all__ = ["iso", "names_by_id"]


def iso(value: datetime | None) -> str | None:
    """An RFC 3339 timestamp, or None.

    >>> from datetime import UTC
    >>> iso(datetime(2024, 5, 1, 12, 30, tzinfo=UTC))
    '2024-05-01T12:30:00+00:00'
    """
    return None if value is None else value.isoformat()


def names_by_id(session: Session, ids: Iterable[int]) -> dict[int, str]:
    """The names of the bots ``ids`` (a bot that does not exist is left out)."""
    wanted = set(ids)
    if not wanted:
        return {}
    rows = session.execute(select(BotRow.id, BotRow.name).where(BotRow.id.in_(wanted)))
    # Not dict(rows): a Result has keys(), so dict() would read it as a mapping.
    return {bot_id: name for bot_id, name in rows}  # noqa: C416
