"""The health state machine (:mod:`arena.measures.health`), one row per rule: three failed
probes in a row suspend an active bot, two passed in a row resume a suspended one, and nothing
else moves its status; the counters are runs (one of them is 0 after every probe)."""

from __future__ import annotations

import subprocess
import sys
from typing import NamedTuple

import pytest

from arena.measures.health import HealthState, Thresholds, Transition, next_health

RULES = Thresholds(failures_to_suspend=3, successes_to_resume=2)
ACTIVE, SUSPENDED = False, True


class Case(NamedTuple):
    name: str
    suspended: bool
    failed: int
    passed: int
    probe_passed: bool
    after: HealthState
    transition: Transition


CASES = [
    Case("never probed, passes", ACTIVE, 0, 0, True, HealthState(ACTIVE, 0, 1), Transition.NONE),
    Case("never probed, fails", ACTIVE, 0, 0, False, HealthState(ACTIVE, 1, 0), Transition.NONE),
    Case("active keeps passing", ACTIVE, 0, 7, True, HealthState(ACTIVE, 0, 8), Transition.NONE),
    Case("one failure clears the passes", ACTIVE, 0, 7, False, HealthState(ACTIVE, 1, 0),
         Transition.NONE),
    Case("second failure in a row is not enough", ACTIVE, 1, 0, False,
         HealthState(ACTIVE, 2, 0), Transition.NONE),
    Case("third failure in a row suspends", ACTIVE, 2, 0, False, HealthState(SUSPENDED, 3, 0),
         Transition.SUSPENDED),
    Case("a pass between failures starts the count again", ACTIVE, 2, 0, True,
         HealthState(ACTIVE, 0, 1), Transition.NONE),
    Case("active past the threshold (thresholds lowered) suspends on its next failure", ACTIVE,
         5, 0, False, HealthState(SUSPENDED, 6, 0), Transition.SUSPENDED),
    Case("suspended keeps failing: stays suspended, failures keep counting", SUSPENDED, 3, 0,
         False, HealthState(SUSPENDED, 4, 0), Transition.NONE),
    Case("suspended, first pass is not enough", SUSPENDED, 4, 0, True,
         HealthState(SUSPENDED, 0, 1), Transition.NONE),
    Case("suspended, second pass in a row resumes", SUSPENDED, 0, 1, True,
         HealthState(ACTIVE, 0, 2), Transition.RESUMED),
    Case("suspended, a failure after one pass starts over", SUSPENDED, 0, 1, False,
         HealthState(SUSPENDED, 1, 0), Transition.NONE),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_health_rule(case: Case) -> None:
    step = next_health(
        HealthState(case.suspended, case.failed, case.passed), case.probe_passed, RULES
    )
    assert step.state == case.after
    assert step.transition is case.transition


def test_three_failures_then_two_passes_is_suspended_then_resumed() -> None:
    state, transitions = HealthState(), []
    for passed in (False, False, False, True, True):
        step = next_health(state, passed, RULES)
        state = step.state
        transitions.append(step.transition)
    assert transitions == [Transition.NONE] * 2 + [Transition.SUSPENDED, Transition.NONE,
                           Transition.RESUMED]  # fmt: skip
    assert state == HealthState(ACTIVE, 0, 2)


@pytest.mark.parametrize(("failures", "successes"), [(1, 1), (1, 5), (5, 1)])
def test_thresholds_are_the_settings_numbers(failures: int, successes: int) -> None:
    rules = Thresholds(failures, successes)
    state = HealthState()
    for n in range(1, failures + 1):
        step = next_health(state, False, rules)
        state = step.state
        assert (step.transition is Transition.SUSPENDED) == (n == failures)
    for n in range(1, successes + 1):
        step = next_health(state, True, rules)
        state = step.state
        assert (step.transition is Transition.RESUMED) == (n == successes)
    assert not state.suspended


@pytest.mark.parametrize(("failures", "successes"), [(0, 2), (3, 0), (-1, -1)])
def test_a_threshold_below_one_is_refused(failures: int, successes: int) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Thresholds(failures, successes)


def test_negative_counters_are_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        HealthState(False, -1, 0)


def test_the_state_machine_loads_only_the_standard_library() -> None:
    code = (
        "import sys; import arena.measures.health; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('flask', 'sqlalchemy', 'celery', 'redis', 'socket', 'http', 'msgspec')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
