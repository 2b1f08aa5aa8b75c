"""The ladder's clock (arena.ladder.clock): a slot belongs to the UTC day its start falls in,
a day's slots are exactly those starting in it, and the share of the day over grows to 1."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.ladder import DAY_SECONDS, RoundTime, slot_of

intervals = st.one_of(
    st.sampled_from([1.0, 7.0, 20.0, 300.0, 3600.0, 86_400.0, 200_000.0]),
    st.floats(0.5, 100_000.0),
)


@given(intervals, st.integers(0, 10**7))
def test_a_days_slots_are_those_starting_in_it(interval: float, slot: int) -> None:
    when = RoundTime(slot, interval)
    days = when.day_slots
    assert slot in days
    assert when.day == math.floor(slot * interval / DAY_SECONDS)
    for other in (days.start, days.stop - 1):
        assert RoundTime(other, interval).day == when.day
    assert RoundTime(days.start - 1, interval).day < when.day
    assert RoundTime(days.stop, interval).day > when.day


@given(intervals, st.integers(0, 10**7))
def test_the_share_of_the_day_over_is_in_zero_one_and_grows(interval: float, slot: int) -> None:
    when = RoundTime(slot, interval)
    assert 0.0 < when.day_elapsed <= 1.0
    following = RoundTime(slot + 1, interval)
    if following.day == when.day:
        assert following.day_elapsed > when.day_elapsed
    assert RoundTime(when.day_slots.stop - 1, interval).day_elapsed == 1.0


@given(st.floats(0, 2e9), intervals)
def test_a_moment_is_in_its_slot(moment: float, interval: float) -> None:
    slot = slot_of(moment, interval)
    assert slot * interval <= moment + 1e-6 * interval
    assert moment < (slot + 1) * interval + 1e-6 * interval


@pytest.mark.parametrize("interval", [0.0, -5.0, math.nan, math.inf])
def test_an_interval_that_is_not_a_positive_number_is_refused(interval: float) -> None:
    with pytest.raises(ValueError, match="interval"):
        slot_of(100.0, interval)
