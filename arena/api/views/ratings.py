"""``/api/v1/ratings``: the leaderboard and a bot's rating history.

The leaderboard ranks by the whole-history fit (with its 95% interval) when there is one and
by live Elo otherwise; ``provisional`` is the fit's flag, or for a bot not fitted yet, fewer
rated matches than ``ARENA_PROVISIONAL_MATCHES``.
"""

from __future__ import annotations

from flask import Blueprint, Response

from arena import queries
from arena.api.context import arena_context
from arena.api.http import json_response, query_bool, query_int
from arena.api.problems import not_found

__all__ = ["bp"]

bp = Blueprint("ratings", __name__, url_prefix="/api/v1/ratings")


@bp.get("")
def leaderboard() -> Response:
    context = arena_context()
    threshold = context.settings.provisional_matches
    rows = queries.leaderboard(
        context.db,
        limit=query_int("limit", 100, low=1, high=500) or 100,
        include_inactive=query_bool("include_inactive"),
    )
    for row in rows:
        fit = row["rating"]
        row["provisional"] = (
            fit["provisional"] if fit is not None else row["record"]["matches"] < threshold
        )
    return json_response({"items": rows, "provisional_matches": threshold})


@bp.get("/<id:bot_id>/history")
def history(bot_id: int) -> Response:
    rows = queries.rating_history(
        arena_context().db, bot_id, limit=query_int("limit", 200, low=1, high=1000) or 200
    )
    if rows is None:
        raise not_found(f"bot {bot_id}")
    return json_response({"bot_id": bot_id, "items": rows})
