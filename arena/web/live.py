"""What the live pages need from the server: the address of each event stream, and the data a
running match's viewer starts from.

A page that follows something as it happens names its stream on ``<body data-live-events>``
(tournaments, the ladder and the leaderboard; ``static/live.js`` refetches the page's
``data-live`` regions on each event) or, for a match, in the viewer's ``live-data`` (``static/
replay.js`` draws each ``step`` event with the code that draws a stored replay). Without
JavaScript the pages stay as the server rendered them, and the live ones still reload
themselves (a ``<noscript>`` refresh).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import request

__all__ = ["api_path", "live_viewer"]


def api_path(path: str) -> str:
    """The API address ``/api/v1/<path>`` as the browser must ask for it (under any prefix the
    site is mounted at)."""
    return f"{request.script_root}/api/v1/{path}"


def live_viewer(
    match_id: int, names: Mapping[str, str | None], versions: Mapping[str, str | None]
) -> dict[str, Any]:
    """The viewer's starting data for a pending or running match: no deals yet, and the stream
    that brings them (``GET /api/v1/matches/{id}/events``, the public view)."""
    return {
        "names": {"a": names.get("a") or "seat a", "b": names.get("b") or "seat b"},
        "versions": dict(versions),
        "deals": [],
        "live": {"events": api_path(f"matches/{match_id}/events")},
        "error": None,
    }
