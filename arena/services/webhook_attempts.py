"""Recording webhook attempts: the log, the delivery's next state and the endpoint's run of
failures, in one transaction for a batch of attempts (:func:`record_attempts`).

Every attempt is logged (a ``webhook_attempts`` row) and counted in its delivery's
``attempts``. Only an attempt whose claim still holds the delivery's lease moves it on:
delivered (2xx), due again on the schedule of :mod:`arena.webhooks.schedule`, or failed once
the next attempt would fall past ``ARENA_WEBHOOK_RETRY_HOURS`` after the event. Its endpoint's
run of failures grows with each failed attempt and ends with a success;
``ARENA_WEBHOOK_FAILURES_TO_DISABLE`` in a row, or one ``410 Gone``, disable the endpoint.
While a run lasts the endpoint itself backs off as one delivery would: after its n-th failure
in a row none of its deliveries is due before ``backoff * 2**(n-1)`` seconds have passed, so
the run grows at the pace of the schedule however many deliveries wait (an outage of a busy
endpoint disables it after about as long as one failing delivery takes to fail). The
deliveries are claimed and the attempts made by :mod:`arena.services.webhooks`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, func, insert, update
from sqlalchemy.orm import Session

from arena.db.models import WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow
from arena.db.session import Database
from arena.settings import Settings
from arena.states import DeliveryStatus
from arena.webhooks.schedule import next_attempt_at, retry_delay
from arena.webhooks.sender import Delivery, Outcome

__all__ = ["MAX_ERROR", "Attempt", "Claimed", "Recorded", "record_attempts", "release"]

#: Errors are stored up to this many characters.
MAX_ERROR = 2000


@dataclass(frozen=True, slots=True)
class Claimed:
    """A delivery a sender holds: what to send, the lease that fences its record, how many
    attempts it had before, and when its event happened (the retry window's start)."""

    delivery: Delivery
    lease_owner: str
    attempts: int
    event_at: datetime


class Recorded(enum.Enum):
    """What recording an attempt did."""

    #: The delivery moved on (delivered, due again, or failed).
    MOVED = "moved"
    #: It moved, and this attempt disabled its endpoint.
    DISABLED = "disabled"
    #: The lease was lost meanwhile: the attempt is logged and counted, nothing else changes.
    LOGGED = "logged"
    #: The endpoint was deleted meanwhile, with its log: nothing is written.
    GONE = "gone"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One attempt made: the claim it was made under, what came of it, and when."""

    claimed: Claimed
    outcome: Outcome
    at: datetime


#: Every attempt counts, and says which deliveries still exist and who holds them.
_COUNT = (
    update(WebhookDeliveryRow)
    .where(WebhookDeliveryRow.id.in_(bindparam("ids", expanding=True)))
    .values(attempts=WebhookDeliveryRow.attempts + 1)
    .returning(WebhookDeliveryRow.id, WebhookDeliveryRow.lease_owner, WebhookDeliveryRow.status)
)
_LOG = insert(WebhookAttemptRow)
#: What the lease holder's attempt decides (``b_``: the bound values of one delivery).
_MOVE = (
    update(WebhookDeliveryRow)
    .where(WebhookDeliveryRow.id == bindparam("b_id"))
    .values(
        status=bindparam("b_status"),
        next_attempt_at=func.coalesce(
            bindparam("b_next", type_=WebhookDeliveryRow.next_attempt_at.type),
            WebhookDeliveryRow.next_attempt_at,
        ),
        delivered_at=bindparam("b_delivered", type_=WebhookDeliveryRow.delivered_at.type),
        last_status_code=bindparam("b_code"),
        last_latency_ms=bindparam("b_latency"),
        last_error=bindparam("b_error"),
        lease_owner=None,
        lease_expires_at=None,
    )
)
#: First in every recording transaction: the endpoints' runs of failures, their rows locked
#: (a no-op ``UPDATE``: the write lock at once on SQLite, ``FOR NO KEY UPDATE`` on PostgreSQL)
#: before any delivery's, the order every write that touches both keeps (the owner's calls
#: lock the endpoint first too), so two of them never wait for each other.
_RUNS = (
    update(WebhookEndpointRow)
    .where(WebhookEndpointRow.id.in_(bindparam("ids", expanding=True)))
    .values(failed_attempts=WebhookEndpointRow.failed_attempts)
    .returning(
        WebhookEndpointRow.id, WebhookEndpointRow.failed_attempts, WebhookEndpointRow.enabled
    )
)


def record_attempts(
    db: Database, settings: Settings, attempts: Sequence[Attempt]
) -> list[Recorded]:
    """Log the attempts and, for each whose claim still holds its lease, move its delivery
    (delivered, due again on the schedule, or failed) and its endpoint's run of failures
    (disabling it at ``webhook_failures_to_disable``, or on ``410 Gone``): one transaction,
    a handful of statements whatever the number of attempts. What each attempt did, in order.
    """
    if not attempts:
        return []
    with db.session() as session:
        connection = session.connection()  # plain executemany, no ORM bulk semantics
        endpoint_ids = sorted({a.claimed.delivery.endpoint_id for a in attempts})
        runs = {row.id: row for row in connection.execute(_RUNS, {"ids": endpoint_ids})}
        ids = sorted({a.claimed.delivery.delivery_id for a in attempts})
        holders = {row.id: row for row in connection.execute(_COUNT, {"ids": ids})}
        logged = [a for a in attempts if a.claimed.delivery.delivery_id in holders]
        if logged:
            connection.execute(_LOG, [_log_row(a) for a in logged])
        held = [
            a
            for a in logged
            if holders[a.claimed.delivery.delivery_id].lease_owner == a.claimed.lease_owner
            and holders[a.claimed.delivery.delivery_id].status is DeliveryStatus.PENDING
        ]
        if held:
            connection.execute(_MOVE, [_move_row(settings, a) for a in held])
        disabled = _count_runs(session, settings, held, runs)
    held_ids = {id(a) for a in held}
    out = []
    for a in attempts:
        if a.claimed.delivery.delivery_id not in holders:
            out.append(Recorded.GONE)
        elif id(a) not in held_ids:
            out.append(Recorded.LOGGED)
        else:
            out.append(Recorded.DISABLED if id(a) in disabled else Recorded.MOVED)
    return out


def _error(outcome: Outcome) -> str | None:
    return None if outcome.error is None else outcome.error[:MAX_ERROR]


def _log_row(a: Attempt) -> dict[str, object]:
    return {
        "delivery_id": a.claimed.delivery.delivery_id,
        "attempted_at": a.at,
        "status_code": a.outcome.status_code,
        "latency_ms": a.outcome.latency_ms,
        "error": _error(a.outcome),
    }


def _move_row(settings: Settings, a: Attempt) -> dict[str, object]:
    """The bound values of :data:`_MOVE` for one held attempt."""
    outcome = a.outcome
    row: dict[str, object] = {
        "b_id": a.claimed.delivery.delivery_id,
        "b_code": outcome.status_code,
        "b_latency": outcome.latency_ms,
        "b_error": _error(outcome),
        "b_next": None,
        "b_delivered": None,
    }
    if outcome.delivered:
        row.update(b_status=DeliveryStatus.DELIVERED, b_delivered=a.at)
        return row
    due = next_attempt_at(
        failed_attempts=a.claimed.attempts + 1,
        attempted_at=a.at,
        event_at=a.claimed.event_at,
        backoff_s=settings.webhook_backoff_seconds,
        retry_hours=settings.webhook_retry_hours,
    )
    row.update(
        b_status=DeliveryStatus.FAILED if due is None else DeliveryStatus.PENDING, b_next=due
    )
    return row


def _count_runs(
    session: Session, settings: Settings, held: Sequence[Attempt], runs: Mapping[int, Any]
) -> set[int]:
    """Each endpoint's run of failures (``runs``: its row as the transaction began) through
    these attempts, in order (a success ends it): an endpoint whose run reaches
    ``webhook_failures_to_disable``, or that answered ``410 Gone``, is disabled. The ``id()``
    of each attempt that disabled its endpoint."""
    by_endpoint: dict[int, list[Attempt]] = {}
    for a in held:
        by_endpoint.setdefault(a.claimed.delivery.endpoint_id, []).append(a)
    disabled: set[int] = set()
    for endpoint_id, attempts in by_endpoint.items():
        failures, enabled = runs[endpoint_id].failed_attempts, runs[endpoint_id].enabled
        run, reason = failures, None
        for a in attempts:
            run = 0 if a.outcome.delivered else run + 1
            if enabled and reason is None:
                reason = _disable_reason(settings, a, run)
                if reason is not None:
                    disabled.add(id(a))
        values: dict[str, object] = {}
        if run != failures:
            values["failed_attempts"] = run
        if reason is not None:
            values.update(enabled=False, disabled_reason=reason[:MAX_ERROR])
        if values:
            session.execute(
                update(WebhookEndpointRow)
                .where(WebhookEndpointRow.id == endpoint_id)
                .values(**values)
            )
        if run and reason is None:
            _back_off(
                session,
                endpoint_id,
                attempts[-1].at + retry_delay(run, settings.webhook_backoff_seconds),
            )
    return disabled


def _back_off(session: Session, endpoint_id: int, until: datetime) -> None:
    """None of the endpoint's pending deliveries is due before ``until`` (the endpoint is in a
    run of failures; its rows are already locked, first, by :data:`_RUNS`)."""
    session.execute(
        update(WebhookDeliveryRow)
        .where(
            WebhookDeliveryRow.endpoint_id == endpoint_id,
            WebhookDeliveryRow.status == DeliveryStatus.PENDING,
            WebhookDeliveryRow.next_attempt_at < until,
        )
        .values(next_attempt_at=until)
    )


def _disable_reason(settings: Settings, a: Attempt, run: int) -> str | None:
    """Why this attempt disables its endpoint (None: it does not)."""
    when = a.at.isoformat(timespec="seconds")
    if a.outcome.gone:
        return f"disabled at {when}: the endpoint answered 410 Gone (no more deliveries wanted)"
    if run >= settings.webhook_failures_to_disable:
        return (
            f"disabled at {when}: {run} delivery attempts failed in a row; the last:"
            f" {a.outcome.error}"
        )
    return None


def release(db: Database, claims: Sequence[Claimed]) -> None:
    """Give claimed deliveries back unsent (their endpoint was disabled meanwhile): they wait,
    paused, as the endpoint's other deliveries do."""
    with db.session() as session:
        for claimed in claims:
            session.execute(
                update(WebhookDeliveryRow)
                .where(
                    WebhookDeliveryRow.id == claimed.delivery.delivery_id,
                    WebhookDeliveryRow.lease_owner == claimed.lease_owner,
                )
                .values(lease_owner=None, lease_expires_at=None)
            )
