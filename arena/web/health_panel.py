"""The bot page's health panel: the bot's health state and its latest probes
(:func:`arena.reading.queries.health.bot_health`, with the app's health settings)."""

from __future__ import annotations

from typing import Any, Final

from arena.db.session import Database
from arena.reading.queries import health as health_queries
from arena.web.context import settings

__all__ = ["PANEL_PROBES", "health_panel"]

#: Probes the panel lists (the bot's latest).
PANEL_PROBES: Final = 10


def health_panel(db: Database, bot_id: int) -> dict[str, Any]:
    """What ``web/_health.html`` shows for ``bot_id``."""
    return health_queries.bot_health(db, settings(), bot_id, limit=PANEL_PROBES)
