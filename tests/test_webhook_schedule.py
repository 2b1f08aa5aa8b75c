"""The retry schedule and the body of a delivery, as pure functions of what they are given:
the n-th failure waits ``backoff * 2**(n-1)``, nothing is tried past the window after the
event, and the body is the same bytes on every attempt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from arena.events import EventType
from arena.services.webhook_endpoints import UnknownEventTypeError, parse_event_types
from arena.webhooks.payload import BodyError, decode_body, encode_body
from arena.webhooks.schedule import attempt_offsets, next_attempt_at, retry_delay

EVENT_AT = datetime(2030, 1, 1, tzinfo=UTC)

#: (failed attempts, the failure's time after the event in s, backoff s, window h, next in s)
SCHEDULE = [
    ("first failure", 1, 0, 5.0, 24.0, 5),
    ("second", 2, 5, 5.0, 24.0, 15),
    ("late attempt waits from when it was made", 2, 100, 5.0, 24.0, 110),
    ("fourteenth", 14, 40955, 5.0, 24.0, 81915),
    ("fifteenth would pass the day", 15, 81915, 5.0, 24.0, None),
    ("exactly at the window's end is still made", 1, 3595, 5.0, 1.0, 3600),
    ("a second past it is not", 1, 3596, 5.0, 1.0, None),
    ("another backoff", 3, 0, 60.0, 24.0, 240),
    ("a huge count does not overflow", 5000, 0, 5.0, 24.0, None),
]


@pytest.mark.parametrize(
    ("failures", "at_s", "backoff", "hours", "next_s"),
    [case[1:] for case in SCHEDULE],
    ids=[case[0] for case in SCHEDULE],
)
def test_next_attempt(
    failures: int, at_s: int, backoff: float, hours: float, next_s: int | None
) -> None:
    due = next_attempt_at(
        failed_attempts=failures,
        attempted_at=EVENT_AT + timedelta(seconds=at_s),
        event_at=EVENT_AT,
        backoff_s=backoff,
        retry_hours=hours,
    )
    assert due == (None if next_s is None else EVENT_AT + timedelta(seconds=next_s))


def test_the_delay_doubles_from_the_backoff() -> None:
    assert [retry_delay(n, 5.0).total_seconds() for n in range(1, 6)] == [5, 10, 20, 40, 80]
    with pytest.raises(ValueError, match="counts from 1"):
        retry_delay(0, 5.0)


def test_the_default_schedule_is_fifteen_attempts_within_a_day() -> None:
    offsets = attempt_offsets(5.0, 24.0)
    assert len(offsets) == 15 and offsets[-1] == 81915 and offsets[-1] <= 24 * 3600
    assert attempt_offsets(5.0, 0.001) == [0.0]  # a window shorter than the first backoff


def test_a_body_is_the_same_bytes_for_the_same_event_and_reads_back() -> None:
    first = encode_body("bot.suspended", EVENT_AT, {"bot": {"id": 1}, "failed_probes": 3})
    again = encode_body("bot.suspended", EVENT_AT, {"bot": {"id": 1}, "failed_probes": 3})
    assert first == again
    assert first.startswith(b'{"type":"bot.suspended","timestamp":"2030-01-01T00:00:00.000000Z"')
    body = decode_body(first)
    assert (body.type, body.timestamp, body.data["failed_probes"]) == ("bot.suspended", EVENT_AT, 3)
    with pytest.raises(BodyError, match="not a webhook body"):
        decode_body(b'{"type": 1}')


def test_event_types_are_checked_by_name() -> None:
    assert parse_event_types(["tournament.finished", "match.finished"]) == [
        "match.finished",
        "tournament.finished",
    ]
    assert parse_event_types(t.value for t in EventType) == [t.value for t in EventType]
    with pytest.raises(UnknownEventTypeError, match=r"no event type 'match\.exploded'"):
        parse_event_types(["match.finished", "match.exploded"])
    with pytest.raises(UnknownEventTypeError, match="at least one"):
        parse_event_types([])
