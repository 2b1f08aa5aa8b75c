"""The ladder's clock: time slots, the UTC day a slot belongs to, and how much of it is over.

A round belongs to a time slot, ``slot = floor(seconds since the epoch / interval)``, which
starts at ``slot * interval``. A slot belongs to the UTC day its start falls in; a day's rounds
are the slots starting in it. Times are plain seconds since the epoch (the caller reads the
clock), so this module never does.

>>> when = RoundTime(slot_of(86_400 * 3 + 700.0, 300.0), 300.0)
>>> when.slot, when.day, when.day_slots
(866, 3, range(864, 1152))
>>> round(when.day_elapsed, 4)
0.0104
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["DAY_SECONDS", "RoundTime", "slot_of"]

#: Seconds in a UTC day (the ladder's budget is per UTC day).
DAY_SECONDS = 86_400


def slot_of(moment_s: float, interval_s: float) -> int:
    """The time slot holding ``moment_s`` (seconds since the epoch), for rounds every
    ``interval_s`` seconds.

    >>> slot_of(599.9, 300.0), slot_of(600.0, 300.0)
    (1, 2)
    """
    if not (math.isfinite(interval_s) and interval_s > 0):
        raise ValueError(f"the interval must be a number of seconds above 0, not {interval_s!r}")
    return math.floor(moment_s / interval_s)


def _day_of_slot(slot: int, interval_s: float) -> int:
    return math.floor(slot * interval_s / DAY_SECONDS)


def _first_slot_of_day(day: int, interval_s: float) -> int:
    """The first slot whose start lies in UTC day ``day`` (exactly, despite float rounding)."""
    slot = math.ceil(day * DAY_SECONDS / interval_s)
    while _day_of_slot(slot, interval_s) >= day and _day_of_slot(slot - 1, interval_s) >= day:
        slot -= 1
    while _day_of_slot(slot, interval_s) < day:
        slot += 1
    return slot


@dataclass(frozen=True, slots=True)
class RoundTime:
    """Where a round's slot stands in its UTC day."""

    slot: int
    interval_s: float

    @property
    def start_s(self) -> float:
        """When the slot starts, seconds since the epoch."""
        return self.slot * self.interval_s

    @property
    def day(self) -> int:
        """The UTC day (days since the epoch) the slot starts in."""
        return _day_of_slot(self.slot, self.interval_s)

    @property
    def day_slots(self) -> range:
        """The slots starting in the same UTC day: the rounds whose matches count toward
        today's budget (a day with no slot start in it is impossible: the range may be one
        slot long when the interval is a day or more)."""
        first = _first_slot_of_day(self.day, self.interval_s)
        stop = _first_slot_of_day(self.day + 1, self.interval_s)
        return range(first, max(stop, self.slot + 1))

    @property
    def day_elapsed(self) -> float:
        """The share of the slot's UTC day that is over when the slot ends, in (0, 1]."""
        day_start = self.day * DAY_SECONDS
        end = (self.slot + 1) * self.interval_s
        return min(1.0, max(end - day_start, 0.0) / DAY_SECONDS) or 1.0 / DAY_SECONDS
