"""Request signing: the Standard Webhooks test vector, round trips, tampering, clocks, rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.protocol.signing import (
    HEADER_ID,
    HEADER_SIGNATURE,
    HEADER_TIMESTAMP,
    MAX_SIGNATURES,
    BadSignatureError,
    FutureTimestampError,
    MalformedHeaderError,
    MissingHeaderError,
    SecretError,
    SignatureError,
    Signer,
    StaleTimestampError,
    generate_secret,
    new_message_id,
    parse_secret,
    sign,
    verify,
)

# The example published with the Standard Webhooks specification (and used by its libraries).
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

SPEC_HEADERS = {
    HEADER_ID: SPEC_ID,
    HEADER_TIMESTAMP: str(SPEC_TIMESTAMP),
    HEADER_SIGNATURE: SPEC_SIGNATURE,
}

OLD = generate_secret()
NEW = generate_secret()
OTHER = generate_secret()


def headers_for(secret: str, body: bytes = b"{}", timestamp: int = 1000) -> dict[str, str]:
    return sign(secret, body, msg_id="msg_1", timestamp=timestamp)


# --- interoperability --------------------------------------------------------------------------


def test_spec_vector_signs_to_the_published_signature() -> None:
    headers = Signer(SPEC_SECRET).sign(SPEC_BODY, msg_id=SPEC_ID, timestamp=SPEC_TIMESTAMP)
    assert headers == SPEC_HEADERS


def test_spec_vector_verifies() -> None:
    verify(SPEC_SECRET, SPEC_HEADERS, SPEC_BODY, now=SPEC_TIMESTAMP)
    Signer(SPEC_SECRET).verify(SPEC_HEADERS, SPEC_BODY, now=SPEC_TIMESTAMP + 299)


def test_spec_vector_verifies_with_header_names_in_any_case() -> None:
    headers = {"Webhook-Id": SPEC_ID, "WEBHOOK-TIMESTAMP": str(SPEC_TIMESTAMP)}
    headers["Webhook-Signature"] = SPEC_SIGNATURE
    verify(SPEC_SECRET, headers, SPEC_BODY, now=SPEC_TIMESTAMP)


def test_spec_vector_secret_works_without_prefix() -> None:
    verify(SPEC_SECRET.removeprefix("whsec_"), SPEC_HEADERS, SPEC_BODY, now=SPEC_TIMESTAMP)


@given(
    body=st.binary(max_size=512),
    msg_id=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=40),
    timestamp=st.integers(min_value=0, max_value=10**12 - 1),
)
def test_signature_is_plain_hmac_sha256_of_id_timestamp_body(
    body: bytes, msg_id: str, timestamp: int
) -> None:
    key = parse_secret(SPEC_SECRET)
    expected = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    headers = sign(SPEC_SECRET, body, msg_id=msg_id, timestamp=timestamp)
    assert headers[HEADER_SIGNATURE] == "v1," + base64.b64encode(expected).decode()
    verify(SPEC_SECRET, headers, body, now=timestamp)


# --- round trips and tampering -------------------------------------------------------------------


def test_round_trip_with_a_generated_secret() -> None:
    signer = Signer(NEW)
    body = b'{"phase": "draw"}'
    signer.verify(signer.sign(body, msg_id="msg_a", timestamp=5000), body, now=5000)


def test_non_utf8_body_round_trips() -> None:
    body = b"\xff\xfe\x00binary"
    verify(NEW, headers_for(NEW, body), body, now=1000)


def test_tampered_body_is_refused() -> None:
    headers = headers_for(NEW, b'{"card": "7h"}')
    with pytest.raises(BadSignatureError, match="no signature"):
        verify(NEW, headers, b'{"card": "7d"}', now=1000)


def test_tampered_id_is_refused() -> None:
    headers = headers_for(NEW) | {HEADER_ID: "msg_2"}
    with pytest.raises(BadSignatureError):
        verify(NEW, headers, b"{}", now=1000)


def test_tampered_timestamp_within_tolerance_is_refused() -> None:
    headers = headers_for(NEW) | {HEADER_TIMESTAMP: "1001"}
    with pytest.raises(BadSignatureError):
        verify(NEW, headers, b"{}", now=1000)


def test_tampered_signature_is_refused() -> None:
    headers = headers_for(NEW)
    raw = bytearray(base64.b64decode(headers[HEADER_SIGNATURE].removeprefix("v1,")))
    raw[0] ^= 1
    headers[HEADER_SIGNATURE] = "v1," + base64.b64encode(bytes(raw)).decode()
    with pytest.raises(BadSignatureError):
        verify(NEW, headers, b"{}", now=1000)


def test_other_secret_is_refused() -> None:
    with pytest.raises(BadSignatureError):
        verify(OTHER, headers_for(NEW), b"{}", now=1000)


@given(
    body=st.binary(min_size=1, max_size=256),
    index=st.integers(min_value=0),
    flip=st.integers(1, 255),
)
def test_any_changed_body_byte_is_refused(body: bytes, index: int, flip: int) -> None:
    headers = headers_for(NEW, body)
    changed = bytearray(body)
    changed[index % len(body)] ^= flip
    with pytest.raises(BadSignatureError):
        verify(NEW, headers, bytes(changed), now=1000)


# --- the clock ---------------------------------------------------------------------------------


@pytest.mark.parametrize("now", [700, 1000, 1300], ids=["300s-old", "exact", "300s-ahead"])
def test_timestamp_within_tolerance_is_accepted(now: int) -> None:
    verify(NEW, headers_for(NEW, timestamp=1000), b"{}", now=now)


def test_stale_timestamp_is_refused() -> None:
    with pytest.raises(StaleTimestampError, match="301 s old"):
        verify(NEW, headers_for(NEW, timestamp=1000), b"{}", now=1301)


def test_future_timestamp_is_refused() -> None:
    with pytest.raises(FutureTimestampError, match="301 s in the future"):
        verify(NEW, headers_for(NEW, timestamp=1000), b"{}", now=699)


def test_tolerance_is_configurable() -> None:
    headers = headers_for(NEW, timestamp=1000)
    verify(NEW, headers, b"{}", now=1005, tolerance_s=5)
    with pytest.raises(StaleTimestampError):
        verify(NEW, headers, b"{}", now=1005.5, tolerance_s=5)


def test_timestamp_is_checked_before_the_signature() -> None:
    # A replayed old request is reported as stale, whatever its signature.
    headers = headers_for(OTHER, timestamp=1000)
    with pytest.raises(StaleTimestampError):
        verify(NEW, headers, b"{}", now=10_000)


def test_sign_now_uses_the_given_clock_and_fresh_ids() -> None:
    signer = Signer(NEW)
    first = signer.sign_now(b"{}", clock=lambda: 1234.9)
    second = signer.sign_now(b"{}", clock=lambda: 1234.9)
    assert first[HEADER_TIMESTAMP] == "1234"
    assert first[HEADER_ID].startswith("msg_")
    assert first[HEADER_ID] != second[HEADER_ID]
    signer.verify(first, b"{}", now=1235)


# --- key rotation ------------------------------------------------------------------------------


def test_rotation_signs_with_every_key() -> None:
    headers = Signer(NEW, OLD).sign(b"{}", msg_id="msg_1", timestamp=1000)
    assert headers[HEADER_SIGNATURE].count("v1,") == 2
    verify(NEW, headers, b"{}", now=1000)  # a bot that has the new secret
    verify(OLD, headers, b"{}", now=1000)  # a bot that still has the old one
    with pytest.raises(BadSignatureError):
        verify(OTHER, headers, b"{}", now=1000)


def test_rotation_verifier_accepts_either_key() -> None:
    verifier = Signer(NEW, OLD)
    verifier.verify(headers_for(OLD), b"{}", now=1000)
    verifier.verify(headers_for(NEW), b"{}", now=1000)
    with pytest.raises(BadSignatureError):
        verifier.verify(headers_for(OTHER), b"{}", now=1000)


def test_unknown_signature_versions_are_skipped() -> None:
    headers = headers_for(NEW)
    headers[HEADER_SIGNATURE] = "v1a,c29tZXRoaW5n " + headers[HEADER_SIGNATURE]
    verify(NEW, headers, b"{}", now=1000)


def test_module_functions_accept_a_signer() -> None:
    signer = Signer(NEW)
    verify(signer, sign(signer, b"x", msg_id="msg_1", timestamp=1), b"x", now=1)


# --- malformed headers -------------------------------------------------------------------------

GOOD = headers_for(NEW)
GOOD_SIG = GOOD[HEADER_SIGNATURE]


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        pytest.param(
            {HEADER_ID: None}, MissingHeaderError, "missing header webhook-id", id="no-id"
        ),
        pytest.param({HEADER_TIMESTAMP: None}, MissingHeaderError, "webhook-timestamp", id="no-ts"),
        pytest.param({HEADER_SIGNATURE: None}, MissingHeaderError, "signature", id="no-sig"),
        pytest.param({HEADER_ID: "  "}, MissingHeaderError, "empty", id="blank-id"),
        pytest.param({HEADER_SIGNATURE: ""}, MissingHeaderError, "empty", id="empty-sig"),
        pytest.param({HEADER_ID: "m" * 257}, MalformedHeaderError, "longer", id="long-id"),
        pytest.param({HEADER_TIMESTAMP: "soon"}, MalformedHeaderError, "digits", id="ts-word"),
        pytest.param({HEADER_TIMESTAMP: "1000.5"}, MalformedHeaderError, "digits", id="ts-float"),
        pytest.param({HEADER_TIMESTAMP: "-1000"}, MalformedHeaderError, "digits", id="ts-negative"),
        pytest.param({HEADER_TIMESTAMP: "+1000"}, MalformedHeaderError, "digits", id="ts-plus"),
        pytest.param(
            {HEADER_TIMESTAMP: "1_000"}, MalformedHeaderError, "digits", id="ts-underscore"
        ),
        pytest.param(
            {HEADER_TIMESTAMP: "１０００"}, MalformedHeaderError, "digits", id="ts-fullwidth"
        ),
        pytest.param({HEADER_TIMESTAMP: "9" * 40}, MalformedHeaderError, "digits", id="ts-huge"),
        pytest.param(
            {HEADER_SIGNATURE: "garbage"}, MalformedHeaderError, "version,sig", id="no-comma"
        ),
        pytest.param(
            {HEADER_SIGNATURE: ",abc"}, MalformedHeaderError, "version,sig", id="no-version"
        ),
        pytest.param(
            {HEADER_SIGNATURE: "v1,!!notbase64!!"}, MalformedHeaderError, "base64", id="b64"
        ),
        pytest.param(
            {HEADER_SIGNATURE: "v1,AAAA"}, MalformedHeaderError, "3 bytes", id="short-sig"
        ),
        pytest.param({HEADER_SIGNATURE: "v2,AAAA"}, MalformedHeaderError, "no v1", id="only-v2"),
        pytest.param(
            {HEADER_SIGNATURE: " ".join([GOOD_SIG] * (MAX_SIGNATURES + 1))},
            MalformedHeaderError,
            "at most",
            id="too-many",
        ),
    ],
)
def test_malformed_headers_are_refused(
    change: dict[str, str | None], error: type[SignatureError], message: str
) -> None:
    headers = {k: v for k, v in (GOOD | change).items() if v is not None}
    with pytest.raises(error, match=message) as caught:
        verify(NEW, headers, b"{}", now=1000)
    assert isinstance(caught.value, SignatureError)
    assert isinstance(caught.value, ValueError)


def test_extra_spaces_between_signatures_are_fine() -> None:
    headers = GOOD | {HEADER_SIGNATURE: f"  {GOOD_SIG}   {GOOD_SIG} "}
    verify(NEW, headers, b"{}", now=1000)


# --- secrets and arguments ---------------------------------------------------------------------


def test_generated_secrets_are_whsec_base64_of_32_random_bytes() -> None:
    secrets = {generate_secret() for _ in range(20)}
    assert len(secrets) == 20
    for secret in secrets:
        assert secret.startswith("whsec_")
        assert len(parse_secret(secret)) == 32


def test_generate_secret_size_is_checked() -> None:
    assert len(parse_secret(generate_secret(64))) == 64
    with pytest.raises(SecretError):
        generate_secret(8)


@pytest.mark.parametrize(
    "secret",
    [
        pytest.param("whsec_", id="empty"),
        pytest.param("whsec_c2hvcnQ=", id="too-short"),
        pytest.param("whsec_" + base64.b64encode(b"k" * 65).decode(), id="too-long"),
        pytest.param("whsec_not*base64*at*all*not*base64*", id="not-base64"),
        pytest.param("whsec_ünïcode", id="non-ascii"),
    ],
)
def test_bad_secrets_are_refused(secret: str) -> None:
    with pytest.raises(SecretError):
        Signer(secret)


def test_raw_key_bytes_are_accepted_and_sized() -> None:
    key = parse_secret(SPEC_SECRET)
    assert Signer(key).sign(SPEC_BODY, msg_id=SPEC_ID, timestamp=SPEC_TIMESTAMP) == SPEC_HEADERS
    with pytest.raises(SecretError):
        Signer(b"short")


def test_signer_repr_does_not_show_the_key() -> None:
    assert "MfKQ" not in repr(Signer(SPEC_SECRET))
    assert repr(Signer(NEW, OLD)) == "<Signer with 2 key(s)>"


@pytest.mark.parametrize(
    "msg_id", ["", "msg.1", "msg 1", "msg\r\nX-Evil: 1", "msg_é", "m" * 257], ids=repr
)
def test_sign_refuses_unsafe_message_ids(msg_id: str) -> None:
    with pytest.raises(ValueError, match="msg_id"):
        sign(NEW, b"{}", msg_id=msg_id, timestamp=1)


@pytest.mark.parametrize("timestamp", [1.5, -1, 10**12, True, "1000"], ids=repr)
def test_sign_refuses_bad_timestamps(timestamp: object) -> None:
    with pytest.raises(ValueError, match="timestamp"):
        sign(NEW, b"{}", msg_id="msg_1", timestamp=timestamp)  # type: ignore[arg-type]


def test_new_message_ids_are_unique_and_header_safe() -> None:
    ids = {new_message_id() for _ in range(100)}
    assert len(ids) == 100
    for msg_id in ids:
        sign(NEW, b"", msg_id=msg_id, timestamp=0)  # passes the id checks
