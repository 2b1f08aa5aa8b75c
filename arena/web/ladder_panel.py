"""The bot page's ladder panel: the bot's place on each preset's ladder it has played on
(:func:`arena.reading.queries.ladder.bot_places`)."""

from __future__ import annotations

from typing import Any

from arena.db.session import Database
from arena.reading.queries import ladder as ladder_queries

__all__ = ["ladder_panel"]


def ladder_panel(db: Database, bot_id: int) -> list[dict[str, Any]]:
    """What ``web/_ladder.html`` shows for ``bot_id``: one place per preset, by preset."""
    return ladder_queries.bot_places(db, bot_id)
