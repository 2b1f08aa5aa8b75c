"""The retry schedule of a webhook delivery: when a failed attempt is tried again, and when
the arena gives up. Pure arithmetic on the times it is given (no clock).

A delivery's first attempt is made as soon as the event is committed. After its n-th failed
attempt (n = 1, 2, ...) the next is due ``backoff * 2**(n-1)`` seconds later
(``ARENA_WEBHOOK_BACKOFF_SECONDS``, default 5: then 10, 20, 40 ...). A next attempt that would
come more than ``retry_hours`` after the event (``ARENA_WEBHOOK_RETRY_HOURS``, default 24) is
not made: the delivery has failed.

There is no jitter: every delivery's schedule is anchored at its own event's time, so the
retries of different events are already spread as the events were, and the schedule stays
exact (an owner can tell from the log when the next attempt comes).

With the defaults, a delivery that always fails is tried 15 times, this many seconds after
its event (each attempt made when due):

>>> [round(s) for s in attempt_offsets(5.0, 24.0)]
[0, 5, 15, 35, 75, 155, 315, 635, 1275, 2555, 5115, 10235, 20475, 40955, 81915]
"""

from __future__ import annotations

from datetime import datetime, timedelta

__all__ = ["attempt_offsets", "next_attempt_at", "retry_delay"]

#: Past this many doublings the delay is beyond any window (and beyond a float's range).
_MAX_DOUBLINGS = 40


def retry_delay(failed_attempts: int, backoff_s: float) -> timedelta:
    """How long after its ``failed_attempts``-th failed attempt a delivery is tried again.

    >>> retry_delay(1, 5.0), retry_delay(3, 5.0)
    (datetime.timedelta(seconds=5), datetime.timedelta(seconds=20))
    """
    if failed_attempts < 1:
        raise ValueError(f"failed_attempts counts from 1, not {failed_attempts}")
    return timedelta(seconds=backoff_s * 2.0 ** min(failed_attempts - 1, _MAX_DOUBLINGS))


def next_attempt_at(
    *,
    failed_attempts: int,
    attempted_at: datetime,
    event_at: datetime,
    backoff_s: float,
    retry_hours: float,
) -> datetime | None:
    """When to try a delivery again after its ``failed_attempts``-th failure (made at
    ``attempted_at``), or None: that would be after the window (``retry_hours`` after the
    event at ``event_at``), so the delivery has failed."""
    delay = retry_delay(failed_attempts, backoff_s)
    try:
        left = event_at + timedelta(hours=retry_hours) - attempted_at
    except OverflowError:  # a window past the calendar's end
        left = timedelta.max
    if delay > left:
        return None
    try:
        return attempted_at + delay
    except OverflowError:  # a retry past the calendar's end is never made
        return None


def attempt_offsets(backoff_s: float, retry_hours: float) -> list[float]:
    """Seconds after the event of every attempt of a delivery that always fails, each made
    exactly when due (the schedule the documentation shows)."""
    offsets = [0.0]
    start = datetime(2000, 1, 1)
    while True:
        at = start + timedelta(seconds=offsets[-1])
        due = next_attempt_at(
            failed_attempts=len(offsets),
            attempted_at=at,
            event_at=start,
            backoff_s=backoff_s,
            retry_hours=retry_hours,
        )
        if due is None:
            return offsets
        offsets.append((due - start).total_seconds())
