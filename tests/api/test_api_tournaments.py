"""Tournaments through the API: the organiser creates, starts and cancels; everyone reads the
tournament, its bracket and standings, with seeds withheld until the event is over."""

from __future__ import annotations

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api
from api_world import ADMIN_TOKEN, World, play_pending

from arena.services.bots import register_bot, set_status
from arena.settings import Settings
from arena.states import BotStatus


@pytest.fixture
def bots(api: Api) -> list[int]:
    ids = [
        register_bot(api.db, name=f"b{i}", owner="o", url=f"http://127.0.0.1:{9000 + i}").bot_id
        for i in range(5)
    ]
    set_status(api.db, ids[4], BotStatus.INACTIVE)
    return ids


def create(api: Api, body: dict) -> dict:
    response = api.post("/api/v1/tournaments", body, token=ADMIN_TOKEN)
    assert response.status_code == 201, response.json
    return response.json


def test_create_with_all_active_bots_options_rules_and_seed(api: Api, bots: list[int]):
    body = create(
        api,
        {
            "name": "swiss open",
            "format": "swiss",
            "options": {"rounds": 3, "duplicate": True},
            "rules": {"preset": "oklahoma", "fields": {"best_of": 3}},
            "seed": 42,
            "rated": False,
        },
    )
    assert body["status"] == "created" and body["format"] == "swiss"
    assert body["options"] == {"rounds": 3, "duplicate": True}
    assert body["rules"]["upcard_sets_knock_limit"] is True and body["rules"]["best_of"] == 3
    assert body["rated"] is False
    assert {p["bot_id"] for p in body["participants"]} == set(bots[:4])
    assert body["seed"] is None  # secret until the event is over


def test_create_with_named_participants(api: Api, bots: list[int]):
    body = create(api, {"name": "ko", "format": "single_elimination", "participants": bots[:3]})
    assert sorted(p["bot_id"] for p in body["participants"]) == sorted(bots[:3])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "s", "format": "swiss"}, "options"),
        ({"name": "s", "format": "round_robin", "options": {"rounds": 2}}, "options"),
        ({"name": "s", "format": "chess"}, "format"),
        ({"name": "s", "format": "round_robin", "participants": [1]}, "participants"),
        ({"name": "s", "format": "round_robin", "participants": [1, 999]}, "participants"),
        (
            {"name": "s", "format": "round_robin", "rules": {"fields": {"gin_bonus": -1}}},
            "rules.fields.gin_bonus",
        ),
        (
            {"name": "s", "format": "round_robin", "rules": {"fields": {"colour": "red"}}},
            "rules.fields.colour",
        ),
        ({"name": "s", "format": "round_robin", "rules": {"preset": "rummy"}}, "rules.preset"),
        ({"name": "", "format": "round_robin"}, "name"),
        ({"name": "s", "format": "round_robin", "seed": -1}, "seed"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_create_errors_name_the_field(api: Api, bots: list[int], body: dict, field: str):
    response = api.post("/api/v1/tournaments", body, token=ADMIN_TOKEN)
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert response.json["errors"][0]["field"] == field, response.json


def test_inactive_bots_cannot_enter(api: Api, bots: list[int]):
    response = api.post(
        "/api/v1/tournaments",
        {"name": "s", "format": "round_robin", "participants": [bots[0], bots[4]]},
        token=ADMIN_TOKEN,
    )
    assert response.status_code == 422 and "inactive" in response.json["detail"]


def test_start_schedules_and_submits_the_first_matches_once(api: Api, bots: list[int]):
    tid = create(api, {"name": "rr", "format": "round_robin"})["id"]
    response = api.post(f"/api/v1/tournaments/{tid}/start", token=ADMIN_TOKEN)
    assert response.status_code == 200
    scheduled = response.json["scheduled"]
    assert len(scheduled) == 6 and api.enqueued == scheduled  # 4 bots: every pairing ready
    assert response.json["tournament"]["status"] == "running"
    again = api.post(f"/api/v1/tournaments/{tid}/start", token=ADMIN_TOKEN)
    assert again.status_code == 409 or again.json["scheduled"] == []


def test_cancel_stops_the_event_and_cancels_queued_matches(api: Api, bots: list[int]):
    tid = create(api, {"name": "rr", "format": "round_robin"})["id"]
    scheduled = api.post(f"/api/v1/tournaments/{tid}/start", token=ADMIN_TOKEN).json["scheduled"]
    response = api.post(f"/api/v1/tournaments/{tid}/cancel", token=ADMIN_TOKEN)
    assert response.status_code == 200
    assert sorted(response.json["cancelled"]) == sorted(scheduled)
    assert response.json["tournament"]["status"] == "cancelled"
    assert response.json["tournament"]["seed"] is not None  # over: nothing left to protect
    assert api.post(f"/api/v1/tournaments/{tid}/cancel", token=ADMIN_TOKEN).status_code == 409
    assert api.post(f"/api/v1/tournaments/{tid}/start", token=ADMIN_TOKEN).status_code == 409


def test_unknown_tournament_is_404_everywhere(api: Api):
    for path in ("", "/bracket", "/standings"):
        assert api.get(f"/api/v1/tournaments/4242{path}").status_code == 404
    for path in ("/start", "/cancel"):
        assert api.post(f"/api/v1/tournaments/4242{path}", token=ADMIN_TOKEN).status_code == 404


def test_list_pages_newest_first(api: Api, bots: list[int]):
    ids = [create(api, {"name": f"t{i}", "format": "round_robin"})["id"] for i in range(5)]
    seen, before = [], ""
    while True:
        page = api.get(f"/api/v1/tournaments?limit=2{before}").json
        seen += [t["id"] for t in page["items"]]
        if page["next_before"] is None:
            break
        before = f"&before={page['next_before']}"
    assert seen == sorted(ids, reverse=True)
    assert api.get("/api/v1/tournaments?status=running").json["items"] == []


# --- reads over a tournament that was played -----------------------------------------------


def test_finished_tournament_detail_shows_champion_counts_and_seed(reader: Api, world: World):
    body = reader.get(f"/api/v1/tournaments/{world.finished_tournament}").json
    assert body["status"] == "finished" and body["seed"] == 7
    assert body["matches"]["finished"] == 3
    assert body["champion"] is not None


def test_bracket_is_drawable_with_ids_and_match_links(reader: Api, world: World):
    body = reader.get(f"/api/v1/tournaments/{world.finished_tournament}/bracket").json
    assert body["finished"] is True and body["sections"][0]["name"] == "rounds"
    pairings = [p for r in body["sections"][0]["rounds"] for p in r["pairings"]]
    played = [p for p in pairings if p["status"] == "done"]
    assert len(played) == 3
    assert all(isinstance(p["winner"], int) for p in played)
    assert {m["match_id"] for p in played for m in p["matches"]} == set(world.finished_matches[:3])
    byes = [p for p in pairings if p["status"] == "bye"]
    assert byes and all(p["b"] is None for p in byes)


def test_running_duplicate_tournament_hides_seeds(reader: Api, world: World):
    tid = world.running_tournament
    assert reader.get(f"/api/v1/tournaments/{tid}").json["seed"] is None
    bracket = reader.get(f"/api/v1/tournaments/{tid}/bracket").json
    seeds = [m["seed"] for s in bracket["sections"] for r in s["rounds"]
             for p in r["pairings"] for m in p["matches"]]  # fmt: skip
    assert seeds and all(s is None for s in seeds)


def test_standings_rank_with_records_and_tiebreaks(reader: Api, world: World):
    body = reader.get(f"/api/v1/tournaments/{world.finished_tournament}/standings").json
    items = body["items"]
    assert [s["rank"] for s in items] == sorted(s["rank"] for s in items)
    assert items[0]["bot_id"] == world.bots["alpha"]
    assert all({"wins", "losses", "score", "tiebreaks", "name"} <= set(s) for s in items)


def test_cached_bracket_and_standings_follow_every_result(api: Api, bots: list[int]):
    tid = create(api, {"name": "rr", "format": "round_robin", "participants": bots[:2],
                       "rules": {"fields": {"target": 50, "best_of": 1}}})["id"]  # fmt: skip
    path = f"/api/v1/tournaments/{tid}"
    before = api.get(path + "/bracket")
    assert api.get(path + "/bracket").headers["ETag"] == before.headers["ETag"]
    scheduled = api.post(path + "/start", token=ADMIN_TOKEN).json["scheduled"]
    started = api.get(path + "/bracket").json
    assert started != before.json
    play_pending(api.db, Settings(database_url=api.db.url), scheduled)
    final = api.get(path + "/standings").json["items"]
    assert sum(s["wins"] for s in final) == 1
    detail = api.get(path).json
    assert detail["status"] == "finished" and detail["seed"] is not None
    bracket = api.get(path + "/bracket").json
    assert bracket["finished"] is True
    assert all(m["seed"] is not None for s in bracket["sections"] for r in s["rounds"]
               for p in r["pairings"] for m in p["matches"])  # fmt: skip
