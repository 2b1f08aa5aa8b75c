"""The health state machine: a bot's probe counters and suspension after one more probe.

A bot that is probed (active or suspended; an inactive bot is not probed at all) carries two
counters, the probes it failed in a row and the probes it passed in a row; one of them is
always 0 once it has been probed. A failed probe adds one to the failures and clears the
passes; a passed probe does the opposite. An active bot whose failures reach
``failures_to_suspend`` is suspended; a suspended bot whose passes reach
``successes_to_resume`` is active again. Nothing else moves the state: a suspended bot that
keeps failing stays suspended (its failures keep counting), an active bot that keeps passing
stays active.

Pure: no clock, no database; :mod:`arena.services.health` stores what :func:`next_health`
returns.

>>> rules = Thresholds(failures_to_suspend=3, successes_to_resume=2)
>>> state = HealthState()
>>> for passed in (False, False, False):
...     step = next_health(state, passed, rules)
...     state = step.state
>>> step.transition, state
(<Transition.SUSPENDED: 'suspended'>, HealthState(suspended=True, failed=3, passed=0))
>>> next_health(next_health(state, True, rules).state, True, rules).transition
<Transition.RESUMED: 'resumed'>
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["HealthState", "HealthStep", "Thresholds", "Transition", "next_health"]


class Transition(enum.StrEnum):
    """What one probe did to the bot's status."""

    NONE = "none"
    SUSPENDED = "suspended"
    RESUMED = "resumed"


@dataclass(frozen=True, slots=True)
class Thresholds:
    """How many failed probes in a row suspend a bot, and passed probes in a row resume it
    (``ARENA_HEALTH_FAILURES_TO_SUSPEND``, ``ARENA_HEALTH_SUCCESSES_TO_RESUME``)."""

    failures_to_suspend: int = 3
    successes_to_resume: int = 2

    def __post_init__(self) -> None:
        if self.failures_to_suspend < 1 or self.successes_to_resume < 1:
            raise ValueError(
                "health thresholds must be at least 1"
                f" (failures_to_suspend={self.failures_to_suspend},"
                f" successes_to_resume={self.successes_to_resume})"
            )


@dataclass(frozen=True, slots=True)
class HealthState:
    """A probed bot's health: suspended or not, and its probes failed and passed in a row."""

    suspended: bool = False
    failed: int = 0
    passed: int = 0

    def __post_init__(self) -> None:
        if self.failed < 0 or self.passed < 0:
            raise ValueError(f"probe counters cannot be negative ({self.failed}, {self.passed})")


@dataclass(frozen=True, slots=True)
class HealthStep:
    """The state after one probe, and the transition it made."""

    state: HealthState
    transition: Transition


def next_health(state: HealthState, passed: bool, thresholds: Thresholds) -> HealthStep:
    """The bot's health after one more probe that ``passed`` or not (module docstring)."""
    if passed:
        after = HealthState(state.suspended, 0, state.passed + 1)
        if state.suspended and after.passed >= thresholds.successes_to_resume:
            return HealthStep(HealthState(False, 0, after.passed), Transition.RESUMED)
        return HealthStep(after, Transition.NONE)
    after = HealthState(state.suspended, state.failed + 1, 0)
    if not state.suspended and after.failed >= thresholds.failures_to_suspend:
        return HealthStep(HealthState(True, after.failed, 0), Transition.SUSPENDED)
    return HealthStep(after, Transition.NONE)
