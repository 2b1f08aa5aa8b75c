"""Owners' webhook endpoints and their delivery logs, as the API shows them to the owner.

No read shows a secret: an endpoint shows until when its previous secret still signs, never
the secret. Every endpoint is read through its bot (another bot's endpoint is not found), and
every delivery through its endpoint. The log is newest first, paged by keyset (``before`` a
delivery id), each delivery with every attempt made, oldest first.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.db.models import (
    EventRow,
    WebhookAttemptRow,
    WebhookDeliveryRow,
    WebhookEndpointRow,
    utcnow,
)
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries._rows import iso
from arena.states import DeliveryStatus

__all__ = ["delivery_detail", "delivery_log", "endpoint_detail", "list_endpoints"]


def _counts(session: Session, endpoint_ids: Sequence[int]) -> dict[int, dict[str, int]]:
    """Deliveries per status of each endpoint (every status present, 0 when none)."""
    counts = {e: {s.value: 0 for s in DeliveryStatus} for e in endpoint_ids}
    if endpoint_ids:
        rows = session.execute(
            select(WebhookDeliveryRow.endpoint_id, WebhookDeliveryRow.status, func.count())
            .where(WebhookDeliveryRow.endpoint_id.in_(endpoint_ids))
            .group_by(WebhookDeliveryRow.endpoint_id, WebhookDeliveryRow.status)
        )
        for endpoint_id, status, n in rows:
            counts[endpoint_id][status.value] = int(n)
    return counts


def _endpoint_dict(
    endpoint: WebhookEndpointRow, counts: dict[str, int], now: datetime
) -> dict[str, Any]:
    expires = endpoint.previous_secret_expires_at
    rotating = endpoint.previous_secret is not None and expires is not None and now < expires
    return {
        "id": endpoint.id,
        "bot_id": endpoint.bot_id,
        "url": endpoint.url,
        "event_types": list(endpoint.event_types),
        "enabled": endpoint.enabled,
        "disabled_reason": endpoint.disabled_reason,
        "failed_attempts": endpoint.failed_attempts,
        "previous_secret_valid_until": iso(expires) if rotating else None,
        "deliveries": counts,
        "created_at": iso(endpoint.created_at),
    }


def list_endpoints(db: Database, bot_id: int) -> list[dict[str, Any]]:
    """The bot's endpoints, by id (the caller checked that the bot exists)."""
    with db.session() as session:
        endpoints = list(
            session.scalars(
                select(WebhookEndpointRow)
                .where(WebhookEndpointRow.bot_id == bot_id)
                .order_by(WebhookEndpointRow.id)
            )
        )
        counts = _counts(session, [e.id for e in endpoints])
        now = utcnow()
        return [_endpoint_dict(e, counts[e.id], now) for e in endpoints]


def _endpoint(session: Session, bot_id: int, endpoint_id: int) -> WebhookEndpointRow:
    endpoint = session.get(WebhookEndpointRow, endpoint_id)
    if endpoint is None or endpoint.bot_id != bot_id:
        raise NotFoundError("webhook", endpoint_id)
    return endpoint


def endpoint_detail(db: Database, bot_id: int, endpoint_id: int) -> dict[str, Any]:
    """One endpoint of the bot (:class:`NotFoundError` ``webhook`` if the bot has none such)."""
    with db.session() as session:
        endpoint = _endpoint(session, bot_id, endpoint_id)
        return _endpoint_dict(endpoint, _counts(session, [endpoint_id])[endpoint_id], utcnow())


def _attempt_logs(session: Session, delivery_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    logs: dict[int, list[dict[str, Any]]] = {d: [] for d in delivery_ids}
    if delivery_ids:
        attempts = session.scalars(
            select(WebhookAttemptRow)
            .where(WebhookAttemptRow.delivery_id.in_(delivery_ids))
            .order_by(WebhookAttemptRow.id)
        )
        for a in attempts:
            logs[a.delivery_id].append(
                {
                    "attempted_at": iso(a.attempted_at),
                    "status_code": a.status_code,
                    "latency_ms": a.latency_ms,
                    "error": a.error,
                }
            )
    return logs


def _delivery_dict(
    delivery: WebhookDeliveryRow, event: EventRow, log: list[dict[str, Any]]
) -> dict[str, Any]:
    pending = delivery.status is DeliveryStatus.PENDING
    return {
        "id": delivery.id,
        "event": {"id": event.id, "type": event.type, "created_at": iso(event.created_at)},
        "webhook_id": event.message_id,
        "status": delivery.status.value,
        "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code,
        "last_latency_ms": delivery.last_latency_ms,
        "last_error": delivery.last_error,
        "next_attempt_at": iso(delivery.next_attempt_at) if pending else None,
        "delivered_at": iso(delivery.delivered_at),
        "created_at": iso(delivery.created_at),
        "attempt_log": log,
    }


def delivery_log(
    db: Database,
    bot_id: int,
    endpoint_id: int,
    *,
    before: int | None = None,
    limit: int = 50,
    status: str | None = None,
) -> list[dict[str, Any]]:
    """The endpoint's deliveries, newest first (ids below ``before``; only ``status`` ones if
    given), each with its attempts; :class:`NotFoundError` if the bot has no such endpoint."""
    with db.session() as session:
        _endpoint(session, bot_id, endpoint_id)
        query = (
            select(WebhookDeliveryRow, EventRow)
            .join(EventRow, EventRow.id == WebhookDeliveryRow.event_id)
            .where(WebhookDeliveryRow.endpoint_id == endpoint_id)
            .order_by(WebhookDeliveryRow.id.desc())
            .limit(limit)
        )
        if before is not None:
            query = query.where(WebhookDeliveryRow.id < before)
        if status is not None:
            query = query.where(WebhookDeliveryRow.status == DeliveryStatus(status))
        rows = session.execute(query).all()
        logs = _attempt_logs(session, [d.id for d, _ in rows])
        return [_delivery_dict(d, e, logs[d.id]) for d, e in rows]


def delivery_detail(
    db: Database, bot_id: int, endpoint_id: int, delivery_id: int
) -> dict[str, Any]:
    """One delivery with its attempts and the event's ``data`` as sent;
    :class:`NotFoundError` (``webhook`` or ``delivery``) unless it is this endpoint's."""
    with db.session() as session:
        _endpoint(session, bot_id, endpoint_id)
        row = session.execute(
            select(WebhookDeliveryRow, EventRow)
            .join(EventRow, EventRow.id == WebhookDeliveryRow.event_id)
            .where(
                WebhookDeliveryRow.id == delivery_id,
                WebhookDeliveryRow.endpoint_id == endpoint_id,
            )
        ).one_or_none()
        if row is None:
            raise NotFoundError("delivery", delivery_id)
        delivery, event = row
        detail = _delivery_dict(delivery, event, _attempt_logs(session, [delivery_id])[delivery_id])
        detail["event"]["data"] = event.data
        return detail
