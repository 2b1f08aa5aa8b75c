"""``/api/v1/ladder``: the ladder's policy and, for each preset, its last round, its matches in
flight, the matches of today's rounds per bot and its standings (the preset's ladder Elo).

Without ``preset`` the answer covers every preset with a ladder now (``ARENA_LADDER_PRESETS``);
``?preset=`` names one rule-set preset, with a ladder now or not (a preset whose ladder was
turned off keeps its standings). "Today" is the UTC day of the current time slot.
"""

from __future__ import annotations

from datetime import UTC, datetime

from flask import Blueprint, Response

from arena.api.context import arena_context
from arena.api.http import json_response, query_choice, query_int
from arena.api.read_cache import public_read
from arena.ladder import DAY_SECONDS, RoundTime, slot_of
from arena.reading.queries import ladder as ladder_queries
from arena.rules.ruleset import RuleSet
from arena.services.ladder import policy_document

__all__ = ["bp"]

bp = Blueprint("ladder", __name__, url_prefix="/api/v1/ladder")


@bp.get("")
@public_read
def overview() -> Response:
    context = arena_context()
    settings = context.settings
    preset = query_choice("preset", RuleSet.PRESETS)
    limit = query_int("limit", 100, low=1, high=500) or 100
    interval = settings.ladder_interval_seconds
    when = RoundTime(slot_of(datetime.now(UTC).timestamp(), interval), interval)
    enabled = settings.ladder_preset_names
    ladders = ladder_queries.ladder_overview(
        context.db,
        (preset,) if preset is not None else enabled,
        enabled=enabled,
        when=when,
        limit=limit,
    )
    day = datetime.fromtimestamp(when.day * DAY_SECONDS, UTC).date().isoformat()
    return json_response(
        {"policy": policy_document(settings), "day": day, "slot": when.slot, "ladders": ladders}
    )
