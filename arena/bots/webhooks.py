"""Receiving the arena's webhooks (for bot owners): verify, refuse stale or replayed messages,
parse into a typed event. Exported by the SDK (:mod:`arena.bots.sdk`).

A delivery is a ``POST`` whose body is ``{"type", "timestamp", "data"}``
(:mod:`arena.webhooks.payload`), signed the Standard Webhooks way with the endpoint's secret
(``webhook-id``, ``webhook-timestamp``, ``webhook-signature``; :mod:`arena.protocol.signing`).
:meth:`WebhookReceiver.receive` checks, in this order, that one of the signatures verifies with
one of the secrets it holds (give it the old and the new secret while you rotate), that the
attempt's timestamp is within the tolerance (default 5 minutes) of your clock, that the body is
a webhook body of a known event type, and that its ``webhook-id`` was not received within the
tolerance. Every refusal is a ``ValueError`` with a one-line message: a
:class:`~arena.protocol.signing.SignatureError` (headers and signature), a
:class:`ReplayedMessageError` (a subclass of it) or a :class:`BodyError`.

The arena sends an event again, with the same ``webhook-id``, until it hears a 2xx: answer a
:class:`ReplayedMessageError` with 2xx too (you have it already). If your own handling fails
after ``receive``, call :meth:`WebhookReceiver.forget` so the retry is taken. The memory of ids
lasts the tolerance, in this process; keep ids yourself to drop a retry that comes later.

>>> from arena.protocol.signing import Signer
>>> secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
>>> body = b'{"type":"bot.resumed","timestamp":"2026-12-01T16:00:00.000000Z","data":{}}'
>>> headers = Signer(secret).sign(body, msg_id="msg_1", timestamp=1_800_000_000)
>>> receiver = WebhookReceiver(secret)
>>> event = receiver.receive(headers, body, now=1_800_000_001)
>>> event.id, event.type
('msg_1', <EventType.BOT_RESUMED: 'bot.resumed'>)
>>> try:
...     receiver.receive(headers, body, now=1_800_000_002)
... except ReplayedMessageError as exc:
...     print(exc)
webhook-id msg_1 was received 1 s ago (a replay or a retry)
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from arena.events import EventType
from arena.protocol.signing import DEFAULT_TOLERANCE_S, HEADER_ID, SignatureError, Signer
from arena.webhooks.payload import BodyError, decode_body

__all__ = ["BodyError", "ReplayedMessageError", "WebhookEvent", "WebhookReceiver"]

_KNOWN = {t.value: t for t in EventType}


class ReplayedMessageError(SignatureError):
    """This ``webhook-id`` was received within the tolerance: a replay, or the arena's retry
    of a message whose answer it did not get (answer 2xx: you have it already)."""


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """A verified event: ``id`` is its ``webhook-id`` (the same on every attempt), ``type``
    its event type, ``timestamp`` when it happened, ``data`` what it carries (see
    ``docs/WEBHOOKS.md`` for each type's fields)."""

    id: str
    type: EventType
    timestamp: datetime
    data: Mapping[str, Any]


class WebhookReceiver:
    """Verifies and parses deliveries (thread-safe: one per endpoint, shared by handlers).

    ``secret`` is the endpoint's signing secret (``whsec_...``); more secrets are accepted too
    (during a rotation, the old and the new). ``tolerance_s`` bounds how far an attempt's
    ``webhook-timestamp`` may be from ``clock()`` (unix seconds), and how long ids are kept.
    """

    def __init__(
        self,
        secret: str,
        *more_secrets: str,
        tolerance_s: float = DEFAULT_TOLERANCE_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._signers = tuple(Signer(s) for s in (secret, *more_secrets))
        self._tolerance = tolerance_s
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def receive(
        self, headers: Mapping[str, str], body: bytes, *, now: float | None = None
    ) -> WebhookEvent:
        """The event ``body`` carries, once its headers prove the arena sent it just now and
        its id is new; else a ``ValueError`` saying why (see the module docstring)."""
        now = self._clock() if now is None else now
        self._verify(headers, body, now)
        decoded = decode_body(body)
        event_type = _KNOWN.get(decoded.type)
        if event_type is None:
            raise BodyError(
                f"unknown event type {decoded.type!r} (this SDK knows {', '.join(_KNOWN)};"
                " a newer arena may send more: update gin-arena)"
            )
        message_id = _message_id(headers)
        self._first_sighting(message_id, now)
        return WebhookEvent(message_id, event_type, decoded.timestamp, decoded.data)

    def forget(self, message_id: str) -> None:
        """Take ``message_id`` out of the memory of ids (your handling of it failed: the
        arena's retry will then be received)."""
        with self._lock:
            self._seen.pop(message_id, None)

    def _verify(self, headers: Mapping[str, str], body: bytes, now: float) -> None:
        """Any secret verifies: the last refusal is raised (they differ only in the key)."""
        for signer in self._signers[:-1]:
            try:
                signer.verify(headers, body, now=now, tolerance_s=self._tolerance)
            except SignatureError:
                continue
            return
        self._signers[-1].verify(headers, body, now=now, tolerance_s=self._tolerance)

    def _first_sighting(self, message_id: str, now: float) -> None:
        with self._lock:
            while self._seen:
                oldest, at = next(iter(self._seen.items()))
                if now - at <= self._tolerance:
                    break
                del self._seen[oldest]
            seen_at = self._seen.get(message_id)
            if seen_at is not None:
                raise ReplayedMessageError(
                    f"{HEADER_ID} {message_id} was received {now - seen_at:.0f} s ago"
                    " (a replay or a retry)"
                )
            self._seen[message_id] = now


def _message_id(headers: Mapping[str, str]) -> str:
    """The ``webhook-id`` (present: the signature check read it already)."""
    for name, value in headers.items():
        if name.lower() == HEADER_ID:
            return value.strip()
    raise SignatureError(f"missing header {HEADER_ID}")  # pragma: no cover - verified first
