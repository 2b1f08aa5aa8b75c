"""Owners' webhook endpoints: register, delete, rotate the secret, enable again, redeliver.

An owner (or the organiser) registers, for one bot, a URL and the event types it wants
(:class:`arena.events.EventType` values; an unknown one is refused by name). The URL passes the
bots' URL guard (production rules; loopback only with ``ARENA_ALLOW_LOOPBACK``), here and again
at every connection (:mod:`arena.webhooks.sender`). Each endpoint has its own signing secret,
shown once; rotating it keeps the old one signing beside the new one for
``ARENA_SECRET_ROTATION_HOURS``, as for bots. A bot has at most :data:`MAX_ENDPOINTS_PER_BOT`.
Sending and disabling are :mod:`arena.services.webhooks`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from arena.db.models import BotRow, WebhookDeliveryRow, WebhookEndpointRow, utcnow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.events import EventType
from arena.protocol.signing import generate_secret
from arena.protocol.urlguard import Resolver, check_url
from arena.services.bots import SecretRotation
from arena.settings import Settings
from arena.states import DeliveryStatus

__all__ = [
    "MAX_ENDPOINTS_PER_BOT",
    "CreatedEndpoint",
    "EndpointDisabledError",
    "TooManyEndpointsError",
    "UnknownEventTypeError",
    "create_endpoint",
    "delete_endpoint",
    "enable_endpoint",
    "end_endpoint_rotation",
    "parse_event_types",
    "redeliver",
    "rotate_endpoint_secret",
]

MAX_ENDPOINTS_PER_BOT = 10


class UnknownEventTypeError(ValueError):
    """An event type the arena does not have."""


class TooManyEndpointsError(ValueError):
    """The bot already has :data:`MAX_ENDPOINTS_PER_BOT` endpoints."""


class EndpointDisabledError(ValueError):
    """Nothing is sent to a disabled endpoint (enable it first)."""


@dataclass(frozen=True, slots=True)
class CreatedEndpoint:
    """A new endpoint: its id and its signing secret (shown only this once)."""

    endpoint_id: int
    secret: str


def parse_event_types(names: Iterable[str]) -> list[str]:
    """The event types named, each once, in :class:`EventType` order; an unknown name is
    :class:`UnknownEventTypeError` naming it and the known ones.

    >>> parse_event_types(["match.finished", "bot.suspended", "match.finished"])
    ['match.finished', 'bot.suspended']
    """
    wanted = set(names)
    known = [t.value for t in EventType]
    unknown = sorted(wanted - set(known))
    if unknown:
        raise UnknownEventTypeError(
            f"no event type {unknown[0]!r} (the types are {', '.join(known)})"
        )
    if not wanted:
        raise UnknownEventTypeError("no event types given: name at least one")
    return [t for t in known if t in wanted]


def _lock_bot(session: Session, bot_id: int) -> None:
    """Take the bot's row lock (a no-op UPDATE: the write lock on SQLite too), or 404."""
    locked = session.execute(update(BotRow).where(BotRow.id == bot_id).values(id=BotRow.id))
    if not locked.rowcount:  # type: ignore[attr-defined]
        raise NotFoundError("bot", bot_id)


def _endpoint(session: Session, bot_id: int, endpoint_id: int) -> WebhookEndpointRow:
    """The bot's endpoint with its row locked (a no-op UPDATE first: the write lock on SQLite
    too, before the senders' writes), or :class:`NotFoundError` (another bot's is not found
    either)."""
    row = WebhookEndpointRow
    locked = session.execute(
        update(row).where(row.id == endpoint_id, row.bot_id == bot_id).values(id=row.id)
    )
    if not locked.rowcount:  # type: ignore[attr-defined]
        raise NotFoundError("webhook", endpoint_id)
    return session.get_one(row, endpoint_id, populate_existing=True)


def create_endpoint(
    db: Database,
    settings: Settings,
    bot_id: int,
    *,
    url: str,
    event_types: Iterable[str],
    resolver: Resolver | None = None,
) -> CreatedEndpoint:
    """Register an endpoint of bot ``bot_id`` with a new secret.

    Raises :class:`NotFoundError`, :class:`UnknownEventTypeError`,
    :class:`arena.protocol.urlguard.UrlRejectedError` (the URL guard, with
    ``settings.allow_loopback``) or :class:`TooManyEndpointsError`; nothing is stored then.
    """
    types = parse_event_types(event_types)
    check_url(url, allow_loopback=settings.allow_loopback, resolver=resolver)
    secret = generate_secret()
    with db.session() as session:
        _lock_bot(session, bot_id)
        count = session.scalar(select(func.count()).where(WebhookEndpointRow.bot_id == bot_id))
        if (count or 0) >= MAX_ENDPOINTS_PER_BOT:
            raise TooManyEndpointsError(
                f"bot {bot_id} already has {MAX_ENDPOINTS_PER_BOT} webhook endpoints (the most"
                " allowed): delete one first"
            )
        endpoint = WebhookEndpointRow(
            bot_id=bot_id,
            url=url,
            event_types=types,
            secret=secret,
            enabled=True,
            failed_attempts=0,
        )
        session.add(endpoint)
        session.flush()
        return CreatedEndpoint(endpoint.id, secret)


def delete_endpoint(db: Database, bot_id: int, endpoint_id: int) -> None:
    """Delete an endpoint with its deliveries and their log (nothing more is sent to it)."""
    with db.session() as session:
        deleted = session.execute(
            delete(WebhookEndpointRow).where(
                WebhookEndpointRow.id == endpoint_id, WebhookEndpointRow.bot_id == bot_id
            )
        )
        if not deleted.rowcount:  # type: ignore[attr-defined]
            raise NotFoundError("webhook", endpoint_id)


def rotate_endpoint_secret(
    db: Database,
    bot_id: int,
    endpoint_id: int,
    *,
    window_hours: float,
    now: datetime | None = None,
) -> SecretRotation:
    """A new signing secret, used from the next attempt on; the old one keeps signing beside
    it (two ``v1,`` signatures) for ``window_hours`` (0: cut over at once). Rotating again
    within a window keeps only the secret current until now as the previous one."""
    secret = generate_secret()
    now = now or utcnow()
    until = now + timedelta(hours=window_hours) if window_hours > 0 else None
    with db.session() as session:
        endpoint = _endpoint(session, bot_id, endpoint_id)
        endpoint.previous_secret = endpoint.secret if until is not None else None
        endpoint.previous_secret_expires_at = until
        endpoint.secret = secret
    return SecretRotation(secret, until)


def end_endpoint_rotation(db: Database, bot_id: int, endpoint_id: int) -> None:
    """End the rotation window now: only the current secret signs from the next attempt on."""
    with db.session() as session:
        endpoint = _endpoint(session, bot_id, endpoint_id)
        endpoint.previous_secret = None
        endpoint.previous_secret_expires_at = None


def enable_endpoint(
    db: Database, bot_id: int, endpoint_id: int, *, now: datetime | None = None
) -> None:
    """Enable a disabled endpoint: its failure count starts again from 0, and its paused
    deliveries are due at once (oldest first). Enabling an enabled endpoint changes nothing."""
    now = now or utcnow()
    with db.session() as session:
        endpoint = _endpoint(session, bot_id, endpoint_id)
        if endpoint.enabled:
            return
        endpoint.enabled = True
        endpoint.disabled_reason = None
        endpoint.failed_attempts = 0
        session.execute(
            update(WebhookDeliveryRow)
            .where(
                WebhookDeliveryRow.endpoint_id == endpoint_id,
                WebhookDeliveryRow.status == DeliveryStatus.PENDING,
                WebhookDeliveryRow.next_attempt_at > now,
            )
            .values(next_attempt_at=now)
        )


def redeliver(
    db: Database, bot_id: int, endpoint_id: int, delivery_id: int, *, now: datetime | None = None
) -> None:
    """Send a delivery again, whatever its status: it is pending and due now, with the same
    ``webhook-id``. If that attempt fails it is retried while the event's retry window is
    open (an older event gets the one attempt). An attempt in flight meanwhile is still
    logged, but this call decides the delivery's state. :class:`EndpointDisabledError` for a
    disabled endpoint (enable it first)."""
    now = now or utcnow()
    with db.session() as session:
        endpoint = _endpoint(session, bot_id, endpoint_id)
        if not endpoint.enabled:
            raise EndpointDisabledError(
                f"webhook {endpoint_id} is disabled ({endpoint.disabled_reason}): enable it"
                " before redelivering"
            )
        moved = session.execute(
            update(WebhookDeliveryRow)
            .where(
                WebhookDeliveryRow.id == delivery_id,
                WebhookDeliveryRow.endpoint_id == endpoint_id,
            )
            .values(
                status=DeliveryStatus.PENDING,
                next_attempt_at=now,
                lease_owner=None,
                lease_expires_at=None,
            )
        )
        if not moved.rowcount:  # type: ignore[attr-defined]
            raise NotFoundError("delivery", delivery_id)
