"""The ladder page (``/ladder``): each preset's standings (its ladder Elo), its last round and
today's matches, and the ladder's recent matches; while a ladder runs it follows
``/api/v1/ladder/events`` (:mod:`arena.web.live`), or reloads itself without JavaScript.

Registered on the pages' blueprint (:data:`arena.web.pages.bp`) when :mod:`arena.web` is
imported. ``?preset=`` shows one rule-set preset, with a ladder now or not.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from flask import abort, current_app, render_template, request

from arena.ladder import RoundTime, slot_of
from arena.reading.queries import ladder as ladder_queries
from arena.rules.ruleset import RuleSet
from arena.settings import Settings
from arena.web.context import database
from arena.web.live import api_path
from arena.web.pages import bp

__all__ = ["LADDER_REFRESH_SECONDS", "ladder"]

#: How often the ladder page reloads itself without JavaScript while a preset has a ladder.
LADDER_REFRESH_SECONDS: Final = 10
#: Standings rows and recent matches the page lists.
STANDINGS_SHOWN: Final = 100
RECENT_SHOWN: Final = 20


def _settings() -> Settings:
    settings = current_app.extensions["gin_arena"]["settings"]
    if not isinstance(settings, Settings):
        raise TypeError(f'app.extensions["gin_arena"]["settings"] is a {type(settings).__name__}')
    return settings


@bp.get("/ladder")
def ladder() -> str:
    settings = _settings()
    preset = request.args.get("preset") or None
    if preset is not None and preset not in RuleSet.PRESETS:
        abort(400, description=f"preset must be one of {', '.join(RuleSet.PRESETS)}.")
    enabled = settings.ladder_preset_names
    presets = (preset,) if preset is not None else enabled
    interval = settings.ladder_interval_seconds
    when = RoundTime(slot_of(datetime.now(UTC).timestamp(), interval), interval)
    db = database()
    return render_template(
        "web/ladder.html",
        ladders=ladder_queries.ladder_overview(
            db, presets, enabled=enabled, when=when, limit=STANDINGS_SHOWN
        ),
        matches=ladder_queries.recent_ladder_matches(db, presets, limit=RECENT_SHOWN),
        settings=settings,
        enabled=enabled,
        preset=preset,
        presets=RuleSet.PRESETS,
        refresh=LADDER_REFRESH_SECONDS if enabled else None,
        live_events=api_path("ladder/events") if enabled else None,
    )
