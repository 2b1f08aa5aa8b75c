"""Webhook delivery to a real receiver on loopback (SQLite and PostgreSQL): a receiver that
fails, times out and recovers gets every retry with the same ``webhook-id``, each signed so the
SDK's receiver verifies it; the retry schedule, the run of failures that disables an endpoint,
``410 Gone``, redelivery, rotation's two signatures, the URL guard at connect time, two senders
at once, a sender that dies mid-delivery, and the outbox's rollback. The clock is injected
(``now=``), never slept on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from sqlalchemy import func, select
from webhook_receiver import Receiver, headers_of, verified

from arena.db.models import (
    EventRow,
    WebhookAttemptRow,
    WebhookDeliveryRow,
    WebhookEndpointRow,
    utcnow,
)
from arena.db.session import Database
from arena.events import EventType
from arena.protocol.signing import BadSignatureError
from arena.reading.queries.webhooks import delivery_log, endpoint_detail
from arena.services.bots import register_bot
from arena.services.events import emit
from arena.services.webhook_attempts import Attempt, Recorded, record_attempts
from arena.services.webhook_endpoints import (
    create_endpoint,
    enable_endpoint,
    end_endpoint_rotation,
    redeliver,
    rotate_endpoint_secret,
)
from arena.services.webhooks import claim_due, deliver_due
from arena.settings import Settings, load_settings
from arena.states import DeliveryStatus
from arena.webhooks.sender import Outcome

#: Generous, so that a loaded machine never turns an answer into a timeout: only a ``hang``
#: waits it out.
TIMEOUT_S = 2.0


def settings_for(db: Database, **changes: object) -> Settings:
    return load_settings(
        {},
        database_url=db.url,
        allow_loopback=True,
        webhook_timeout_seconds=TIMEOUT_S,
        **changes,
    )


def nothing(_ids: object) -> None:
    """The periodic job's ``submit`` (webhooks schedule no matches)."""


@dataclass
class Hook:
    """A bot with one endpoint at a loopback receiver."""

    db: Database
    settings: Settings
    receiver: Receiver
    bot: int
    endpoint: int
    secret: str

    def emit(self, type_: EventType = EventType.BOT_RESUMED, **data: object) -> str:
        """Commit one event about the bot; its message id."""
        with self.db.session() as session:
            event = emit(session, type_, {"bot": {"id": self.bot}, **data}, bot_id=self.bot)
            return event.message_id

    def run(self, at: datetime) -> list[int]:
        return deliver_due(self.db, self.settings, nothing, now=at)

    def delivery(self, delivery_id: int = 1) -> WebhookDeliveryRow:
        with self.db.session() as session:
            return session.get_one(WebhookDeliveryRow, delivery_id)

    def endpoint_row(self) -> WebhookEndpointRow:
        with self.db.session() as session:
            return session.get_one(WebhookEndpointRow, self.endpoint)


def make_hook(db: Database, receiver: Receiver, **changes: object) -> Hook:
    settings = settings_for(db, **changes)
    bot = register_bot(db, name="hooked", owner="o", url="http://127.0.0.1:9").bot_id
    created = create_endpoint(
        db, settings, bot, url=receiver.url + "/hooks", event_types=[t.value for t in EventType]
    )
    return Hook(db, settings, receiver, bot, created.endpoint_id, created.secret)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def hook(db: Database, receiver: Receiver) -> Hook:
    return make_hook(db, receiver)


def test_a_receiver_that_fails_times_out_and_recovers_gets_one_webhook_id_signed_each_time(
    hook: Hook, receiver: Receiver
) -> None:
    receiver._script = ["500", "hang", "200"]
    message_id = hook.emit(EventType.BOT_RESUMED, passed_probes=2)
    start = utcnow()
    assert hook.run(start) == [1]
    assert hook.delivery().status is DeliveryStatus.PENDING
    assert hook.run(start + timedelta(seconds=4)) == []  # not due before 5 s
    assert hook.run(start + timedelta(seconds=5)) == [1]  # the timeout
    assert hook.run(start + timedelta(seconds=15)) == [1]
    requests = receiver.wait_for(3)
    events = [verified(r, hook.secret) for r in requests]
    assert {e.id for e in events} == {message_id}
    assert [e.type for e in events] == [EventType.BOT_RESUMED] * 3
    assert events[0].data == {"bot": {"id": hook.bot}, "passed_probes": 2}
    assert [r.body for r in requests] == [requests[0].body] * 3  # the same bytes every time
    assert [r.target for r in requests] == [("POST", "/hooks")] * 3
    stamps = [int(headers_of(r)["webhook-timestamp"]) for r in requests]
    assert stamps == [int((start + timedelta(seconds=s)).timestamp()) for s in (0, 5, 15)]
    delivery = hook.delivery()
    assert delivery.status is DeliveryStatus.DELIVERED and delivery.attempts == 3
    (entry,) = delivery_log(hook.db, hook.bot, hook.endpoint)
    log = entry["attempt_log"]
    assert [a["status_code"] for a in log] == [500, None, 200]
    assert log[0]["error"].startswith("HTTP 500")
    assert log[1]["error"].startswith("timeout:") and log[1]["latency_ms"] == TIMEOUT_S * 1000
    assert log[2]["error"] is None and entry["webhook_id"] == message_id
    assert hook.endpoint_row().failed_attempts == 0


@pytest.mark.parametrize("status", ["200", "202", "204", "299"])
def test_any_2xx_answer_delivers(db: Database, status: str) -> None:
    server = Receiver(then=status).start()
    try:
        hook = make_hook(db, server)
        hook.emit()
        hook.run(utcnow())
        assert hook.delivery().status is DeliveryStatus.DELIVERED
        assert hook.delivery().last_status_code == int(status)
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("status", "error"),
    [("302", "HTTP 302 redirect"), ("404", "HTTP 404"), ("503", "HTTP 503")],
)
def test_a_redirect_or_an_error_status_is_a_failure_and_no_redirect_is_followed(
    db: Database, status: str, error: str
) -> None:
    server = Receiver(then=status).start()
    try:
        hook = make_hook(db, server)
        hook.emit()
        hook.run(utcnow())
        delivery = hook.delivery()
        assert delivery.status is DeliveryStatus.PENDING
        assert delivery.last_status_code == int(status)
        assert (delivery.last_error or "").startswith(error)
        assert len(server.requests) == 1
    finally:
        server.stop()


RETRY_TABLE = [
    # (failed attempts so far, seconds after the event of that failure, next due or None)
    (1, 0, 5),
    (2, 5, 15),
    (3, 15, 35),
    (14, 40955, 81915),
    (15, 81915, None),  # 81915 + 5 * 2**14 is past the day: the delivery has failed
]


@pytest.mark.parametrize(("failures", "at_s", "next_s"), RETRY_TABLE)
def test_the_backoff_schedule_with_an_injected_clock(
    hook: Hook, receiver: Receiver, failures: int, at_s: int, next_s: int | None
) -> None:
    receiver.then = "500"
    hook.emit()
    with hook.db.session() as session:
        event_at = session.get_one(EventRow, 2).created_at  # event 1 is the bot's version
        session.get_one(WebhookDeliveryRow, 1).attempts = failures - 1
    hook.run(event_at + timedelta(seconds=at_s))
    delivery = hook.delivery()
    assert delivery.attempts == failures
    if next_s is None:
        assert delivery.status is DeliveryStatus.FAILED
        assert endpoint_detail(hook.db, hook.bot, hook.endpoint)["deliveries"]["failed"] == 1
    else:
        assert delivery.status is DeliveryStatus.PENDING
        assert delivery.next_attempt_at == event_at + timedelta(seconds=next_s)


def test_a_run_of_failures_disables_the_endpoint_pauses_its_deliveries_and_enable_resumes(
    db: Database, receiver: Receiver
) -> None:
    hook = make_hook(db, receiver, webhook_failures_to_disable=3)
    receiver.then = "500"
    ids = [hook.emit() for _ in range(4)]
    start = utcnow()
    # One attempt per run, and the endpoint backs off as one delivery would (5 s, then 10 s):
    # a run inside the back-off sends nothing, however many deliveries wait.
    assert len(hook.run(start)) == 1
    assert hook.run(start + timedelta(seconds=4)) == []
    assert len(hook.run(start + timedelta(seconds=5))) == 1
    assert hook.run(start + timedelta(seconds=14)) == []
    assert len(hook.run(start + timedelta(seconds=15))) == 1
    endpoint = hook.endpoint_row()
    assert not endpoint.enabled and endpoint.failed_attempts == 3
    assert "3 delivery attempts failed in a row" in (endpoint.disabled_reason or "")
    assert "HTTP 500" in (endpoint.disabled_reason or "")
    assert len(receiver.requests) == 3  # the fourth was paused, not sent
    later = start + timedelta(minutes=10)
    assert hook.run(later) == []
    with db.session() as session:
        # Queued while disabled, paused with the others: nothing is lost.
        ids.append(emit(session, EventType.BOT_RESUMED, {}, bot_id=hook.bot).message_id)
    with db.session() as session:
        statuses = session.scalars(select(WebhookDeliveryRow.status)).all()
    assert statuses == [DeliveryStatus.PENDING] * 5
    assert hook.run(later) == []
    receiver.then = "200"
    enable_endpoint(db, hook.bot, hook.endpoint, now=later)
    assert hook.endpoint_row().enabled and hook.endpoint_row().failed_attempts == 0
    assert sorted(hook.run(later)) == [1, 2, 3, 4, 5]
    got = {headers_of(r)["webhook-id"] for r in receiver.requests[3:]}
    assert got == set(ids)
    detail = endpoint_detail(db, hook.bot, hook.endpoint)
    assert detail["enabled"] and detail["disabled_reason"] is None
    assert detail["deliveries"] == {"pending": 0, "delivered": 5, "failed": 0}


def test_a_410_gone_disables_the_endpoint_at_once(hook: Hook, receiver: Receiver) -> None:
    receiver.then = "410"
    hook.emit()
    hook.run(utcnow())
    endpoint = hook.endpoint_row()
    assert not endpoint.enabled
    assert "410 Gone" in (endpoint.disabled_reason or "")


def test_redeliver_sends_a_delivered_event_again_with_the_same_webhook_id(
    hook: Hook, receiver: Receiver
) -> None:
    message_id = hook.emit()
    start = utcnow()
    hook.run(start)
    assert hook.delivery().status is DeliveryStatus.DELIVERED
    redeliver(hook.db, hook.bot, hook.endpoint, 1, now=start + timedelta(hours=30))
    assert hook.delivery().status is DeliveryStatus.PENDING
    assert hook.run(start + timedelta(hours=30)) == [1]
    first, again = receiver.wait_for(2)
    assert verified(first, hook.secret).id == verified(again, hook.secret).id == message_id
    assert hook.delivery().status is DeliveryStatus.DELIVERED and hook.delivery().attempts == 2


def test_a_redelivered_old_event_that_fails_gets_its_one_attempt(
    hook: Hook, receiver: Receiver
) -> None:
    receiver._script = ["200", "500"]
    hook.emit()
    start = utcnow()
    hook.run(start)
    redeliver(hook.db, hook.bot, hook.endpoint, 1, now=start + timedelta(hours=30))
    hook.run(start + timedelta(hours=30))
    assert hook.delivery().status is DeliveryStatus.FAILED  # past the event's retry window


def test_rotation_signs_with_both_secrets_until_the_window_ends(
    hook: Hook, receiver: Receiver
) -> None:
    old = hook.secret
    start = utcnow()
    rotation = rotate_endpoint_secret(hook.db, hook.bot, hook.endpoint, window_hours=1, now=start)
    assert rotation.previous_valid_until == start + timedelta(hours=1)
    detail = endpoint_detail(hook.db, hook.bot, hook.endpoint)
    assert detail["previous_secret_valid_until"] == rotation.previous_valid_until.isoformat()
    hook.emit()
    hook.run(start + timedelta(minutes=30))
    (during,) = receiver.wait_for(1)
    assert len(headers_of(during)["webhook-signature"].split()) == 2
    verified(during, old)
    verified(during, rotation.secret)
    hook.emit()
    hook.run(start + timedelta(hours=2))  # the window is over: the new secret only
    after = receiver.wait_for(2)[1]
    verified(after, rotation.secret)
    with pytest.raises(BadSignatureError):
        verified(after, old)
    end_endpoint_rotation(hook.db, hook.bot, hook.endpoint)
    assert endpoint_detail(hook.db, hook.bot, hook.endpoint)["previous_secret_valid_until"] is None


def test_a_rotation_without_a_window_cuts_over_at_once(hook: Hook, receiver: Receiver) -> None:
    rotation = rotate_endpoint_secret(hook.db, hook.bot, hook.endpoint, window_hours=0)
    assert rotation.previous_valid_until is None
    hook.emit()
    hook.run(utcnow())
    (request,) = receiver.wait_for(1)
    verified(request, rotation.secret)
    with pytest.raises(BadSignatureError):
        verified(request, hook.secret)


def test_a_host_that_resolves_somewhere_forbidden_at_connect_time_is_refused(
    db: Database, receiver: Receiver
) -> None:
    answers = {"hooks.example.com": "127.0.0.1"}

    def resolver(host: str, _port: int) -> list[str]:
        return [answers[host]]

    settings = settings_for(db)
    bot = register_bot(db, name="rebinding", owner="o", url="http://127.0.0.1:9").bot_id
    port = receiver.url.rsplit(":", 1)[1]
    url = f"http://hooks.example.com:{port}/"
    created = create_endpoint(
        db, settings, bot, url=url, event_types=["bot.resumed"], resolver=resolver
    )
    with db.session() as session:
        emit(session, EventType.BOT_RESUMED, {}, bot_id=bot)
    answers["hooks.example.com"] = "169.254.169.254"  # DNS now points at cloud metadata
    deliver_due(db, settings, nothing, now=utcnow(), resolver=resolver)
    (entry,) = delivery_log(db, bot, created.endpoint_id)
    assert entry["status"] == "pending" and entry["last_status_code"] is None
    assert entry["last_error"].startswith("refused at connect:")
    assert "169.254.169.254" in entry["last_error"] and "metadata" in entry["last_error"]
    assert receiver.requests == []


def test_an_endpoint_gets_one_request_at_a_time_in_the_order_its_events_fell_due(
    hook: Hook, receiver: Receiver
) -> None:
    receiver.then = "slow"
    ids = [hook.emit() for _ in range(6)]
    assert hook.run(utcnow()) == [1, 2, 3, 4, 5, 6]
    assert [headers_of(r)["webhook-id"] for r in receiver.requests] == ids
    assert receiver.most_at_once == 1


def test_a_failing_endpoint_gets_one_attempt_a_run_and_holds_up_no_other(
    db: Database, receiver: Receiver
) -> None:
    failing = make_hook(db, receiver)
    healthy_receiver = Receiver().start()
    try:
        bot = register_bot(db, name="healthy", owner="o", url="http://127.0.0.1:9").bot_id
        create_endpoint(
            db, failing.settings, bot, url=healthy_receiver.url, event_types=["bot.resumed"]
        )
        receiver.then = "hang"
        for _ in range(5):
            failing.emit()
        with db.session() as session:
            for _ in range(5):
                emit(session, EventType.BOT_RESUMED, {}, bot_id=bot)
        attempted = failing.run(utcnow())
        assert len(receiver.requests) == 1  # one timeout, then nothing more to it in this run
        assert len(healthy_receiver.wait_for(5)) == 5 and len(attempted) == 6
        assert failing.delivery(2).status is DeliveryStatus.PENDING  # given back, still due
        assert failing.delivery(2).lease_owner is None and failing.delivery(2).attempts == 0
    finally:
        healthy_receiver.stop()


def test_a_claim_holds_at_most_so_many_of_one_endpoint(hook: Hook) -> None:
    for _ in range(10):
        hook.emit()
    claimed = claim_due(hook.db, limit=32, lease_seconds=60, now=utcnow())
    assert [c.delivery.delivery_id for c in claimed] == [1, 2, 3, 4]  # PER_ENDPOINT
    assert claim_due(hook.db, limit=32, lease_seconds=60, holding={hook.endpoint: 4}) == []
    assert claim_due(hook.db, limit=32, lease_seconds=60, resting={hook.endpoint}) == []


def test_a_claim_takes_at_most_its_limit(hook: Hook) -> None:
    for _ in range(10):
        hook.emit()
    now = utcnow()
    first = claim_due(hook.db, limit=4, lease_seconds=60, now=now)
    second = claim_due(hook.db, limit=4, lease_seconds=60, now=now)
    third = claim_due(hook.db, limit=4, lease_seconds=60, now=now)
    ids = [c.delivery.delivery_id for c in first + second + third]
    assert [len(first), len(second), len(third)] == [4, 4, 2]
    assert sorted(ids) == list(range(1, 11))  # oldest due first, none twice


def test_two_senders_at_once_send_each_delivery_once(hook: Hook, receiver: Receiver) -> None:
    ids = {hook.emit() for _ in range(24)}
    now = utcnow()
    results: list[list[int]] = []
    barrier = threading.Barrier(2)

    def sender() -> None:
        barrier.wait()
        results.append(deliver_due(hook.db, hook.settings, nothing, now=now))

    threads = [threading.Thread(target=sender) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    attempted = [d for run in results for d in run]
    assert sorted(attempted) == list(range(1, 25))  # each once, across both runs
    got = sorted(headers_of(r)["webhook-id"] for r in receiver.requests)
    assert got == sorted(ids), (len(got), len(set(got)), receiver.connections)
    with hook.db.session() as session:
        assert session.scalar(select(func.count()).select_from(WebhookAttemptRow)) == 24


def test_a_sender_that_dies_after_claiming_leaves_the_delivery_to_be_sent_again(
    hook: Hook, receiver: Receiver
) -> None:
    message_id = hook.emit()
    now = utcnow()
    (claimed,) = claim_due(hook.db, limit=4, lease_seconds=60, now=now)  # ...and then dies
    assert hook.run(now + timedelta(seconds=30)) == []  # the lease still holds
    assert hook.run(now + timedelta(seconds=61)) == [1]
    assert verified(receiver.wait_for(1)[0], hook.secret).id == message_id
    assert claimed.delivery.message_id == message_id


def test_an_attempt_whose_lease_was_lost_is_logged_but_decides_nothing(
    hook: Hook, receiver: Receiver
) -> None:
    hook.emit()
    now = utcnow()
    (slow,) = claim_due(hook.db, limit=4, lease_seconds=60, now=now)
    redeliver(hook.db, hook.bot, hook.endpoint, 1, now=now)  # the owner asks meanwhile
    assert hook.run(now) == [1]
    late = Outcome(500, 12.0, "HTTP 500: late")
    (recorded,) = record_attempts(hook.db, hook.settings, [Attempt(slow, late, now)])
    assert recorded is Recorded.LOGGED
    delivery = hook.delivery()
    assert delivery.status is DeliveryStatus.DELIVERED and delivery.attempts == 2
    (entry,) = delivery_log(hook.db, hook.bot, hook.endpoint)
    assert [a["status_code"] for a in entry["attempt_log"]] == [200, 500]
    assert hook.endpoint_row().failed_attempts == 0


def test_a_rolled_back_transaction_leaves_no_event_and_no_delivery(hook: Hook) -> None:
    with hook.db.session() as session:
        before = session.scalar(select(func.count()).select_from(EventRow))
    with pytest.raises(RuntimeError), hook.db.session() as session:
        emit(session, EventType.BOT_RESUMED, {}, bot_id=hook.bot)
        raise RuntimeError("the change this event reports failed")
    with hook.db.session() as session:
        assert session.scalar(select(func.count()).select_from(EventRow)) == before
        assert session.scalar(select(func.count()).select_from(WebhookDeliveryRow)) == 0
    assert hook.run(utcnow()) == []


def test_only_subscribed_event_types_are_queued(db: Database, receiver: Receiver) -> None:
    settings = settings_for(db)
    bot = register_bot(db, name="picky", owner="o", url="http://127.0.0.1:9").bot_id
    created = create_endpoint(db, settings, bot, url=receiver.url, event_types=["bot.suspended"])
    with db.session() as session:
        emit(session, EventType.BOT_RESUMED, {}, bot_id=bot)
        emit(session, EventType.BOT_SUSPENDED, {"failed_probes": 3}, bot_id=bot)
    deliver_due(db, settings, nothing, now=utcnow())
    (request,) = receiver.wait_for(1)
    assert request.target == ("POST", "/")  # the root of a URL without a path
    event = verified(request, created.secret)
    assert event.type is EventType.BOT_SUSPENDED and event.data == {"failed_probes": 3}
