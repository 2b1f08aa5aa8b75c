"""The SDK's webhook receiver (``arena.bots.sdk.WebhookReceiver``): a message is taken only
when a signature verifies with one of its secrets, its timestamp is within the tolerance, its
body is a webhook body of a known type and its ``webhook-id`` is new; every refusal is a
``ValueError`` saying why. The clock is passed in."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arena.bots.sdk import BodyError, ReplayedMessageError, WebhookEvent, WebhookReceiver
from arena.events import EventType
from arena.protocol.signing import (
    BadSignatureError,
    FutureTimestampError,
    MissingHeaderError,
    Signer,
    StaleTimestampError,
    generate_secret,
)
from arena.webhooks.payload import encode_body

SECRET = generate_secret()
OTHER = generate_secret()
NOW = 1_900_000_000
BODY = encode_body("match.finished", datetime(2030, 3, 17, 12, 0, tzinfo=UTC), {"match": 7})


def signed(body: bytes = BODY, *, msg_id: str = "msg_a", at: int = NOW, secrets=(SECRET,)):
    return Signer(*secrets).sign(body, msg_id=msg_id, timestamp=at)


def test_a_signed_fresh_message_is_parsed_into_a_typed_event() -> None:
    event = WebhookReceiver(SECRET).receive(signed(), BODY, now=NOW)
    assert event == WebhookEvent(
        "msg_a", EventType.MATCH_FINISHED, datetime(2030, 3, 17, 12, 0, tzinfo=UTC), {"match": 7}
    )


def test_header_names_are_matched_without_regard_to_case() -> None:
    headers = {k.upper(): v for k, v in signed().items()}
    assert WebhookReceiver(SECRET).receive(headers, BODY, now=NOW).id == "msg_a"


@pytest.mark.parametrize(
    ("held", "signed_with"),
    [
        ((SECRET, OTHER), (SECRET,)),
        ((OTHER, SECRET), (SECRET,)),
        ((SECRET,), (OTHER, SECRET)),  # a rotation: the arena signs with the old and the new
    ],
    ids=["first-of-two", "second-of-two", "one-of-two-signatures"],
)
def test_any_secret_held_verifies_any_signature_sent(
    held: tuple[str, ...], signed_with: tuple[str, ...]
) -> None:
    receiver = WebhookReceiver(*held)
    assert receiver.receive(signed(secrets=signed_with), BODY, now=NOW).id == "msg_a"


def test_a_signature_made_with_another_secret_is_refused() -> None:
    with pytest.raises(BadSignatureError):
        WebhookReceiver(SECRET).receive(signed(secrets=(OTHER,)), BODY, now=NOW)


def test_a_changed_body_is_refused() -> None:
    with pytest.raises(BadSignatureError):
        WebhookReceiver(SECRET).receive(signed(), BODY.replace(b"7", b"8"), now=NOW)


@pytest.mark.parametrize(
    ("skew", "error"),
    [(-301, StaleTimestampError), (301, FutureTimestampError)],
    ids=["stale", "future"],
)
def test_a_timestamp_beyond_the_tolerance_is_refused(skew: int, error: type[Exception]) -> None:
    with pytest.raises(error):
        WebhookReceiver(SECRET).receive(signed(at=NOW + skew), BODY, now=NOW)
    assert WebhookReceiver(SECRET, tolerance_s=400).receive(signed(at=NOW + skew), BODY, now=NOW)


def test_a_missing_header_is_refused() -> None:
    headers = signed()
    del headers["webhook-signature"]
    with pytest.raises(MissingHeaderError):
        WebhookReceiver(SECRET).receive(headers, BODY, now=NOW)


def test_a_webhook_id_seen_within_the_tolerance_is_a_replay_and_forgotten_after_it() -> None:
    receiver = WebhookReceiver(SECRET)
    receiver.receive(signed(), BODY, now=NOW)
    retry = signed(at=NOW + 60)  # the arena's retry: same id, a new timestamp and signature
    with pytest.raises(ReplayedMessageError, match="received 60 s ago"):
        receiver.receive(retry, BODY, now=NOW + 60)
    later = signed(at=NOW + 301)
    assert receiver.receive(later, BODY, now=NOW + 301).id == "msg_a"


def test_a_refused_message_does_not_burn_its_id() -> None:
    receiver = WebhookReceiver(SECRET)
    with pytest.raises(BadSignatureError):
        receiver.receive(signed(secrets=(OTHER,)), BODY, now=NOW)
    assert receiver.receive(signed(), BODY, now=NOW).id == "msg_a"


def test_forget_lets_the_retry_of_a_message_whose_handling_failed_in() -> None:
    receiver = WebhookReceiver(SECRET)
    receiver.receive(signed(), BODY, now=NOW)
    receiver.forget("msg_a")
    assert receiver.receive(signed(at=NOW + 5), BODY, now=NOW + 5).id == "msg_a"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[]", "not a webhook body"),
        (b'{"type":"match.finished","data":{}}', "not a webhook body"),
        (b'{"type":"x","timestamp":"2030-01-01T00:00:00","data":{}}', "no time zone"),
        (b'{"type":"bot.exploded","timestamp":"2030-01-01T00:00:00Z","data":{}}', "unknown"),
    ],
    ids=["not-an-object", "no-timestamp", "naive-timestamp", "unknown-type"],
)
def test_a_body_that_is_not_a_webhook_body_is_refused_by_name(body: bytes, message: str) -> None:
    with pytest.raises(BodyError, match=message):
        WebhookReceiver(SECRET).receive(signed(body), body, now=NOW)


def test_every_refusal_is_a_value_error() -> None:
    for error in (BodyError, ReplayedMessageError, BadSignatureError):
        assert issubclass(error, ValueError)
