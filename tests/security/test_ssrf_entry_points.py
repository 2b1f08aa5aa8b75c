"""The SSRF table (``ssrf_table.py``) at every door a URL comes through (issue 14, 2c):
registration (``POST /api/v1/bots``), a URL change (``PATCH /api/v1/bots/{id}``), a webhook
endpoint (``POST /api/v1/bots/{id}/webhooks``) and connect time (the match's HTTP player and
the webhook sender, which resolve the name again: a name that resolved to a reachable bot at
registration and to a private address later is refused then). Redirects are never followed,
whatever they point at.

Every case is refused before any connection: the table's loopback URLs point at a listening
sentinel that must see none, and an audit hook (the tripwire) sees every ``socket.connect``
and ``getaddrinfo`` of the process while a refused URL is handled, and refuses any connect
that would leave the machine. Host names resolve through a fake resolver only.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from loopback import HttpMessage, LoopbackServer, http_head, http_response
from sqlalchemy import func, select
from ssrf_table import (
    DNS,
    REDIRECT_TARGETS,
    SSRF_CASES,
    FakeResolver,
    Sentinel,
    Tripwire,
    record_figures,
)

from arena.api import close_app, create_app
from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.db.models import BotRow, WebhookEndpointRow
from arena.db.session import Database
from arena.playing.players import Fault, FaultKind, MatchContext, Turn
from arena.protocol.http_player import HttpPlayer
from arena.protocol.urlguard import UrlRejectedError, check_url
from arena.rules.hand import new_deal
from arena.rules.observation import observe
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.settings import Settings
from arena.webhooks.sender import Delivery, Sender

ADMIN = "security-organiser-token"
IDS = [c.name for c in SSRF_CASES]


class Pending(list[int]):
    """An executor that keeps what it is handed and plays nothing."""

    def submit(self, match_ids: Any) -> None:
        self.extend(match_ids)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def sentinel() -> Iterator[Sentinel]:
    guard = Sentinel()
    yield guard
    guard.close()


@pytest.fixture(scope="module")
def tripwire() -> Tripwire:
    return Tripwire.get()


@dataclass
class Arena:
    """The API over a fresh SQLite file (no network: the tripwire sees the app's own sockets
    only), with a fake resolver, one registered bot and its owner's token."""

    client: Any
    db: Database
    resolver: FakeResolver
    bot: int
    token: str

    def count(self, row: type) -> int:
        with self.db.session() as session:
            return int(session.scalar(select(func.count()).select_from(row)) or 0)

    def url_of(self, bot: int) -> str:
        with self.db.session() as session:
            return session.get_one(BotRow, bot).url


def _arena(tmp: Path, template: Path, *, allow_loopback: bool) -> Iterator[Arena]:
    path = tmp / "arena.db"
    shutil.copy(template, path)
    url = f"sqlite:///{path}"
    db = Database(url)
    resolver = FakeResolver()
    settings = Settings(
        database_url=url, allow_loopback=allow_loopback, admin_token=ADMIN, rate_limit=""
    )
    app = create_app(settings, db=db, executor=Pending(), resolver=resolver)
    app.config["TESTING"] = True
    bot = register_bot(db, name="standing", owner="o@example.com", url="http://public.example.com/")
    try:
        yield Arena(app.test_client(), db, resolver, bot.bot_id, bot.token)
    finally:
        close_app(app)
        db.dispose()


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Iterator[Arena]:
    yield from _arena(tmp_path_factory.mktemp("ssrf-prod"), sqlite_template, allow_loopback=False)


@pytest.fixture(scope="module")
def development(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Iterator[Arena]:
    yield from _arena(tmp_path_factory.mktemp("ssrf-dev"), sqlite_template, allow_loopback=True)


# --- the table itself ----------------------------------------------------------------------------


def test_the_table_has_every_kind_the_issue_names() -> None:
    kinds = {c.kind for c in SSRF_CASES}
    assert {
        "decimal-ipv4", "octal-ipv4", "hex-ipv4", "ipv4-mapped", "nat64", "metadata", "dns",
        "userinfo", "scheme", "port", "long",
    } <= kinds  # fmt: skip
    assert len(SSRF_CASES) >= 55
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("case", SSRF_CASES, ids=IDS)
def test_the_url_guard_refuses_each_case_for_its_reason(case: Any, sentinel: Sentinel) -> None:
    resolver = FakeResolver()
    with pytest.raises(UrlRejectedError) as refused:
        check_url(case.for_port(sentinel.port), resolver=resolver)
    assert refused.value.reason is case.reason, str(refused.value)


# --- the entry points --------------------------------------------------------------------------


def _refusals(
    entry_point: str,
    tripwire: Tripwire,
    sentinel: Sentinel,
    attempt: Any,
    *,
    allowed_port: int | None = None,
) -> list[str]:
    """Run ``attempt(case_url)`` for every case; the cases it did not refuse cleanly (its own
    verdict false), or that connected (anywhere but ``allowed_port``) or looked a name up."""
    offenders = []
    before = sentinel.connections()
    figures = {"cases": 0, "refused": 0, "connections": 0, "lookups": 0}
    for case in SSRF_CASES:
        with tripwire.armed() as seen:
            refused = attempt(case.for_port(sentinel.port))
        connects = [a for a in seen.connects if allowed_port is None or a[1] != allowed_port]
        figures["cases"] += 1
        figures["refused"] += bool(refused)
        figures["connections"] += len(connects)
        figures["lookups"] += len(seen.lookups)
        if not refused or connects or seen.lookups:
            offenders.append(
                f"{case.name}: refused={refused} connects={connects} dns={seen.lookups}"
            )
    figures["sentinel_connections"] = sentinel.connections() - before
    record_figures("ssrf", {"entry_point": entry_point, **figures})
    assert figures["sentinel_connections"] == 0
    return offenders


def _problem(response: Any) -> bool:
    return response.status_code == 422 and response.mimetype == "application/problem+json"


def test_registration_refuses_every_case_before_connecting(
    production: Arena, tripwire: Tripwire, sentinel: Sentinel
) -> None:
    bots = production.count(BotRow)

    def register(url: str) -> bool:
        body = {"name": "ssrf", "url": url, "owner": "x@example.com"}
        return _problem(production.client.post("/api/v1/bots", json=body))

    assert _refusals("registration", tripwire, sentinel, register) == []
    assert production.count(BotRow) == bots


def test_a_url_change_refuses_every_case_before_connecting(
    production: Arena, tripwire: Tripwire, sentinel: Sentinel
) -> None:
    headers = {"Authorization": f"Bearer {production.token}"}
    before = production.url_of(production.bot)

    def change(url: str) -> bool:
        answer = production.client.patch(
            f"/api/v1/bots/{production.bot}", json={"url": url}, headers=headers
        )
        return _problem(answer)

    assert _refusals("url update", tripwire, sentinel, change) == []
    assert production.url_of(production.bot) == before


def test_a_webhook_endpoint_refuses_every_case_before_connecting(
    production: Arena, tripwire: Tripwire, sentinel: Sentinel
) -> None:
    headers = {"Authorization": f"Bearer {production.token}"}
    hooks = production.count(WebhookEndpointRow)

    def add(url: str) -> bool:
        body = {"url": url, "event_types": ["match.finished"]}
        answer = production.client.post(
            f"/api/v1/bots/{production.bot}/webhooks", json=body, headers=headers
        )
        return _problem(answer)  # "the webhook URL is refused", or too long for the schema

    assert _refusals("webhook endpoint", tripwire, sentinel, add) == []
    assert production.count(WebhookEndpointRow) == hooks


CONTEXT = MatchContext("ssrf", 0, RuleSet(), "opponent", 0)


def _turn() -> Turn:
    state = new_deal(RuleSet(), 0, rng=random.Random(1))
    return Turn(
        observe(state, state.to_act), "ssrf", 0, 0, "ssrf-r1", RuleSet(), (0, 0), (0, 0), 1000
    )


def _player_refuses(url: str, resolver: FakeResolver, *, allow_loopback: bool = False) -> bool:
    player = HttpPlayer(url, allow_loopback=allow_loopback, resolver=resolver)
    fault = player.start(CONTEXT)
    player.close()
    return (
        isinstance(fault, Fault)
        and fault.kind is FaultKind.UNREACHABLE
        and fault.detail.startswith("URL refused")
    )


def test_a_match_player_refuses_every_case_at_connect_time(
    tripwire: Tripwire, sentinel: Sentinel
) -> None:
    resolver = FakeResolver()
    assert (
        _refusals(
            "match player (connect time)",
            tripwire,
            sentinel,
            lambda url: _player_refuses(url, resolver),
        )
        == []
    )


def _delivery(url: str) -> Delivery:
    return Delivery(1, 1, url, ("whsec_" + "A" * 32,), "msg_ssrf", b'{"type": "x"}')


def test_a_webhook_delivery_refuses_every_case_at_connect_time(
    tripwire: Tripwire, sentinel: Sentinel
) -> None:
    sender = Sender(timeout_s=2.0, allow_loopback=False, resolver=FakeResolver())

    def deliver(url: str) -> bool:
        outcome = sender.send(_delivery(url), timestamp=1_700_000_000)
        return outcome.error is not None and outcome.error.startswith("refused at connect")

    try:
        assert _refusals("webhook delivery (connect time)", tripwire, sentinel, deliver) == []
    finally:
        sender.close()


# --- rebinding: reachable at registration, private at connect time --------------------------------

#: Every private answer of the table's DNS (loopback aside: the development arena allows it).
PRIVATE_ANSWERS = [
    answers
    for name, answers in DNS.items()
    if answers
    and name not in ("rebind.example.com", "loopback6.example.com", "mapped.example.com")
    and name not in ("public.example.com", "garbage.example.com")
]


@pytest.fixture(scope="module")
def house() -> Iterator[BotServer]:
    server = house_bot("greedy", name="house-greedy")
    server.start()
    yield server
    server.stop()


def test_a_name_that_turns_private_after_registration_is_refused_at_connect_time(
    development: Arena, house: BotServer, tripwire: Tripwire
) -> None:
    port = int(house.url.rsplit(":", 1)[1].strip("/"))
    url = f"http://bot.example.com:{port}/"
    development.resolver.answers["bot.example.com"] = ["127.0.0.1"]  # the bot, on loopback
    registered = development.client.post(
        "/api/v1/bots", json={"name": "rebinder", "url": url, "owner": "r@example.com"}
    )
    assert registered.status_code == 201, registered.json
    assert development.url_of(registered.json["id"]) == url
    player = HttpPlayer(url, allow_loopback=True, resolver=development.resolver)
    assert player.start(CONTEXT) is None  # reachable: the match would start
    player.close()
    assert len(PRIVATE_ANSWERS) >= 8
    for answers in PRIVATE_ANSWERS:
        development.resolver.answers["bot.example.com"] = answers
        with tripwire.armed() as seen:
            assert _player_refuses(url, development.resolver, allow_loopback=True), answers
        assert seen.connects == [] and seen.lookups == [], answers


class Receiver(LoopbackServer):
    """A webhook receiver: 204 to every request, then it closes the connection (so each
    delivery opens a new one, and resolves the name again)."""

    def answer(self, conn: Any, request: HttpMessage) -> bool:
        conn.sendall(http_head("204 No Content", {"Connection": "close"}))
        return False


def test_a_webhook_host_that_turns_private_is_refused_on_the_next_connection(
    tripwire: Tripwire,
) -> None:
    receiver = Receiver("receiver").start()
    try:
        port = int(receiver.url.rsplit(":", 1)[1])
        resolver = FakeResolver({"hooks.example.com": ["127.0.0.1"]})
        sender = Sender(timeout_s=5.0, allow_loopback=True, resolver=resolver)
        url = f"http://hooks.example.com:{port}/in"
        assert sender.send(_delivery(url), timestamp=1_700_000_000).delivered
        for answers in PRIVATE_ANSWERS:
            resolver.answers["hooks.example.com"] = answers
            with tripwire.armed() as seen:
                outcome = sender.send(_delivery(url), timestamp=1_700_000_000)
            assert outcome.error is not None and "refused at connect" in outcome.error, answers
            assert seen.connects == [], answers
        sender.close()
        assert receiver.connections == 1
    finally:
        receiver.stop()


# --- redirects ------------------------------------------------------------------------------------


class Redirector(LoopbackServer):
    """A bot that answers ``GET /`` soundly (or not, ``on_info``) and every other request with
    a redirect to ``target``."""

    def __init__(self, status: int, target: str, *, on_info: bool) -> None:
        super().__init__(f"redirect-{status}")
        self.status, self.target, self.on_info = status, target, on_info

    def answer(self, conn: Any, request: HttpMessage) -> bool:
        method, _path = request.target
        if method == "GET" and not self.on_info:
            conn.sendall(http_response(b'{"protocol": "gin-arena/1", "name": "r"}'))
            return True
        if method == "POST" and request.target[1] == "/start":
            conn.sendall(http_response(b"{}"))
            return True
        head = {"Location": self.target, "Content-Length": "0"}
        conn.sendall(http_head(f"{self.status} Elsewhere", head))
        return True


REDIRECTS = [
    (status, target) for status in (301, 302, 303, 307, 308) for target in REDIRECT_TARGETS
]


def _redirecting(sentinel: Sentinel, status: int, target: str, *, on_info: bool) -> Redirector:
    return Redirector(status, target.replace("{port}", str(sentinel.port)), on_info=on_info).start()


def _bot_port(bot: Redirector) -> int:
    return int(bot.url.rsplit(":", 1)[1])


@pytest.mark.parametrize(("status", "target"), REDIRECTS)
def test_redirects_are_never_followed_at_registration_or_a_url_change(
    development: Arena, tripwire: Tripwire, sentinel: Sentinel, status: int, target: str
) -> None:
    before = sentinel.connections()
    headers = {"Authorization": f"Bearer {development.token}"}
    for on_info in (True, False):
        bot = _redirecting(sentinel, status, target, on_info=on_info)
        try:
            with tripwire.armed() as seen:
                body = {"name": "redirector", "url": bot.url, "owner": "x@example.com"}
                registered = development.client.post("/api/v1/bots", json=body)
                changed = development.client.patch(
                    f"/api/v1/bots/{development.bot}", json={"url": bot.url}, headers=headers
                )
            assert _problem(registered) and _problem(changed), (registered.json, changed.json)
            assert {a[1] for a in seen.connects} == {_bot_port(bot)}
        finally:
            bot.stop()
    assert sentinel.connections() == before


@pytest.mark.parametrize(("status", "target"), REDIRECTS)
def test_redirects_are_never_followed_by_a_match_player_or_a_webhook_delivery(
    tripwire: Tripwire, sentinel: Sentinel, status: int, target: str
) -> None:
    before = sentinel.connections()
    on_info = _redirecting(sentinel, status, target, on_info=True)
    on_act = _redirecting(sentinel, status, target, on_info=False)
    try:
        with tripwire.armed() as seen:
            first = HttpPlayer(on_info.url, allow_loopback=True).start(CONTEXT)
            player = HttpPlayer(on_act.url, allow_loopback=True)
            started = player.start(CONTEXT)
            turn = player.act(_turn())
            sender = Sender(timeout_s=5.0, allow_loopback=True)
            outcome = sender.send(_delivery(on_act.url + "/in"), timestamp=1_700_000_000)
            sender.close()
        assert isinstance(first, Fault) and "redirect" in first.detail
        assert started is None  # GET / and POST /start answered soundly; /act redirects
        assert isinstance(turn, Fault) and turn.kind is FaultKind.REDIRECT, turn
        player.close()
        assert outcome.error is not None and "redirect" in outcome.error
        assert {a[1] for a in seen.connects} <= {_bot_port(on_info), _bot_port(on_act)}
    finally:
        on_info.stop()
        on_act.stop()
    assert sentinel.connections() == before
