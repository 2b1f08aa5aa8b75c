"""The outbox: :func:`emit` writes an event, and a delivery for each webhook endpoint that
wants it, in the caller's transaction.

So an event exists exactly when the change it reports was committed: a rollback takes it away
with the change, and a crash after the commit leaves it (and its deliveries) to be sent. The
delivery task (:mod:`arena.services.webhooks`) sends what is due; the live streams read the
``events`` table in ``id`` order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.db.models import EventRow, WebhookDeliveryRow, WebhookEndpointRow, utcnow
from arena.events import EventType
from arena.protocol.signing import new_message_id

__all__ = ["emit", "emit_per_bot"]


def emit(
    session: Session,
    type_: EventType,
    data: Mapping[str, Any],
    *,
    audience: Iterable[int] = (),
    bot_id: int | None = None,
    tournament_id: int | None = None,
    match_id: int | None = None,
) -> EventRow:
    """Add an event (in the caller's transaction) and a pending delivery to every endpoint of
    the ``audience`` bots (their owners) that subscribes to ``type_`` (a disabled endpoint's
    delivery waits, paused, until its owner enables it again: nothing is lost meanwhile).

    ``bot_id``, ``tournament_id`` and ``match_id`` say what the event is about (the streams
    filter on them); ``bot_id`` is in the audience too.
    """
    now = utcnow()
    event = EventRow(
        message_id=new_message_id(),
        type=type_.value,
        bot_id=bot_id,
        tournament_id=tournament_id,
        match_id=match_id,
        data=dict(data),
        created_at=now,
    )
    session.add(event)
    session.flush()
    bots = set(audience) | ({bot_id} if bot_id is not None else set())
    session.add_all(
        WebhookDeliveryRow(endpoint_id=endpoint_id, event_id=event.id, next_attempt_at=now)
        for endpoints in _subscribers(session, type_, bots).values()
        for endpoint_id in endpoints
    )
    return event


def emit_per_bot(
    session: Session, type_: EventType, data_by_bot: Mapping[int, Mapping[str, Any]]
) -> list[EventRow]:
    """:func:`emit` once per bot, each event about that bot (``bot_id``, so to its owner), with
    the events inserted together and the endpoints read once: what a refit that reports
    thousands of bots calls (one :func:`emit` each costs two round trips)."""
    now = utcnow()
    events = [
        EventRow(
            message_id=new_message_id(),
            type=type_.value,
            bot_id=bot_id,
            data=dict(data),
            created_at=now,
        )
        for bot_id, data in data_by_bot.items()
    ]
    session.add_all(events)
    session.flush()
    wanted = _subscribers(session, type_, data_by_bot)
    session.add_all(
        WebhookDeliveryRow(endpoint_id=endpoint_id, event_id=event.id, next_attempt_at=now)
        for event in events
        for endpoint_id in wanted.get(event.bot_id or 0, ())
    )
    return events


def _subscribers(session: Session, type_: EventType, bots: Iterable[int]) -> dict[int, list[int]]:
    """The endpoints of each of these bots that subscribe to ``type_`` (enabled or not), read
    a thousand bots at a time."""
    wanted: dict[int, list[int]] = {}
    ids = sorted(set(bots))
    for start in range(0, len(ids), 1000):
        endpoints = session.execute(
            select(
                WebhookEndpointRow.id, WebhookEndpointRow.bot_id, WebhookEndpointRow.event_types
            ).where(WebhookEndpointRow.bot_id.in_(ids[start : start + 1000]))
        )
        for endpoint_id, bot_id, types in endpoints:
            if type_.value in types:
                wanted.setdefault(bot_id, []).append(endpoint_id)
    return wanted
