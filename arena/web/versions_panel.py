"""The bot page's versions panel: every version of the bot, and a chart of each version's live
Elo over the bot's recent rated matches, one line per version.

:func:`versions_panel` reads through :mod:`arena.reading.queries.bot_versions`;
:func:`version_chart` is pure: numbers in, an SVG built from numbers and escaped text out.

>>> history = [
...     {"version_id": 2, "number": 2, "before": 1512.0, "after": 1524.0},
...     {"version_id": 1, "number": 1, "before": 1500.0, "after": 1512.0},
... ]
>>> svg = str(version_chart(history))
>>> svg.count("<polyline"), 'data-version="1"' in svg, 'data-version="2"' in svg
(2, True, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from markupsafe import Markup, escape

from arena.db.session import Database
from arena.reading.queries import bot_versions as version_queries

__all__ = ["CHART_MATCHES", "version_chart", "version_colour", "versions_panel"]

#: Rated matches the chart covers (the bot's latest).
CHART_MATCHES: Final = 100

#: How the table says why each version was made (``bot_versions.reason``).
_WHY: Final = {
    "registered": "registered",
    "url_changed": "new URL",
    "secret_changed": "new secret",
    "reported": "new version string",
}

#: Line colours, by version number (cycling): distinct on light and dark backgrounds.
_COLOURS: Final = ("#2f6fde", "#d9480f", "#2b8a3e", "#9c36b5", "#c92a2a", "#0b7285", "#e67700")


def version_colour(number: int) -> str:
    """The colour of version ``number``'s line (and of its swatch in the table)."""
    return _COLOURS[(number - 1) % len(_COLOURS)]


def versions_panel(db: Database, bot_id: int) -> dict[str, Any]:
    """What the panel shows: ``items`` (every version, newest first, each with its ``colour``
    and ``why`` it was made, in words) and ``chart`` (the SVG, or a line saying there is
    nothing to draw yet)."""
    items = [
        {**v, "colour": version_colour(v["number"]), "why": _WHY.get(v["reason"], v["reason"])}
        for v in version_queries.bot_versions(db, bot_id)
    ]
    history = version_queries.version_elo_history(db, bot_id, limit=CHART_MATCHES)
    return {"items": items, "chart": version_chart(history)}


def version_chart(
    history: Sequence[Mapping[str, Any]], width: int = 560, height: int = 160
) -> Markup:
    """One line per version through its live Elo after each of its matches in ``history``
    (newest first, as :func:`~arena.reading.queries.bot_versions.version_elo_history` gives
    it), on one axis of match order, so a new version's line starts where its predecessor's
    Elo stood."""
    if not history:
        return Markup('<p class="muted">No rated matches of any version yet.</p>')
    ordered = list(reversed(history))
    lines: dict[int, list[tuple[int, float]]] = {}
    for i, point in enumerate(ordered, start=1):
        line = lines.setdefault(int(point["number"]), [(i - 1, float(point["before"]))])
        line.append((i, float(point["after"])))
    values = [v for line in lines.values() for _, v in line]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    pad = 6
    step = (width - 2 * pad) / max(1, len(ordered))

    def at(x: int, v: float) -> str:
        return f"{round(pad + x * step, 1)},{round(pad + (hi - v) / span * (height - 2 * pad), 1)}"

    label = (
        f"Live Elo of {len(lines)} version{'s' if len(lines) != 1 else ''} over the last"
        f" {len(ordered)} rated matches, from {lo:.0f} to {hi:.0f}"
    )
    parts = [
        f'<svg class="version-chart" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" style="max-width: 100%; height: auto" role="img" '
        f'aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>"
    ]
    for number, line in sorted(lines.items()):
        colour = version_colour(number)
        points = " ".join(at(x, v) for x, v in line)
        parts.append(
            f'<polyline data-version="{number}" points="{points}" fill="none" '
            f'stroke="{colour}" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">'
            f"<title>version {number}</title></polyline>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
