"""``/api/v1/bots/{id}/webhooks``: registering an endpoint (its secret shown once, the URL
guard's production rules, event types checked by name), reading it and its delivery log with
no secret in any read, rotating, enabling, redelivering, deleting; and who may do each
(anonymous, the bot's owner, another bot's owner, the organiser). SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, make_api
from api_world import ADMIN_TOKEN
from webhook_receiver import Receiver, headers_of, verified

from arena.db.models import WebhookEndpointRow, utcnow
from arena.events import EventType
from arena.services.bots import register_bot
from arena.services.events import emit
from arena.services.webhook_endpoints import MAX_ENDPOINTS_PER_BOT
from arena.services.webhooks import deliver_due
from arena.settings import load_settings

ALL_TYPES = [t.value for t in EventType]


@dataclass
class Owners:
    api: Api
    mine: int
    other: int
    tokens: dict[str, str | None]
    receiver: Receiver

    def hooks(self, bot: int | None = None) -> str:
        return f"/api/v1/bots/{self.mine if bot is None else bot}/webhooks"

    def register(self, token: str | None = None, **body: Any) -> Any:
        body = {"url": self.receiver.url + "/hooks", "event_types": ["match.finished"], **body}
        return self.api.post(self.hooks(), body, token=token or self.tokens["owner"])

    def delete(self, path: str, token: str | None) -> Any:
        return self.api.client.delete(path, headers=self.api.headers(token))

    def deliver(self) -> list[int]:
        settings = load_settings({}, database_url=self.api.db.url, allow_loopback=True)
        return deliver_due(self.api.db, settings, lambda _ids: None, now=utcnow())

    def emit(self, type_: EventType = EventType.MATCH_FINISHED) -> str:
        with self.api.db.session() as session:
            return emit(session, type_, {"match": 1}, audience=[self.mine]).message_id


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver().start()
    yield server
    server.stop()


@pytest.fixture
def owners(api: Api, receiver: Receiver) -> Owners:
    mine = register_bot(api.db, name="mine", owner="me", url="http://127.0.0.1:9")
    other = register_bot(api.db, name="other", owner="them", url="http://127.0.0.1:9")
    tokens = {
        "anonymous": None,
        "owner": mine.token,
        "other_owner": other.token,
        "organiser": ADMIN_TOKEN,
    }
    return Owners(api, mine.bot_id, other.bot_id, tokens, receiver)


def test_registering_shows_the_secret_once_and_no_read_shows_it(owners: Owners) -> None:
    created = owners.register(event_types=["match.finished", "bot.suspended", "match.finished"])
    assert created.status_code == 201, created.json
    secret = created.json["secret"]
    assert secret.startswith("whsec_")
    webhook = created.json["webhook"]
    assert created.headers["Location"].endswith(f"{owners.hooks()}/{created.json['id']}")
    assert webhook["event_types"] == ["match.finished", "bot.suspended"]
    assert webhook["enabled"] and webhook["failed_attempts"] == 0
    assert webhook["deliveries"] == {"pending": 0, "delivered": 0, "failed": 0}
    path = f"{owners.hooks()}/{created.json['id']}"
    owners.emit()
    owners.deliver()
    reads = [
        owners.api.get(p, token=owners.tokens["owner"])
        for p in (owners.hooks(), path, path + "/deliveries", path + "/deliveries/1")
    ]
    for read in reads:
        assert read.status_code == 200, read.json
        text = read.get_data(as_text=True)
        assert secret not in text and "whsec_" not in text and 'secret"' not in text


def test_the_delivery_log_shows_each_delivery_and_its_attempts(
    owners: Owners, receiver: Receiver
) -> None:
    receiver._script = ["500"]
    hook = owners.register().json
    message_id = owners.emit()
    owners.deliver()
    path = f"{owners.hooks()}/{hook['id']}/deliveries"
    (item,) = owners.api.get(path, token=owners.tokens["owner"]).json["items"]
    assert item["webhook_id"] == message_id and item["event"]["type"] == "match.finished"
    assert item["status"] == "pending" and item["attempts"] == 1
    assert item["last_status_code"] == 500 and item["last_error"].startswith("HTTP 500")
    assert item["next_attempt_at"] is not None and item["last_latency_ms"] > 0
    (attempt,) = item["attempt_log"]
    assert attempt["status_code"] == 500 and attempt["latency_ms"] == item["last_latency_ms"]
    detail = owners.api.get(f"{path}/{item['id']}", token=owners.tokens["owner"]).json
    assert detail["event"]["data"] == {"match": 1}
    pending = owners.api.get(path + "?status=pending", token=ADMIN_TOKEN).json["items"]
    assert [d["id"] for d in pending] == [item["id"]]
    assert owners.api.get(path + "?status=delivered", token=ADMIN_TOKEN).json["items"] == []
    assert owners.api.get(path + "?status=lost", token=ADMIN_TOKEN).status_code == 422


def test_the_log_is_paged_newest_first(owners: Owners) -> None:
    hook = owners.register().json
    for _ in range(5):
        owners.emit()
    path = f"{owners.hooks()}/{hook['id']}/deliveries?limit=2"
    first = owners.api.get(path, token=ADMIN_TOKEN).json
    assert [d["id"] for d in first["items"]] == [5, 4] and first["next_before"] == 4
    second = owners.api.get(f"{path}&before=4", token=ADMIN_TOKEN).json
    assert [d["id"] for d in second["items"]] == [3, 2]
    last = owners.api.get(f"{path}&before=2", token=ADMIN_TOKEN).json
    assert [d["id"] for d in last["items"]] == [1] and last["next_before"] is None


def test_redeliver_sends_again_with_the_same_webhook_id(owners: Owners, receiver: Receiver) -> None:
    created = owners.register().json
    owners.emit()
    owners.deliver()
    path = f"{owners.hooks()}/{created['id']}/deliveries/1"
    again = owners.api.post(path + "/redeliver", token=owners.tokens["owner"])
    assert again.status_code == 202 and again.json["status"] == "pending"
    owners.deliver()
    first, second = receiver.wait_for(2)
    assert headers_of(first)["webhook-id"] == headers_of(second)["webhook-id"]
    assert verified(second, created["secret"]).type is EventType.MATCH_FINISHED
    assert owners.api.get(path, token=ADMIN_TOKEN).json["attempts"] == 2


def test_a_disabled_endpoint_refuses_redelivery_until_enabled(owners: Owners) -> None:
    created = owners.register().json
    owners.emit()
    with owners.api.db.session() as session:
        endpoint = session.get_one(WebhookEndpointRow, created["id"])
        endpoint.enabled, endpoint.disabled_reason = False, "disabled at (test): 15 failed"
    path = f"{owners.hooks()}/{created['id']}"
    refused = owners.api.post(path + "/deliveries/1/redeliver", token=owners.tokens["owner"])
    assert refused.status_code == 409 and refused.json["type"].endswith("/webhook-disabled")
    assert "enable it" in refused.json["detail"]
    shown = owners.api.get(path, token=owners.tokens["owner"]).json
    assert not shown["enabled"] and shown["disabled_reason"] == "disabled at (test): 15 failed"
    enabled = owners.api.post(path + "/enable", token=owners.tokens["owner"])
    assert enabled.status_code == 200 and enabled.json["enabled"]
    assert enabled.json["disabled_reason"] is None
    assert owners.deliver() == [1]


def test_rotating_shows_the_new_secret_once_and_the_old_one_signs_until_the_window_ends(
    owners: Owners, receiver: Receiver
) -> None:
    created = owners.register().json
    path = f"{owners.hooks()}/{created['id']}"
    rotated = owners.api.post(path + "/secret", token=owners.tokens["owner"])
    assert rotated.status_code == 200
    new, until = rotated.json["secret"], rotated.json["previous_valid_until"]
    assert new.startswith("whsec_") and new != created["secret"] and until is not None
    assert owners.api.get(path, token=ADMIN_TOKEN).json["previous_secret_valid_until"] == until
    owners.emit()
    owners.deliver()
    (request,) = receiver.wait_for(1)
    verified(request, created["secret"])
    verified(request, new)
    ended = owners.delete(path + "/secret/previous", owners.tokens["owner"])
    assert ended.status_code == 200 and ended.json["previous_valid_until"] is None
    assert owners.api.get(path, token=ADMIN_TOKEN).json["previous_secret_valid_until"] is None


def test_deleting_an_endpoint_takes_its_log_with_it(owners: Owners) -> None:
    created = owners.register().json
    owners.emit()
    path = f"{owners.hooks()}/{created['id']}"
    assert owners.delete(path, owners.tokens["owner"]).status_code == 204
    gone = owners.api.get(path, token=owners.tokens["owner"])
    assert (
        gone.status_code == 404 and gone.json["detail"] == f"webhook {created['id']} does not exist"
    )
    assert owners.delete(path, owners.tokens["owner"]).status_code == 404
    assert owners.deliver() == []


def test_another_bots_endpoint_is_not_found_through_this_bot(owners: Owners) -> None:
    created = owners.register().json
    other = owners.api.get(
        f"{owners.hooks(owners.other)}/{created['id']}", token=owners.tokens["other_owner"]
    )
    assert other.status_code == 404


@pytest.mark.parametrize(
    ("event_types", "named"),
    [(["match.finished", "match.exploded"], "'match.exploded'"), ([], "event_types")],
    ids=["unknown", "none"],
)
def test_event_types_are_checked_by_name(
    owners: Owners, event_types: list[str], named: str
) -> None:
    refused = owners.register(event_types=event_types)
    assert refused.status_code == 422
    assert named in refused.json["detail"]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.1.2.3/hooks", "private (10.0.0.0/8)"),
        ("http://169.254.169.254/latest", "a cloud metadata endpoint"),
        ("http://[::ffff:192.168.0.1]/", "private (192.168.0.0/16)"),
        ("http://0x7f.1:8000/", "ARENA_ALLOW_LOOPBACK"),
        ("ftp://hooks.example.com/", "only http and https"),
        ("https://hooks.example.com/in?token=1", "no query or fragment"),
        ("https://user@hooks.example.com/", "user info"),
    ],
)
def test_the_url_guard_refuses_what_it_refuses_for_bots(
    db_url: str, receiver: Receiver, url: str, reason: str
) -> None:
    for api in make_api(db_url, allow_loopback=False):
        bot = register_bot(api.db, name="guarded", owner="me", url="http://127.0.0.1:9")
        path = f"/api/v1/bots/{bot.bot_id}/webhooks"
        refused = api.post(path, {"url": url, "event_types": ["match.finished"]}, token=bot.token)
        assert refused.status_code == 422, refused.json
        assert reason in refused.json["detail"] and refused.json["errors"][0]["field"] == "url"


def test_a_bot_has_at_most_so_many_endpoints(owners: Owners) -> None:
    for _ in range(MAX_ENDPOINTS_PER_BOT):
        assert owners.register().status_code == 201
    refused = owners.register()
    assert refused.status_code == 409 and refused.json["type"].endswith("/too-many-webhooks")


Call = Callable[[Owners, str | None], Any]
OWNER_OR_ORGANISER = {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 200}


def _with(status: int) -> dict[str, int]:
    return {**OWNER_OR_ORGANISER, "owner": status, "organiser": status}


def _hook(o: Owners) -> str:
    created = o.register()
    assert created.status_code == 201
    o.emit()
    return f"{o.hooks()}/{created.json['id']}"


CALLS: dict[str, tuple[Call, dict[str, int]]] = {
    "register": (
        lambda o, t: o.api.post(
            o.hooks(), {"url": o.receiver.url, "event_types": ["match.finished"]}, token=t
        ),
        _with(201),
    ),
    "list": (lambda o, t: o.api.get(o.hooks(), token=t), OWNER_OR_ORGANISER),
    "read": (lambda o, t: o.api.get(_hook(o), token=t), OWNER_OR_ORGANISER),
    "delete": (lambda o, t: o.delete(_hook(o), t), _with(204)),
    "rotate secret": (lambda o, t: o.api.post(_hook(o) + "/secret", token=t), OWNER_OR_ORGANISER),
    "end rotation": (lambda o, t: o.delete(_hook(o) + "/secret/previous", t), OWNER_OR_ORGANISER),
    "enable": (lambda o, t: o.api.post(_hook(o) + "/enable", token=t), OWNER_OR_ORGANISER),
    "log": (lambda o, t: o.api.get(_hook(o) + "/deliveries", token=t), OWNER_OR_ORGANISER),
    "delivery": (lambda o, t: o.api.get(_hook(o) + "/deliveries/1", token=t), OWNER_OR_ORGANISER),
    "redeliver": (
        lambda o, t: o.api.post(_hook(o) + "/deliveries/1/redeliver", token=t),
        _with(202),
    ),
}
CASES = [(name, role) for name, (_, expected) in CALLS.items() for role in expected]


@pytest.mark.parametrize(("call", "role"), CASES, ids=[f"{c}-{r}" for c, r in CASES])
def test_authorisation_matrix(owners: Owners, call: str, role: str) -> None:
    make, expected = CALLS[call]
    response = make(owners, owners.tokens[role])
    assert response.status_code == expected[role], response.json
    if response.status_code >= 400:
        assert response.mimetype == "application/problem+json"
    if response.status_code == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_bot_that_does_not_exist_is_404_before_any_check_of_the_caller(owners: Owners) -> None:
    missing = owners.api.get("/api/v1/bots/999/webhooks")
    assert missing.status_code == 404 and missing.json["detail"] == "bot 999 does not exist"
    bad = owners.api.get(f"{owners.hooks()}/0", token=ADMIN_TOKEN)
    assert bad.status_code == 404 and "webhook ids are whole numbers" in bad.json["detail"]


def test_an_event_for_another_bot_is_not_queued_here(owners: Owners) -> None:
    owners.register(event_types=ALL_TYPES)
    with owners.api.db.session() as session:
        emit(session, EventType.BOT_RESUMED, {}, bot_id=owners.other)
    assert owners.deliver() == []


@pytest.mark.parametrize("write", ["register", "redeliver"])
def test_registering_and_redelivering_have_the_expensive_writes_budget(
    db_url: str, receiver: Receiver, write: str
) -> None:
    for api in make_api(db_url, rate_limit="100000 per minute"):
        bot = register_bot(api.db, name="busy", owner="me", url="http://127.0.0.1:9")
        path = f"/api/v1/bots/{bot.bot_id}/webhooks"
        body = {"url": receiver.url, "event_types": ["match.finished"]}
        if write == "redeliver":
            created = api.post(path, body, token=bot.token).json
            with api.db.session() as session:
                emit(session, EventType.MATCH_FINISHED, {}, audience=[bot.bot_id])
            path = f"{path}/{created['id']}/deliveries/1/redeliver"
        statuses = [
            api.post(path, None if write == "redeliver" else body, token=bot.token).status_code
            for _ in range(61)
        ]
        assert 429 not in statuses[:60] and statuses[60] == 429
