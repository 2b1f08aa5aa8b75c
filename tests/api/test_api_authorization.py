"""The authorisation matrix: every write, by anonymous, the bot's owner, another bot's owner
and the organiser. 401 means "who are you?", 403 "you may not"; secrets never leak."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, HouseBots, make_api
from api_world import ADMIN_TOKEN

from arena.db.models import BotRow
from arena.services.bots import register_bot
from arena.services.tournaments import create_tournament


@dataclass
class Setup:
    api: Api
    mine: int
    other: int
    tokens: dict[str, str | None]
    tournament: int


@pytest.fixture
def setup(api: Api, house: HouseBots) -> Setup:
    mine = register_bot(api.db, name="mine", owner="me", url=house.urls[0])
    other = register_bot(api.db, name="other", owner="them", url=house.urls[1])
    tournament = create_tournament(
        api.db, name="t", format_name="round_robin", bot_ids=[mine.bot_id, other.bot_id]
    )
    tokens = {
        "anonymous": None,
        "owner": mine.token,
        "other_owner": other.token,
        "organiser": ADMIN_TOKEN,
    }
    return Setup(api, mine.bot_id, other.bot_id, tokens, tournament)


Call = Callable[[Setup, str | None], Any]

WRITES: dict[str, tuple[Call, dict[str, int]]] = {
    "register bot": (
        lambda s, t: s.api.post(
            "/api/v1/bots",
            {
                "name": f"new-{len(t or 'anon')}",
                "url": s.api.get(f"/api/v1/bots/{s.mine}", token=ADMIN_TOKEN).json["url"],
                "owner": "x",
            },
            token=t,
        ),
        {"anonymous": 201, "owner": 201, "other_owner": 201, "organiser": 201},
    ),
    "update bot": (
        lambda s, t: s.api.patch(f"/api/v1/bots/{s.mine}", {"name": "renamed"}, token=t),
        {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 403},
    ),
    "rotate token": (
        lambda s, t: s.api.post(f"/api/v1/bots/{s.mine}/token", token=t),
        {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 403},
    ),
    "rotate secret": (
        lambda s, t: s.api.post(f"/api/v1/bots/{s.mine}/secret", token=t),
        {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 403},
    ),
    "deactivate": (
        lambda s, t: s.api.post(f"/api/v1/bots/{s.mine}/deactivate", token=t),
        {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 200},
    ),
    "activate": (
        lambda s, t: s.api.post(f"/api/v1/bots/{s.mine}/activate", token=t),
        {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 200},
    ),
    "conformance check": (
        lambda s, t: s.api.post(f"/api/v1/bots/{s.mine}/check", token=t),
        {"anonymous": 401, "owner": 200, "other_owner": 403, "organiser": 200},
    ),
    "create tournament": (
        lambda s, t: s.api.post(
            "/api/v1/tournaments", {"name": "n", "format": "round_robin"}, token=t
        ),
        {"anonymous": 401, "owner": 403, "other_owner": 403, "organiser": 201},
    ),
    "start tournament": (
        lambda s, t: s.api.post(f"/api/v1/tournaments/{s.tournament}/start", token=t),
        {"anonymous": 401, "owner": 403, "other_owner": 403, "organiser": 200},
    ),
    "cancel tournament": (
        lambda s, t: s.api.post(f"/api/v1/tournaments/{s.tournament}/cancel", token=t),
        {"anonymous": 401, "owner": 403, "other_owner": 403, "organiser": 200},
    ),
    "challenge": (
        lambda s, t: s.api.post(
            "/api/v1/challenges", {"bot_id": s.mine, "opponent_id": s.other}, token=t
        ),
        {"anonymous": 401, "owner": 201, "other_owner": 403, "organiser": 403},
    ),
}

CASES = [(name, role) for name, (_, expected) in WRITES.items() for role in expected]


@pytest.mark.parametrize(("write", "role"), CASES, ids=[f"{w}-{r}" for w, r in CASES])
def test_authorisation_matrix(setup: Setup, write: str, role: str):
    call, expected = WRITES[write]
    response = call(setup, setup.tokens[role])
    assert response.status_code == expected[role], response.json
    if response.status_code >= 400:
        assert response.mimetype == "application/problem+json"
        assert response.json["status"] == response.status_code
    if response.status_code == 401:
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("write", [w for w, (_, e) in WRITES.items() if e["anonymous"] == 401])
def test_an_invalid_token_is_401_never_anonymous(setup: Setup, write: str):
    call, _ = WRITES[write]
    assert call(setup, "gat_not-a-real-token").status_code == 401
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
