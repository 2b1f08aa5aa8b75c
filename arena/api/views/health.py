"""``/api/v1/bots/{id}/health``: a bot's health (status, probes failed and passed in a row,
the thresholds) and its probe history, newest first (:mod:`arena.reading.queries.health`).

Public, like the bot itself: a probe's reason never holds the bot's URL.
"""

from __future__ import annotations

from flask import Blueprint, Response

from arena.api.context import arena_context
from arena.api.http import json_response, query_int
from arena.api.problems import FieldError, unprocessable
from arena.reading.queries import health as health_queries

__all__ = ["bp"]

bp = Blueprint("health", __name__, url_prefix="/api/v1/bots")


@bp.get("/<id('bot'):bot_id>/health")
def read(bot_id: int) -> Response:
    context = arena_context()
    limit = query_int("limit", 50, low=1, high=200) or 50
    before = query_int("before", None, low=1)
    try:
        health = health_queries.bot_health(
            context.db, context.settings, bot_id, before=before, limit=limit
        )
    except health_queries.UnknownCursorError as exc:
        field = FieldError("query.before", "not a probe of this bot")
        raise unprocessable(str(exc), [field]) from None
    return json_response(health)
