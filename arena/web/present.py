"""Presentation helpers for the page templates: cards, numbers, times, the sparkline and bars.

Pure functions from query results to strings or small dicts. Anything that returns markup
builds it from numbers and escaped text only, so a name can never inject HTML.

>>> str(card("Td"))
'<span class="card red" title="Td">10<span class="suit">♦</span></span>'
>>> pct(0.1234), pct(None), ms(0.4213), ms(1523.0)
('12.3%', '—', '0.42 ms', '1.52 s')
>>> rating_bar({"rating": 1500.0, "ci_low": 1400.0, "ci_high": 1600.0}, (1300.0, 1700.0))
{'left': 25.0, 'width': 50.0, 'point': 50.0}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup, escape

__all__ = [
    "HELPERS",
    "card",
    "cards",
    "format_name",
    "ms",
    "number",
    "outcome_label",
    "pct",
    "rating_bar",
    "rating_scale",
    "rules_summary",
    "section_title",
    "sparkline",
    "tiebreak_label",
    "when",
]

_SUITS = {"c": ("♣", "black"), "d": ("♦", "red"), "h": ("♥", "red"), "s": ("♠", "black")}
_RANKS = {"T": "10"}

_OUTCOMES = {
    "knock": "Knock",
    "undercut": "Undercut",
    "gin": "Gin",
    "big_gin": "Big gin",
    "dead": "Dead hand",
    "tie": "Tie",
}

_FORMATS = {
    "round_robin": "Round robin",
    "double_round_robin": "Double round robin",
    "single_elimination": "Single elimination",
    "double_elimination": "Double elimination",
    "swiss": "Swiss",
    "gauntlet": "Gauntlet",
}

_SECTIONS = {
    "main": "Bracket",
    "third_place": "Third place",
    "winners": "Winners bracket",
    "losers": "Losers bracket",
    "final": "Grand final",
    "rounds": "Rounds",
    "gauntlet": "Gauntlet",
}


_TIEBREAKS = {
    "buchholz": "Buchholz",
    "sonneborn_berger": "SB",
    "head_to_head": "H2H",
    "game_difference": "Games ±",
    "point_difference": "Points ±",
}


def tiebreak_label(name: str) -> str:
    """A short column heading for a tie-break criterion (the full name goes in its title)."""
    return _TIEBREAKS.get(name, name.replace("_", " "))


def card(text: str | None) -> Markup:
    """One card as a small face: rank and suit symbol, red or black."""
    if not text or len(text) != 2 or text[1] not in _SUITS:
        return Markup('<span class="card empty">—</span>')
    symbol, colour = _SUITS[text[1]]
    rank = _RANKS.get(text[0], text[0])
    return Markup(
        f'<span class="card {colour}" title="{escape(text)}">{escape(rank)}'
        f'<span class="suit">{symbol}</span></span>'
    )


def cards(texts: Iterable[str] | str) -> Markup:
    """Several cards (a list, or the space-separated text form)."""
    items = texts.split() if isinstance(texts, str) else list(texts)
    return Markup("").join(card(t) for t in items)


def pct(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage; a dash when there is no value."""
    return "—" if value is None else f"{value * 100:.{digits}f}%"


def ms(value: float | None) -> str:
    """Milliseconds, readable at any scale."""
    if value is None:
        return "—"
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms"


def when(iso: str | None) -> Markup:
    """An ISO timestamp as a ``<time>`` element showing UTC minutes."""
    if not iso:
        return Markup('<span class="muted">—</span>')
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return Markup(escape(iso))
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    shown = moment.strftime("%Y-%m-%d %H:%M")
    return Markup(f'<time datetime="{escape(iso)}">{shown}</time>')


def number(value: float | int | None) -> str:
    """A score or tie-break: whole numbers without a decimal point, others to two places.

    >>> number(3.0), number(2.5), number(1.0 / 3)
    ('3', '2.5', '0.33')
    """
    if value is None:
        return "—"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0")


def outcome_label(outcome: str | None) -> str:
    return _OUTCOMES.get(outcome or "", outcome or "—")


def format_name(name: str) -> str:
    return _FORMATS.get(name, name.replace("_", " ").capitalize())


def section_title(name: str) -> str:
    return _SECTIONS.get(name, name.replace("_", " ").capitalize())


def rules_summary(rules: Mapping[str, Any]) -> str:
    """The rules in one line: target, match length, knock rule, notable variations."""
    parts = [f"to {rules.get('target', '?')}", f"best of {rules.get('best_of', '?')}"]
    if rules.get("upcard_sets_knock_limit"):
        parts.append("Oklahoma knock limit")
    elif rules.get("knock_limit") == 0:
        parts.append("gin only")
    else:
        parts.append(f"knock at {rules.get('knock_limit', '?')} or less")
    if rules.get("spade_upcard_doubles"):
        parts.append("spades double")
    if rules.get("big_gin_bonus") is None:
        parts.append("no big gin")
    return " · ".join(parts)


def rating_scale(rows: Sequence[Mapping[str, Any]]) -> tuple[float, float]:
    """The rating range that holds every shown interval (and Elo), padded a little."""
    values: list[float] = []
    for row in rows:
        fit = row.get("rating")
        if fit:
            values += [fit["ci_low"], fit["ci_high"]]
    if not values:
        return (1400.0, 1600.0)
    lo, hi = min(values), max(values)
    pad = max(10.0, (hi - lo) * 0.05)
    return (lo - pad, hi + pad)


def rating_bar(fit: Mapping[str, Any] | None, scale: tuple[float, float]) -> dict[str, float]:
    """Where a rating's 95% interval and point sit on the scale, in percent of its width."""
    if not fit:
        return {}
    lo, hi = scale
    span = (hi - lo) or 1.0

    def at(value: float) -> float:
        return round(min(100.0, max(0.0, (value - lo) / span * 100)), 2)

    left = at(fit["ci_low"])
    return {"left": left, "width": round(at(fit["ci_high"]) - left, 2), "point": at(fit["rating"])}


def sparkline(history: Sequence[Mapping[str, Any]], width: int = 260, height: int = 56) -> Markup:
    """A small SVG line of a bot's Elo over its matches (``history`` newest first)."""
    if not history:
        return Markup('<span class="muted">No rated matches yet.</span>')
    ordered = list(reversed(history))
    values = [float(ordered[0]["before"])] + [float(h["after"]) for h in ordered]
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    pad = 4
    step = (width - 2 * pad) / max(1, len(values) - 1)

    def point(i: int, v: float) -> tuple[float, float]:
        return (round(pad + i * step, 1), round(pad + (hi - v) / span * (height - 2 * pad), 1))

    pts = [point(i, v) for i, v in enumerate(values)]
    line = " ".join(f"{x},{y}" for x, y in pts)
    last_x, last_y = pts[-1]
    label = f"Elo from {values[0]:.0f} to {values[-1]:.0f} over {len(values) - 1} rated matches"
    return Markup(
        f'<svg class="sparkline" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" role="img" aria-label="{escape(label)}">'
        f"<title>{escape(label)}</title>"
        f'<polyline points="{line}" fill="none" stroke="currentColor" stroke-width="1.8" '
        f'stroke-linejoin="round" stroke-linecap="round"/>'
        f'<circle cx="{last_x}" cy="{last_y}" r="3"/>'
        f"</svg>"
    )


#: What every page template may call.
HELPERS: dict[str, Any] = {
    "card": card,
    "cards": cards,
    "pct": pct,
    "ms": ms,
    "number": number,
    "when": when,
    "outcome_label": outcome_label,
    "format_name": format_name,
    "section_title": section_title,
    "tiebreak_label": tiebreak_label,
    "rules_summary": rules_summary,
    "rating_bar": rating_bar,
    "sparkline": sparkline,
}
