"""Delivering owners' webhooks: :func:`deliver_due`, the periodic job that sends what is due.

The outbox (:func:`arena.services.events.emit`) adds a pending delivery per subscribed, enabled
endpoint (:mod:`arena.services.webhook_endpoints`) in the transaction of the change. A run of
:func:`deliver_due` claims due deliveries with a lease (:func:`claim_due`: one guarded
``UPDATE``, ``SKIP LOCKED`` on PostgreSQL, so two runs at once never take the same delivery),
sends them from :data:`SENDING_THREADS` threads (:mod:`arena.webhooks.sender`, each thread with
its own keep-alive connections), one request at a time to each endpoint, in the order they fell
due (a run holds at most :data:`PER_ENDPOINT` of one endpoint's, and an endpoint whose attempt
failed gets no more in that run, so a slow or broken endpoint holds up no other), and records
the attempts as they come back
(:mod:`arena.services.webhook_attempts`). Only the run's own thread writes, a transaction per
handful of attempts, so the database sees one writer per run. A run that dies between a send
and its record leaves the lease to run out, and the delivery is sent again, with the same
``webhook-id``: at least once, never lost.

Nothing is sent to a disabled endpoint: its pending deliveries wait, paused (not claimed), and
those a run had claimed before the attempt that disabled it was recorded are given back unsent
(the next request to an endpoint starts only once the last one is recorded); enabling it
again (:func:`arena.services.webhook_endpoints.enable_endpoint`) makes them due at once, oldest
first, so the owner's next success brings what was missed.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Collection, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update

from arena.db.models import EventRow, WebhookDeliveryRow, WebhookEndpointRow, utcnow
from arena.db.session import Database
from arena.protocol.urlguard import Resolver
from arena.services.bots import signing_secrets
from arena.services.matches import Submit
from arena.services.webhook_attempts import Attempt, Claimed, Recorded, record_attempts, release
from arena.settings import Settings
from arena.states import DeliveryStatus
from arena.webhooks.payload import encode_body
from arena.webhooks.sender import Delivery, Sender

__all__ = [
    "CLAIM_BATCH",
    "PER_ENDPOINT",
    "RUN_SECONDS",
    "SENDING_THREADS",
    "claim_due",
    "deliver_due",
]

#: Threads one run sends from (each with its own keep-alive connections).
SENDING_THREADS = 8
#: Deliveries a run holds at once (claimed, in flight or waiting for their endpoint).
CLAIM_BATCH = 32
#: Of which one endpoint's, at most (so that one slow endpoint cannot hold a whole run).
PER_ENDPOINT = 4
#: How many candidates a claim reads, per delivery it may take.
SCAN = 8
#: A run stops claiming after this long (a Celery task must not hold the control queue).
RUN_SECONDS = 30.0


def _lease_seconds(settings: Settings) -> float:
    """How long a claim holds: an endpoint's share of a run timing out one after the other,
    and a minute to record."""
    return PER_ENDPOINT * settings.webhook_timeout_seconds + 60.0


def claim_due(
    db: Database,
    *,
    limit: int,
    lease_seconds: float,
    now: datetime | None = None,
    holding: Mapping[int, int] | None = None,
    resting: Collection[int] = (),
) -> list[Claimed]:
    """Take up to ``limit`` due deliveries (pending, ``next_attempt_at`` passed, no live lease,
    endpoint enabled), earliest due first, with a new lease: what two senders at once claim
    never overlaps.

    At most :data:`PER_ENDPOINT` per endpoint, counting the ``holding`` the caller already has
    of each; none of the ``resting`` endpoints'. The candidates are read first (the earliest
    :data:`SCAN` × ``limit`` due), then taken by one guarded ``UPDATE`` that opens its own
    transaction (the write lock at once on SQLite), so what another sender took meanwhile is
    left out.
    """
    now = now or utcnow()
    due = (
        WebhookDeliveryRow.status == DeliveryStatus.PENDING,
        WebhookDeliveryRow.next_attempt_at <= now,
        or_(
            WebhookDeliveryRow.lease_expires_at.is_(None),
            WebhookDeliveryRow.lease_expires_at < now,
        ),
    )
    with db.session() as session:
        candidates = session.execute(
            select(WebhookDeliveryRow.id, WebhookDeliveryRow.endpoint_id)
            .join(WebhookEndpointRow, WebhookEndpointRow.id == WebhookDeliveryRow.endpoint_id)
            .where(*due, WebhookEndpointRow.enabled.is_(True))
            .order_by(WebhookDeliveryRow.next_attempt_at, WebhookDeliveryRow.id)
            .limit(limit * SCAN)
        ).all()
    taken = Counter(holding or {})
    picked: list[int] = []
    for delivery_id, endpoint_id in candidates:
        if endpoint_id not in resting and taken[endpoint_id] < PER_ENDPOINT:
            taken[endpoint_id] += 1
            picked.append(delivery_id)
            if len(picked) == limit:
                break
    if not picked:
        return []
    owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
    enabled = select(WebhookEndpointRow.id).where(WebhookEndpointRow.enabled.is_(True))
    with db.session() as session:
        ids = list(
            session.scalars(
                update(WebhookDeliveryRow)
                .where(
                    WebhookDeliveryRow.id.in_(picked),
                    *due,
                    WebhookDeliveryRow.endpoint_id.in_(enabled.scalar_subquery()),
                )
                .values(lease_owner=owner, lease_expires_at=now + timedelta(seconds=lease_seconds))
                .returning(WebhookDeliveryRow.id)
            )
        )
        if not ids:
            return []
        rows = session.execute(
            select(
                WebhookDeliveryRow.id,
                WebhookDeliveryRow.attempts,
                WebhookEndpointRow.id.label("endpoint_id"),
                WebhookEndpointRow.url,
                WebhookEndpointRow.secret,
                WebhookEndpointRow.previous_secret,
                WebhookEndpointRow.previous_secret_expires_at,
                EventRow.message_id,
                EventRow.type,
                EventRow.data,
                EventRow.created_at,
            )
            .join(WebhookEndpointRow, WebhookEndpointRow.id == WebhookDeliveryRow.endpoint_id)
            .join(EventRow, EventRow.id == WebhookDeliveryRow.event_id)
            .where(WebhookDeliveryRow.id.in_(ids))
            .order_by(WebhookDeliveryRow.next_attempt_at, WebhookDeliveryRow.id)
        ).all()
    return [
        Claimed(
            Delivery(
                row.id,
                row.endpoint_id,
                row.url,
                signing_secrets(row, now=now),
                row.message_id,
                encode_body(row.type, row.created_at, row.data),
            ),
            owner,
            row.attempts,
            row.created_at,
        )
        for row in rows
    ]


class _Run:
    """One run of :func:`deliver_due`: its clock and lease, a sender per thread (each keeps its
    connections), and the claimed deliveries of each endpoint, sent one after the other (at
    most one request in flight to an endpoint), the next only once the last is recorded."""

    def __init__(
        self, db: Database, settings: Settings, now: datetime | None, resolver: Resolver | None
    ) -> None:
        self.db = db
        self.settings = settings
        self.now = now
        self.resolver = resolver
        self.lease = _lease_seconds(settings)
        self.stop_at = time.monotonic() + RUN_SECONDS
        self.attempted: list[int] = []
        #: Claimed and not yet sent, by endpoint, oldest due first.
        self.waiting: dict[int, deque[Claimed]] = {}
        self.in_flight: set[Future[Attempt]] = set()
        self._busy: set[int] = set()
        #: Endpoints whose attempt failed in this run: not tried again in it.
        self._resting: set[int] = set()
        self._senders: list[Sender] = []
        self._local = threading.local()
        self._lock = threading.Lock()

    @property
    def outstanding(self) -> int:
        return len(self.in_flight) + sum(len(q) for q in self.waiting.values())

    def clock(self) -> datetime:
        return self.now if self.now is not None else utcnow()

    def claim(self, pool: ThreadPoolExecutor, limit: int) -> int:
        """Claim up to ``limit`` more and start every endpoint that is idle; how many."""
        if time.monotonic() > self.stop_at:
            return 0
        holding = Counter(self._busy)
        for endpoint_id, queue in self.waiting.items():
            holding[endpoint_id] += len(queue)
        claimed = claim_due(
            self.db,
            limit=limit,
            lease_seconds=self.lease,
            now=self.clock(),
            holding=holding,
            resting=self._resting,
        )
        for c in claimed:
            self.waiting.setdefault(c.delivery.endpoint_id, deque()).append(c)
        for endpoint_id in list(self.waiting):
            if endpoint_id not in self._busy:
                self._start(pool, endpoint_id)
        return len(claimed)

    def _start(self, pool: ThreadPoolExecutor, endpoint_id: int) -> None:
        queue = self.waiting[endpoint_id]
        claimed = queue.popleft()
        if not queue:
            del self.waiting[endpoint_id]
        self._busy.add(endpoint_id)
        self.in_flight.add(pool.submit(self._send, claimed))

    def _send(self, claimed: Claimed) -> Attempt:
        """In a sending thread: one attempt, over this thread's connections."""
        sender: Sender | None = getattr(self._local, "sender", None)
        if sender is None:
            sender = Sender(
                timeout_s=self.settings.webhook_timeout_seconds,
                allow_loopback=self.settings.allow_loopback,
                resolver=self.resolver,
            )
            self._local.sender = sender
            with self._lock:
                self._senders.append(sender)
        at = self.clock()
        return Attempt(claimed, sender.send(claimed.delivery, timestamp=int(at.timestamp())), at)

    def record(self, pool: ThreadPoolExecutor, attempts: list[Attempt]) -> None:
        """In the run's own thread: the attempts that came back, in one transaction; then the
        next delivery of each of their endpoints. An endpoint that just failed (or was just
        disabled, or deleted) gets no more in this run: its claimed deliveries are given back
        unsent, due as they were."""
        unsent: list[Claimed] = []
        recorded = record_attempts(self.db, self.settings, attempts)
        for attempt, result in zip(attempts, recorded, strict=True):
            endpoint_id = attempt.claimed.delivery.endpoint_id
            self._busy.discard(endpoint_id)
            if result is not Recorded.GONE:
                self.attempted.append(attempt.claimed.delivery.delivery_id)
            if result is Recorded.GONE or not attempt.outcome.delivered:
                self._resting.add(endpoint_id)
                unsent += self.waiting.pop(endpoint_id, ())
            elif endpoint_id in self.waiting:
                self._start(pool, endpoint_id)
        if unsent:
            release(self.db, unsent)

    def close(self) -> None:
        for sender in self._senders:
            sender.close()


def deliver_due(
    db: Database,
    settings: Settings,
    submit: Submit,
    *,
    now: datetime | None = None,
    resolver: Resolver | None = None,
) -> list[int]:
    """One run of the periodic job: send every due delivery until none is due or the run has
    taken :data:`RUN_SECONDS`; the ids of the deliveries attempted, in the order recorded.

    :data:`SENDING_THREADS` threads send, one request at a time to each endpoint; this thread
    alone writes: it claims up to :data:`CLAIM_BATCH` deliveries (:data:`PER_ENDPOINT` of one
    endpoint's), claims more when half of them are done, and records the attempts that came
    back together. ``submit`` is unused (a
    periodic job's signature). ``now`` fixes the clock for the whole run (tests);
    ``resolver`` resolves the endpoints' hosts (None: the system's).
    """
    del submit
    run = _Run(db, settings, now, resolver)
    try:
        with ThreadPoolExecutor(SENDING_THREADS, thread_name_prefix="webhooks") as pool:
            more = run.claim(pool, CLAIM_BATCH) > 0
            while run.in_flight:
                done, run.in_flight = wait(run.in_flight, return_when=FIRST_COMPLETED)
                run.record(pool, [future.result() for future in done])
                if more and run.outstanding <= CLAIM_BATCH // 2:
                    more = run.claim(pool, CLAIM_BATCH - run.outstanding) > 0
    finally:
        run.close()
    return run.attempted
