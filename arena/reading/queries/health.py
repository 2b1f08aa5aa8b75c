"""A bot's health: its status, its probes failed and passed in a row, and its probe history.

What :mod:`arena.services.health` wrote, as JSON-ready dicts: :func:`bot_health` is
``GET /api/v1/bots/{id}/health`` and the health part of the bot page. The history is newest
first (by probe time, then id: the order of the ``(bot_id, probed_at)`` index) and paged by
keyset: ``before`` is the last probe of the previous page (its ``next_before``), so pages stay
stable while probes are added. A probe's ``reason`` never holds the bot's URL
(:mod:`arena.bots.health`), so all of it is public.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, or_, select

from arena.db.models import BotRow, HealthProbeRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries._rows import iso
from arena.settings import Settings

__all__ = ["UnknownCursorError", "bot_health", "health_policy"]


class UnknownCursorError(ValueError):
    """``before`` is not one of the bot's probes."""

    def __init__(self, bot_id: int, before: int) -> None:
        super().__init__(f"probe {before} is not a probe of bot {bot_id}: pass a next_before")
        self.before = before


def _probe(row: HealthProbeRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "probed_at": iso(row.probed_at),
        "passed": row.passed,
        "latency_ms": None if row.latency_ms is None else round(row.latency_ms, 3),
        "reason": row.reason,
        "trigger": row.trigger,
        "status_after": row.status_after.value,
    }


def health_policy(settings: Settings) -> dict[str, Any]:
    """How often bots are probed, within what time, and the thresholds of the state machine."""
    return {
        "interval_seconds": settings.health_interval_seconds,
        "timeout_seconds": settings.health_timeout_seconds,
        "failures_to_suspend": settings.health_failures_to_suspend,
        "successes_to_resume": settings.health_successes_to_resume,
    }


def bot_health(
    db: Database,
    settings: Settings,
    bot_id: int,
    *,
    before: int | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    """A bot's health and a page of its probes, newest first (``next_before``: the cursor of
    the next page, or None). :class:`~arena.errors.NotFoundError` if there is no such bot,
    :class:`UnknownCursorError` if ``before`` is not one of its probes.

    ``last_probe`` is the newest probe whatever the page (None: never probed); ``policy`` is
    :func:`health_policy` of ``settings``.
    """
    newest_first = (HealthProbeRow.probed_at.desc(), HealthProbeRow.id.desc())
    with db.session() as session:
        bot = session.get(BotRow, bot_id)
        if bot is None:
            raise NotFoundError("bot", bot_id)
        query = select(HealthProbeRow).where(HealthProbeRow.bot_id == bot_id)
        newest = session.scalars(query.order_by(*newest_first).limit(1)).first()
        if before is not None:
            cursor = session.get(HealthProbeRow, before)
            if cursor is None or cursor.bot_id != bot_id:
                raise UnknownCursorError(bot_id, before)
            query = query.where(
                or_(
                    HealthProbeRow.probed_at < cursor.probed_at,
                    and_(
                        HealthProbeRow.probed_at == cursor.probed_at,
                        HealthProbeRow.id < cursor.id,
                    ),
                )
            )
        rows = list(session.scalars(query.order_by(*newest_first).limit(limit + 1)))
        more = len(rows) > limit
        rows = rows[:limit]
        return {
            "bot": {"id": bot.id, "name": bot.name},
            "status": bot.status.value,
            "failed_probes": bot.failed_probes,
            "passed_probes": bot.passed_probes,
            "last_probed_at": iso(bot.last_probed_at),
            "last_probe": None if newest is None else _probe(newest),
            "items": [_probe(r) for r in rows],
            "next_before": rows[-1].id if more and rows else None,
            "policy": health_policy(settings),
        }
