"""``/api/v1/ratings``: the leaderboard and a bot's rating history.

The leaderboard ranks the rated bots by the whole-history fit (with its 95% interval) when
there is one and by live Elo otherwise (ties: more rated matches, then lower id); bots without
a rated match are listed apart, unranked, in ``unrated``. ``provisional`` is the fit's flag,
or for a bot not fitted yet, fewer rated matches than ``ARENA_PROVISIONAL_MATCHES``.
"""

from __future__ import annotations

from flask import Blueprint, Response

from arena.api.context import arena_context
from arena.api.http import json_response, query_bool, query_int
from arena.api.read_cache import public_read
from arena.reading.queries import bots as bot_queries

__all__ = ["bp"]

bp = Blueprint("ratings", __name__, url_prefix="/api/v1/ratings")


@bp.get("")
@public_read
def leaderboard() -> Response:
    context = arena_context()
    threshold = context.settings.provisional_matches
    limit = query_int("limit", 100, low=1, high=500) or 100
    include_inactive = query_bool("include_inactive")
    rows, unrated = bot_queries.ratings_board(
        context.db, limit=limit, include_inactive=include_inactive
    )
    for row in rows:
        fit = row["rating"]
        row["provisional"] = (
            fit["provisional"] if fit is not None else row["record"]["matches"] < threshold
        )
    for row in unrated:
        row["provisional"] = True
    return json_response({"items": rows, "unrated": unrated, "provisional_matches": threshold})


@bp.get("/<id('bot'):bot_id>/history")
@public_read
def history(bot_id: int) -> Response:
    rows = bot_queries.rating_history(
        arena_context().db, bot_id, limit=query_int("limit", 200, low=1, high=1000) or 200
    )
    return json_response({"bot_id": bot_id, "items": rows})
