"""The body of every webhook delivery, one form for the sender and the receiver.

A delivery's body is the JSON object ``{"type", "timestamp", "data"}`` (the Standard Webhooks
payload structure): ``type`` is an :class:`arena.events.EventType` value, ``timestamp`` when the
event happened (RFC 3339, UTC, microseconds, ``Z``; the same on every retry, unlike the
``webhook-timestamp`` header, which is the attempt's), ``data`` what the event carries.
The body is built from the stored event, so every attempt of one delivery sends the same bytes.

>>> from datetime import UTC, datetime
>>> body = encode_body("match.finished", datetime(2026, 12, 1, 16, 0, tzinfo=UTC), {"match": 7})
>>> body
b'{"type":"match.finished","timestamp":"2026-12-01T16:00:00.000000Z","data":{"match":7}}'
>>> decode_body(body).data
{'match': 7}
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import msgspec

__all__ = ["Body", "BodyError", "decode_body", "encode_body", "format_timestamp"]

_encoder = msgspec.json.Encoder()


class BodyError(ValueError):
    """A body that is not ``{"type", "timestamp", "data"}`` as the arena sends it."""


class Body(msgspec.Struct, frozen=True):
    """A decoded body (fields the arena may add later are ignored)."""

    type: str
    timestamp: datetime
    data: dict[str, Any]


_decoder = msgspec.json.Decoder(Body)


def format_timestamp(moment: datetime) -> str:
    """``moment`` as the body's ``timestamp``: RFC 3339 in UTC with microseconds and ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def encode_body(type_: str, timestamp: datetime, data: Mapping[str, Any]) -> bytes:
    """The bytes of a delivery's body (compact JSON, keys in this order)."""
    return _encoder.encode({"type": type_, "timestamp": format_timestamp(timestamp), "data": data})


def decode_body(body: bytes) -> Body:
    """A body read back; :class:`BodyError` (one line) if it is not one."""
    try:
        decoded = _decoder.decode(body)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise BodyError(f"not a webhook body: {exc}") from None
    if decoded.timestamp.tzinfo is None:
        raise BodyError("not a webhook body: its timestamp has no time zone")
    return decoded
