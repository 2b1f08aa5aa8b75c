"""Building a format from its name and options, as stored in a database or sent by a client.

>>> make_format("swiss", rounds=5)
Swiss(rounds=5, duplicate=False)
>>> make_format("double_round_robin", duplicate=True)
RoundRobin(double=True, duplicate=True)
>>> fmt = make_format("single_elimination", third_place=True)
>>> make_format(fmt.name, **fmt.options()) == fmt
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields
from typing import Any

from arena.tournaments.double_elimination import DoubleElimination
from arena.tournaments.gauntlet import Gauntlet
from arena.tournaments.model import Format, FormatError
from arena.tournaments.round_robin import RoundRobin
from arena.tournaments.single_elimination import SingleElimination
from arena.tournaments.swiss import Swiss

__all__ = ["FORMAT_NAMES", "make_format"]

_FACTORIES: Mapping[str, tuple[type[Any], dict[str, Any]]] = {
    "round_robin": (RoundRobin, {}),
    "double_round_robin": (RoundRobin, {"double": True}),
    "single_elimination": (SingleElimination, {}),
    "double_elimination": (DoubleElimination, {}),
    "swiss": (Swiss, {}),
    "gauntlet": (Gauntlet, {}),
}

#: The names :func:`make_format` accepts.
FORMAT_NAMES: tuple[str, ...] = tuple(_FACTORIES)


def make_format(name: str, **options: Any) -> Format:
    """The format called ``name`` with these options; :class:`FormatError` (a ValueError) for
    an unknown name, an unknown or missing option, or a bad value."""
    try:
        cls, fixed = _FACTORIES[name]
    except (KeyError, TypeError):
        known = ", ".join(FORMAT_NAMES)
        raise FormatError(f"unknown tournament format {name!r} (known: {known})") from None
    allowed = [f.name for f in fields(cls) if f.name not in fixed]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise FormatError(
            f"{name}: unknown option(s) {', '.join(unknown)} (allowed: {', '.join(allowed)})"
        )
    required = [f.name for f in fields(cls) if _has_no_default(f) and f.name not in options]
    if required:
        raise FormatError(f"{name}: missing required option(s) {', '.join(required)}")
    build: Callable[..., Format] = cls
    return build(**fixed, **options)


def _has_no_default(f: Field[Any]) -> bool:
    return f.default is MISSING and f.default_factory is MISSING
