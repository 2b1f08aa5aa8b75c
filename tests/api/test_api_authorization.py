"""The authorisation matrix: every write of the spec (``api_spec/openapi.yaml``, so a new
route cannot be missed), by anonymous, the bot's owner, another bot's owner and the organiser.
401 means "who are you?", 403 "you may not". And no read, of every GET of the spec as each
role, ever carries a bot's secret, an owner token, the organiser token or a webhook secret
(old ones included): credentials are shown once, in the answer of the write that made them."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, HouseBots, make_api
from api_world import ADMIN_TOKEN
from sqlalchemy import select
from test_api_parameters import SPEC

from arena.db.models import BotRow, MatchRow, WebhookDeliveryRow, WebhookEndpointRow
from arena.events import EventType
from arena.services.bots import register_bot
from arena.services.events import emit
from arena.services.tournaments import create_tournament

#: The operations that change something: every one in the spec is in the matrix below.
WRITE_METHODS = ("post", "put", "patch", "delete")
SPEC_WRITES = sorted(
    f"{method.upper()} {path}"
    for path, item in SPEC["paths"].items()
    for method in item
    if method in WRITE_METHODS
)
SPEC_READS = sorted(
    path
    for path, item in SPEC["paths"].items()
    if "get" in item and not item["get"].get("x-streaming") and not path.startswith("/api/v1/docs")
)
ROLES = ("anonymous", "owner", "other_owner", "organiser")


@dataclass
class Setup:
    """Two bots (``mine`` has a webhook endpoint with a delivery, and an SPRT test of itself),
    a tournament of both, and each role's token."""

    api: Api
    mine: int
    other: int
    tokens: dict[str, str | None]
    tournament: int
    webhook: int
    delivery: int
    test: int
    #: Every credential made so far (bot secrets and tokens, webhook secrets, old ones too).
    credentials: list[str] = field(default_factory=list)

    def fill(self, path: str) -> str:
        """``path`` with its ids: the bot is ``mine`` (so its owner is "owner")."""
        ids = {
            "{bot_id}": self.mine,
            "{webhook_id}": self.webhook,
            "{delivery_id}": self.delivery,
            "{tournament_id}": self.tournament,
            "{test_id}": self.test,
            "{match_id}": self.match,
        }
        for hole, value in ids.items():
            path = path.replace(hole, str(value))
        assert "{" not in path, path
        return path

    @property
    def match(self) -> int:
        with self.api.db.session() as session:
            return int(session.scalars(select(MatchRow.id).order_by(MatchRow.id)).first() or 0)


@pytest.fixture
def setup(api: Api, house: HouseBots) -> Setup:
    mine = register_bot(api.db, name="mine", owner="me", url=house.urls[0])
    other = register_bot(api.db, name="other", owner="them", url=house.urls[1])
    tournament = create_tournament(
        api.db, name="t", format_name="round_robin", bot_ids=[mine.bot_id, other.bot_id]
    )
    owner = mine.token
    hook = api.post(
        f"/api/v1/bots/{mine.bot_id}/webhooks",
        {"url": "http://127.0.0.1:9/hooks", "event_types": ["match.finished"]},
        token=owner,
    )
    assert hook.status_code == 201, hook.json
    with api.db.session() as session:
        emit(session, EventType.MATCH_FINISHED, {"match": 1}, audience=[mine.bot_id])
    with api.db.session() as session:
        delivery = session.scalars(select(WebhookDeliveryRow.id)).one()
    test = api.post(
        "/api/v1/tests",
        {"candidate_id": mine.bot_id, "baseline_id": mine.bot_id, "elo0": 0, "elo1": 10},
        token=owner,
    )
    assert test.status_code == 201, test.json
    tokens = {"anonymous": None, "owner": owner, "other_owner": other.token}
    tokens["organiser"] = ADMIN_TOKEN
    credentials = [mine.token, other.token, mine.secret, other.secret, hook.json["secret"]]
    return Setup(
        api,
        mine.bot_id,
        other.bot_id,
        tokens,
        tournament,
        hook.json["id"],
        delivery,
        test.json["id"],
        credentials,
    )


Body = Callable[[Setup], Any]


def _new_bot(s: Setup) -> dict[str, Any]:
    url = s.api.get(f"/api/v1/bots/{s.mine}", token=ADMIN_TOKEN).json["url"]
    return {"name": f"new-{uuid.uuid4().hex[:8]}", "url": url, "owner": "x"}


OWNER_ONLY = {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 403}
OWNER_OR_ORGANISER = {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 200}
ORGANISER_ONLY = {"anonymous": 401, "owner": 403, "other_owner": 403, "organiser": 200}


def _with(expected: dict[str, int], code: int) -> dict[str, int]:
    """``expected`` with the allowed roles' 200 replaced by ``code``."""
    return {role: code if status == 200 else status for role, status in expected.items()}


#: "METHOD /path" (as the spec names it) -> (the request body, the status for each role).
WRITES: dict[str, tuple[Body | None, dict[str, int]]] = {
    "POST /api/v1/bots": (
        _new_bot,
        {"anonymous": 201, "owner": 201, "other_owner": 201, "organiser": 201},
    ),
    "PATCH /api/v1/bots/{bot_id}": (lambda s: {"name": "renamed"}, OWNER_ONLY),
    "POST /api/v1/bots/{bot_id}/token": (None, OWNER_ONLY),
    "POST /api/v1/bots/{bot_id}/secret": (None, OWNER_ONLY),
    "DELETE /api/v1/bots/{bot_id}/secret/previous": (None, OWNER_ONLY),
    "POST /api/v1/bots/{bot_id}/deactivate": (None, OWNER_OR_ORGANISER),
    "POST /api/v1/bots/{bot_id}/activate": (None, OWNER_OR_ORGANISER),
    "POST /api/v1/bots/{bot_id}/check": (None, OWNER_OR_ORGANISER),
    "POST /api/v1/bots/{bot_id}/webhooks": (
        lambda s: {"url": "http://127.0.0.1:9/more", "event_types": ["bot.suspended"]},
        _with(OWNER_OR_ORGANISER, 201),
    ),
    "DELETE /api/v1/bots/{bot_id}/webhooks/{webhook_id}": (
        None,
        _with(OWNER_OR_ORGANISER, 204),
    ),
    "POST /api/v1/bots/{bot_id}/webhooks/{webhook_id}/secret": (None, OWNER_OR_ORGANISER),
    "DELETE /api/v1/bots/{bot_id}/webhooks/{webhook_id}/secret/previous": (
        None,
        OWNER_OR_ORGANISER,
    ),
    "POST /api/v1/bots/{bot_id}/webhooks/{webhook_id}/enable": (None, OWNER_OR_ORGANISER),
    "POST /api/v1/bots/{bot_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver": (
        None,
        _with(OWNER_OR_ORGANISER, 202),
    ),
    "POST /api/v1/tournaments": (
        lambda s: {"name": "n", "format": "round_robin"},
        _with(ORGANISER_ONLY, 201),
    ),
    "POST /api/v1/tournaments/{tournament_id}/start": (None, ORGANISER_ONLY),
    "POST /api/v1/tournaments/{tournament_id}/cancel": (None, ORGANISER_ONLY),
    "POST /api/v1/challenges": (
        lambda s: {"bot_id": s.mine, "opponent_id": s.other},
        {"anonymous": 401, "owner": 201, "other_owner": 403, "organiser": 403},
    ),
    "POST /api/v1/tests": (
        lambda s: {"candidate_id": s.mine, "baseline_id": s.mine, "elo0": 0, "elo1": 10},
        _with(OWNER_OR_ORGANISER, 201),
    ),
    "POST /api/v1/tests/{test_id}/cancel": (None, OWNER_OR_ORGANISER),
}


def call(s: Setup, write: str, token: str | None) -> Any:
    """Make the write ``write`` ("METHOD /path" of the spec) with ``token``."""
    method, path = write.split(" ", 1)
    make_body, _ = WRITES[write]
    body = None if make_body is None else make_body(s)
    kwargs: dict[str, Any] = {"headers": s.api.headers(token)}
    if body is not None:
        kwargs["json"] = body
    return s.api.client.open(s.fill(path), method=method, **kwargs)


def test_the_matrix_has_every_write_of_the_spec() -> None:
    """The route list is the spec's: a write added to openapi.yaml fails here until it has a
    row (and the spec's writes are the app's, tests/api/test_api_spec.py)."""
    assert sorted(WRITES) == SPEC_WRITES
    for write, (_, expected) in WRITES.items():
        assert sorted(expected) == sorted(ROLES), write


CASES = [(write, role) for write in SPEC_WRITES for role in ROLES]


@pytest.mark.parametrize(("write", "role"), CASES, ids=[f"{w}-{r}" for w, r in CASES])
def test_authorisation_matrix(setup: Setup, write: str, role: str):
    _, expected = WRITES[write]
    response = call(setup, write, setup.tokens[role])
    assert response.status_code == expected[role], response.get_data(as_text=True)[:300]
    if response.status_code >= 400:
        assert response.mimetype == "application/problem+json"
        assert response.json["status"] == response.status_code
    if response.status_code == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("write", [w for w, (_, e) in WRITES.items() if e["anonymous"] == 401])
def test_an_invalid_token_is_401_never_anonymous(setup: Setup, write: str):
    assert call(setup, write, "gat_not-a-real-token").status_code == 401
    response = setup.api.client.post(
        "/api/v1/bots/1/token", headers={"Authorization": "Basic dXNlcjpwYXNz"}
    )
    assert response.status_code == 401


def test_an_invalid_token_on_a_public_read_is_401(setup: Setup):
    assert setup.api.get("/api/v1/bots", token="nonsense").status_code == 401
    assert setup.api.get("/api/v1/bots").status_code == 200


def test_no_response_ever_carries_another_bots_credentials(setup: Setup):
    api = setup.api
    other_token = setup.tokens["other_owner"]
    bodies = [
        api.get(f"/api/v1/bots/{setup.mine}", token=other_token).get_data(as_text=True),
        api.get("/api/v1/bots", token=other_token).get_data(as_text=True),
        api.post(f"/api/v1/bots/{setup.mine}/secret", token=other_token).get_data(as_text=True),
        api.post(f"/api/v1/bots/{setup.mine}/token", token=other_token).get_data(as_text=True),
    ]
    with api.db.session() as session:
        bot = session.get_one(BotRow, setup.mine)
        secret, token_hash = bot.secret, bot.token_hash
    for body in bodies:
        assert secret not in body and token_hash not in body
        assert str(setup.tokens["owner"]) not in body and "whsec_" not in body


def test_the_organiser_token_is_not_an_owner_token_when_unset(db_url: str, house: HouseBots):
    for api in make_api(db_url, admin_token=""):
        response = api.post("/api/v1/tournaments", {"name": "n", "format": "swiss"}, token="")
        assert response.status_code == 401


def _stored_credentials(setup: Setup) -> list[str]:
    """Every secret the database holds (bots' and webhooks', current and previous), and the
    token hashes."""
    with setup.api.db.session() as session:
        values: list[str | None] = []
        for bot in session.scalars(select(BotRow)):
            values += [bot.secret, bot.previous_secret, bot.token_hash]
        for hook in session.scalars(select(WebhookEndpointRow)):
            values += [hook.secret, hook.previous_secret]
    return [v for v in values if v]


def test_no_read_of_the_spec_carries_a_credential_whoever_asks(setup: Setup):
    api = setup.api
    owner = setup.tokens["owner"]
    # Rotations, so previous secrets exist too (and are still valid).
    rotated = api.post(f"/api/v1/bots/{setup.mine}/secret", token=owner)
    hook_rotated = api.post(
        f"/api/v1/bots/{setup.mine}/webhooks/{setup.webhook}/secret", token=owner
    )
    assert rotated.status_code == hook_rotated.status_code == 200
    credentials = {
        *setup.credentials,
        rotated.json["secret"],
        hook_rotated.json["secret"],
        ADMIN_TOKEN,
        *_stored_credentials(setup),
    }
    # The secret's key part as well as the whole ``whsec_...`` form.
    credentials |= {c.split("_", 1)[1] for c in credentials if c.startswith(("whsec_", "gat_"))}
    assert len(SPEC_READS) > 20
    seen = 0
    for path in SPEC_READS:
        for role in ROLES:
            response = api.get(setup.fill(path), token=setup.tokens[role])
            assert response.status_code < 500, (path, role)
            text = response.get_data(as_text=True)
            leaked = sorted(c[:10] + "..." for c in credentials if c in text)
            assert not leaked, (path, role, response.status_code, leaked)
            seen += 1
    assert seen == len(SPEC_READS) * len(ROLES)
    out = os.environ.get("ARENA_SECURITY_FIGURES")  # benchmarks/bench_security.py
    if out:
        with open(out, "a", encoding="utf-8") as file:
            figures = {"reads": seen, "credentials": len(credentials), "leaks": 0}
            file.write(json.dumps({"secrets": figures}) + "\n")
