"""Turning a request's rule set (a preset and field overrides) into a :class:`RuleSet`."""

from __future__ import annotations

from collections.abc import Mapping

from arena.api.models import RulesSpec
from arena.api.problems import FieldError, unprocessable
from arena.rules.ruleset import RuleSet, RuleSetError

__all__ = ["CHALLENGE_BOUNDS", "rules_from"]

#: Upper bounds on the fields of a challenge's rules (an owner may not tie up workers).
CHALLENGE_BOUNDS: Mapping[str, int] = {
    "deadline_ms": 5000,
    "target": 1000,
    "best_of": 9,
    "max_actions_per_deal": 400,
}


def rules_from(
    spec: RulesSpec | None, where: str = "rules", bounds: Mapping[str, int] | None = None
) -> RuleSet:
    """The rule set a request asks for (422 naming the field when it is not valid)."""
    if spec is None:
        return RuleSet()
    try:
        rules = RuleSet.preset(spec.preset, **spec.fields)
    except RuleSetError as exc:
        bad = [f"{where}.fields.{name}" for name in spec.fields if name in str(exc)]
        field = bad[0] if bad else f"{where}.fields"
        raise unprocessable(f"{where}: {exc}", [FieldError(field, str(exc))]) from None
    for name, high in (bounds or {}).items():
        value = getattr(rules, name)
        if value > high:
            message = f"{name}={value} is over this endpoint's limit of {high}"
            raise unprocessable(
                f"{where}: {message}", [FieldError(f"{where}.fields.{name}", message)]
            )
    return rules
