"""The leaderboard (Elo, interval, provisional flag, record) and a bot's rating history."""

from __future__ import annotations

from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api
from api_world import World


def test_leaderboard_ranks_active_bots_with_interval_and_record(reader: Api, world: World):
    body = reader.get("/api/v1/ratings").json
    items = body["items"]
    assert [e["rank"] for e in items] == list(range(1, len(items) + 1))
    assert world.bots["echo"] not in {e["id"] for e in items}
    top = items[0]
    assert top["name"] == "alpha"
    fit = top["rating"]
    assert fit["ci_low"] < fit["rating"] < fit["ci_high"]
    assert top["record"]["wins"] >= 3
    assert all(isinstance(e["provisional"], bool) for e in items)
    assert body["provisional_matches"] == 10


def test_leaderboard_can_include_inactive_bots_and_limit(reader: Api, world: World):
    body = reader.get("/api/v1/ratings?include_inactive=true").json
    # echo (inactive) has never played: unrated, listed apart and never ranked
    assert world.bots["echo"] in {e["id"] for e in body["unrated"]}
    assert world.bots["echo"] not in {e["id"] for e in body["items"]}
    active = reader.get("/api/v1/ratings").json
    assert world.bots["echo"] not in {e["id"] for e in active["unrated"]}
    assert len(reader.get("/api/v1/ratings?limit=2").json["items"]) == 2
    assert reader.get("/api/v1/ratings?include_inactive=maybe").status_code == 422


def test_rating_history_newest_first(reader: Api, world: World):
    body = reader.get(f"/api/v1/ratings/{world.bots['alpha']}/history").json
    items = body["items"]
    assert len(items) == 3  # two spring cup matches and the first duplicate match
    assert [i["match_id"] for i in items] == sorted((i["match_id"] for i in items), reverse=True)
    assert items[-1]["before"] == 1500.0
    assert reader.get("/api/v1/ratings/4242/history").status_code == 404


def test_bot_detail_has_statistics_and_history(reader: Api, world: World):
    body = reader.get(f"/api/v1/bots/{world.bots['charlie']}").json
    stats = body["statistics"]
    assert stats["faults"] > 0 and stats["calls"] > 0
    assert stats["latency_ms"]["p50"] is not None
    assert body["rating_history"]
