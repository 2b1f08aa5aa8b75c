"""Options several commands share, each checked when the command starts, and the one error a
user can cause: :class:`UsageError` (printed as one line, exit status 2).

``--rules``/``--rule`` (a rule set), ``--format``/``--option``/``--seed`` (a tournament format),
``--wait`` (for a bot still starting), ``--port`` and ``--secret`` values.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from arena.rules.ruleset import RuleSet, RuleSetError

if TYPE_CHECKING:
    #: What ``add_subparsers`` returns: each command group's ``register`` adds its commands.
    Subcommands: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "START_WAIT_S",
    "UsageError",
    "add_format_options",
    "add_rules_options",
    "add_wait_option",
    "format_options",
    "port_option",
    "rule_set",
    "secret_option",
    "wait_option",
]

#: How long ``match`` and ``bot check`` wait for a URL that refuses connections to start
#: listening (a bot started with ``&`` on the line before may still be starting).
START_WAIT_S = 5.0


class UsageError(Exception):
    """A user error: printed as one line, exit status 2."""


def wait_option(value: float) -> float:
    """``--wait S``: 0 to 600 seconds."""
    if not 0 <= value <= 600:  # also refuses nan
        raise UsageError(f"--wait must be 0 to 600 seconds, not {value:g}")
    return value


def port_option(value: int, option: str = "--port") -> int:
    """A port to listen on: 0 to 65535 (0: any free port)."""
    if not 0 <= value <= 65535:
        raise UsageError(f"{option} must be 0 to 65535 (0: any free port), not {value}")
    return value


def secret_option(value: str | None, option: str = "--secret") -> str | None:
    """A ``whsec_`` signing secret given on the command line, checked now (None passes)."""
    if value is None:
        return None
    from arena.protocol.signing import SecretError, parse_secret

    try:
        if not value.startswith("whsec_"):
            raise SecretError("a secret must start with 'whsec_' (then base64 of 24 to 64 bytes)")
        parse_secret(value)
    except SecretError as exc:
        raise UsageError(f"{option}: {exc}") from None
    return value


def rule_set(args: argparse.Namespace) -> RuleSet:
    """The rule set of ``--rules`` with each ``--rule FIELD=VALUE`` applied."""
    overrides = {}
    for item in getattr(args, "rule", None) or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--rule expects FIELD=VALUE, got {item!r}")
        try:
            overrides[key] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[key] = raw
    try:
        return RuleSet.preset(args.rules, **overrides)
    except RuleSetError as exc:
        raise UsageError(str(exc)) from None


def add_rules_options(p: argparse.ArgumentParser) -> None:
    """``--rules PRESET`` and ``--rule FIELD=VALUE`` (read with :func:`rule_set`)."""
    p.add_argument(
        "--rules",
        default="standard",
        choices=RuleSet.PRESETS,
        help="rule set preset (default: standard)",
    )
    p.add_argument(
        "--rule",
        action="append",
        metavar="FIELD=VALUE",
        help="override one rule set field, e.g. --rule gin_bonus=20 (repeatable)",
    )


def format_options(items: Sequence[str] | None) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs; values are JSON when they parse (3, true), else text."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--option expects KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def add_format_options(p: argparse.ArgumentParser, default: str) -> None:
    """``--format``, ``--option KEY=VALUE`` (read with :func:`format_options`) and ``--seed``."""
    from arena.tournaments import FORMAT_NAMES

    p.add_argument("--format", default=default, choices=FORMAT_NAMES, help=f"default {default}")
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="format option, e.g. --option rounds=5, --option duplicate=true (repeatable)",
    )
    p.add_argument("--seed", type=int, help="tournament seed (default: random)")


def add_wait_option(p: argparse.ArgumentParser) -> None:
    """``--wait S`` of ``match`` and ``bot check`` (checked by :func:`wait_option`)."""
    p.add_argument(
        "--wait",
        type=float,
        default=START_WAIT_S,
        metavar="S",
        help="wait up to S seconds for a URL that refuses connections to start listening"
        f" (default {START_WAIT_S:g}; 0: do not wait)",
    )
