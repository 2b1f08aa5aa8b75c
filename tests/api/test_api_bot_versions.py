"""Versions through the API (SQLite and PostgreSQL): ``GET /api/v1/bots/{id}/versions``, the
current version in bot summaries and the leaderboard, and the version of each side in a match
and its replay. Real house bots on loopback; matches played by the job over HTTP."""

from __future__ import annotations

from typing import Any

from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, HouseBots

from arena.playing.jobs import JobStatus, run_match_job
from arena.rules.ruleset import RuleSet
from arena.services.matches import schedule_match
from arena.settings import load_settings

SETTINGS = load_settings({}, allow_loopback=True)
PROBLEM = "application/problem+json"


def register(api: Api, url: str, name: str) -> dict[str, Any]:
    response = api.post("/api/v1/bots", {"name": name, "url": url, "owner": f"{name}@example.com"})
    assert response.status_code == 201, response.json
    body: dict[str, Any] = response.json
    return body


def play(api: Api, a: int, b: int) -> int:
    with api.db.session() as session:
        match_id = schedule_match(session, a, b, rules=RuleSet(target=50, best_of=1), seed=3).id
    assert run_match_job(api.db, SETTINGS, match_id, "w").status is JobStatus.RECORDED
    return match_id


def test_every_version_of_a_bot_newest_first_with_why_it_was_made(api: Api, house: HouseBots):
    bot = register(api, house.urls[0], "evolving")
    bot_id, token = bot["id"], bot["token"]
    assert bot["bot"]["version"] == {"id": bot["bot"]["version"]["id"], "number": 1, "label": "1"}
    assert (
        api.patch(f"/api/v1/bots/{bot_id}", {"url": house.urls[1]}, token=token).status_code == 200
    )
    assert api.post(f"/api/v1/bots/{bot_id}/secret", token=token).status_code == 200
    body = api.get(f"/api/v1/bots/{bot_id}/versions").json
    assert body["bot_id"] == bot_id and body["elo_history"] == []
    items = body["items"]
    assert [(v["number"], v["label"], v["reason"], v["current"]) for v in items] == [
        (3, "1", "secret_changed", True),
        (2, "1", "url_changed", False),
        (1, "1", "registered", False),
    ]
    assert all(v["elo"] == 1500.0 and v["rating"] is None and v["matches"] == 0 for v in items)
    detail = api.get(f"/api/v1/bots/{bot_id}").json
    assert detail["version"] == {"id": items[0]["id"], "number": 3, "label": "1"}
    listed = api.get("/api/v1/bots?sort=id").json["items"]
    assert listed[0]["version"]["number"] == 3


def test_a_match_names_the_version_of_each_side_and_each_version_counts_it(
    api: Api, house: HouseBots
):
    a = register(api, house.urls[0], "alpha")["id"]
    b = register(api, house.urls[1], "beta")["id"]
    match_id = play(api, a, b)
    versions_a = api.get(f"/api/v1/bots/{a}/versions").json
    version_a = versions_a["items"][0]
    match = api.get(f"/api/v1/matches/{match_id}").json
    assert match["versions"]["a"] == {"id": version_a["id"], "number": 1, "label": "1"}
    assert match["versions"]["b"]["number"] == 1
    replay = api.get(f"/api/v1/matches/{match_id}/replay").json
    assert replay["versions"]["a"] == {"id": version_a["id"], "number": 1}
    seat = api.get(f"/api/v1/matches/{match_id}/replay?seat=b").json
    assert seat["versions"] == replay["versions"]
    assert version_a["matches"] == 1
    (point,) = versions_a["elo_history"]
    assert point["match_id"] == match_id and point["version_id"] == version_a["id"]
    assert point["before"] == 1500.0 and point["after"] == version_a["elo"]
    board = api.get("/api/v1/ratings").json["items"]
    assert {row["version"]["number"] for row in board} == {1}


def test_the_versions_of_a_bot_that_does_not_exist_are_a_404_problem(api: Api):
    response = api.get("/api/v1/bots/4040/versions")
    assert response.status_code == 404 and response.mimetype == PROBLEM


def test_the_versions_history_parameter_is_bounded(api: Api, house: HouseBots):
    bot_id = register(api, house.urls[0], "bounded")["id"]
    assert api.get(f"/api/v1/bots/{bot_id}/versions?history=0").status_code == 200
    response = api.get(f"/api/v1/bots/{bot_id}/versions?history=1001")
    assert response.status_code == 422 and response.mimetype == PROBLEM
