"""``/api/v1/tests``: who may start and cancel an SPRT test (the organiser; the owner of one bot
tested against itself; the owner of two bots with the same owner contact, never someone else's
bot), what a body may ask for (a 422 naming the field otherwise), and what everyone may read
(a test's seed only once it is over)."""

from __future__ import annotations

from typing import Any

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import ADMIN_TOKEN, Api

from arena.services.bots import RegisteredBot, register_bot, update_bot


@pytest.fixture
def bots(api: Api) -> dict[str, RegisteredBot]:
    return {
        "mine": register_bot(api.db, name="mine", owner="Ada <ada@example.org>", url="http://b1"),
        "mine2": register_bot(api.db, name="mine2", owner="ada <ADA@example.org>", url="http://b2"),
        "theirs": register_bot(api.db, name="theirs", owner="bob@example.org", url="http://b3"),
    }


def _body(a: int, b: int, **kw: Any) -> dict[str, Any]:
    return {"candidate_id": a, "baseline_id": b, "elo0": 0, "elo1": 20, **kw}


def test_an_owner_tests_a_bot_against_itself_and_two_pairs_are_scheduled(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    me = bots["mine"]
    response = api.post("/api/v1/tests", _body(me.bot_id, me.bot_id), token=me.token)
    assert response.status_code == 201, response.json
    body = response.json
    assert body["status"] == "running" and body["verdict"] is None
    assert body["alpha"] == body["beta"] == 0.05 and body["max_pairs"] == 1000
    assert body["candidate"]["version"]["number"] == 1
    assert len(api.enqueued) == 4 and len(body["matches"]) == 4
    assert response.headers["Location"].endswith(f"/api/v1/tests/{body['id']}")
    assert api.get(f"/api/v1/tests/{body['id']}").json["id"] == body["id"]
    listed = api.get("/api/v1/tests").json
    assert [t["id"] for t in listed["items"]] == [body["id"]] and listed["next_before"] is None


def test_a_tests_matches_name_the_test_in_the_match_api(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    me = bots["mine"]
    test = api.post("/api/v1/tests", _body(me.bot_id, me.bot_id), token=me.token).json
    for match_id in (m["id"] for m in test["matches"]):
        assert api.get(f"/api/v1/matches/{match_id}").json["test_id"] == test["id"]
    listed = api.get("/api/v1/matches").json["items"]
    assert {m["test_id"] for m in listed} == {test["id"]}


def test_the_owner_of_both_bots_may_test_one_against_the_other(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    """The same owner contact, compared without case or surrounding spaces."""
    mine, mine2 = bots["mine"], bots["mine2"]
    response = api.post("/api/v1/tests", _body(mine2.bot_id, mine.bot_id), token=mine.token)
    assert response.status_code == 201, response.json


def test_nobody_tests_against_someone_elses_bot_but_the_organiser(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    mine, theirs = bots["mine"], bots["theirs"]
    refused = api.post("/api/v1/tests", _body(mine.bot_id, theirs.bot_id), token=mine.token)
    assert refused.status_code == 403
    assert "different owners" in refused.json["detail"]
    stranger = api.post("/api/v1/tests", _body(mine.bot_id, mine.bot_id), token=theirs.token)
    assert stranger.status_code == 403
    assert api.post("/api/v1/tests", _body(mine.bot_id, mine.bot_id)).status_code == 401
    organiser = api.post("/api/v1/tests", _body(mine.bot_id, theirs.bot_id), token=ADMIN_TOKEN)
    assert organiser.status_code == 201


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"elo1": -5}, "elo1"),
        ({"alpha": 0.5}, "alpha"),
        ({"max_pairs": 0}, "max_pairs"),
        ({"concurrency": 9}, "concurrency"),
        ({"rules": {"preset": "standard", "fields": {"target": 5000}}}, "rules.fields.target"),
        ({"candidate_version": 2}, "candidate_version"),
        ({"baseline_id": 999}, "baseline_id"),
        ({"seed": 2**62}, "seed"),
        ({"seed": -1}, "seed"),
    ],
    ids=[
        "elo1_not_above_elo0",
        "alpha_too_big",
        "no_pairs",
        "too_many_in_flight",
        "rules_over_the_bounds",
        "a_version_that_does_not_exist",
        "no_such_bot",
        "a_seed_too_wide",
        "a_negative_seed",
    ],
)
def test_a_bad_request_is_a_422_naming_the_field(
    api: Api, bots: dict[str, RegisteredBot], changes: dict[str, Any], field: str
) -> None:
    me = bots["mine"]
    response = api.post("/api/v1/tests", _body(me.bot_id, me.bot_id) | changes, token=ADMIN_TOKEN)
    assert response.status_code == 422, response.json
    assert field in [e["field"] for e in response.json["errors"]]
    assert api.enqueued == []


def test_an_older_version_is_refused_with_the_reason(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    me = bots["mine"]
    update_bot(api.db, me.bot_id, url="http://b1-next")
    response = api.post(
        "/api/v1/tests", _body(me.bot_id, me.bot_id, candidate_version=1), token=me.token
    )
    assert response.status_code == 422
    assert "only the current version plays" in response.json["detail"]


def test_cancel_is_the_owners_and_a_second_cancel_is_a_conflict(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    me, theirs = bots["mine"], bots["theirs"]
    test_id = api.post("/api/v1/tests", _body(me.bot_id, me.bot_id), token=me.token).json["id"]
    assert api.post(f"/api/v1/tests/{test_id}/cancel", token=theirs.token).status_code == 403
    done = api.post(f"/api/v1/tests/{test_id}/cancel", token=me.token)
    assert done.status_code == 200
    assert sorted(done.json["cancelled"]) == sorted(api.enqueued)
    assert done.json["test"]["verdict"] == "cancelled"
    again = api.post(f"/api/v1/tests/{test_id}/cancel", token=ADMIN_TOKEN)
    assert again.status_code == 409
    assert api.get("/api/v1/tests/4242").status_code == 404
    assert api.get(f"/tests/{test_id}").status_code == 200


def test_a_tests_seed_is_stored_and_secret_until_the_test_is_over(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    """The seed decides every future pair's deals: null while the test can still play (as a
    tournament's), the stored one once it is over and none of its matches is pending."""
    me = bots["mine"]
    given = api.post("/api/v1/tests", _body(me.bot_id, me.bot_id, seed=2**62 - 1), token=me.token)
    assert given.status_code == 201, given.json
    test_id = given.json["id"]
    assert given.json["seed"] is None
    assert api.get(f"/api/v1/tests/{test_id}").json["seed"] is None
    assert b"secret until the test is over" in api.get(f"/tests/{test_id}").data
    cancelled = api.post(f"/api/v1/tests/{test_id}/cancel", token=me.token).json["test"]
    assert cancelled["seed"] == 2**62 - 1  # over, and its pending matches cancelled
    assert str(2**62 - 1).encode() in api.get(f"/tests/{test_id}").data
    drawn = api.post("/api/v1/tests", _body(me.bot_id, me.bot_id), token=me.token).json["id"]
    api.post(f"/api/v1/tests/{drawn}/cancel", token=me.token)
    seed = api.get(f"/api/v1/tests/{drawn}").json["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**62


def test_no_public_read_of_a_test_shows_an_owner_address(
    api: Api, bots: dict[str, RegisteredBot]
) -> None:
    """The reads of a test (the API's list and detail, the pages) name its bots, never their
    owners' contacts (``tests/api/test_api_owner_privacy.py`` covers every other read)."""
    mine, theirs = bots["mine"], bots["theirs"]
    created = api.post("/api/v1/tests", _body(mine.bot_id, theirs.bot_id), token=ADMIN_TOKEN)
    assert created.status_code == 201, created.json
    test_id = created.json["id"]
    for path in ("/api/v1/tests", f"/api/v1/tests/{test_id}", "/tests", f"/tests/{test_id}"):
        response = api.get(path)
        assert response.status_code == 200, (path, response.status_code)
        text = response.get_data(as_text=True)
        assert "example.org" not in text, path
        assert "mine" in text and "theirs" in text, path
