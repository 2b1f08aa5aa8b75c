"""``GET /api/v1/bots/{id}/health`` (SQLite and PostgreSQL): a bot's health as the spec
describes it, its probes newest first and paged by keyset, the errors; a suspended bot in the
bot lists and the leaderboard; and a challenge to a suspended bot refused with a clear 422."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, HouseBots
from loopback import free_port
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from arena.services.bots import register_bot
from arena.services.health import health_sweep, probe_now
from arena.settings import Settings

SPEC: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "api_spec" / "openapi.yaml").read_text("utf-8")
)
REGISTRY: Registry[Any] = Registry().with_resource(
    "urn:spec", Resource.from_contents(SPEC, default_specification=DRAFT202012)
)
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _valid(body: Any, component: str = "BotHealth") -> None:
    jsonschema.Draft202012Validator(
        {"$ref": f"urn:spec#/components/schemas/{component}"}, registry=REGISTRY
    ).validate(body)


def _settings(api: Api) -> Settings:
    settings = api.app.extensions["gin_arena"]["settings"]
    assert isinstance(settings, Settings)
    return settings


def _dead_bot(api: Api, name: str = "gone") -> int:
    url = f"http://127.0.0.1:{free_port()}"
    return register_bot(api.db, name=name, owner=f"{name}@example.org", url=url).bot_id


def _sweeps(api: Api, n: int) -> None:
    settings = _settings(api)
    for i in range(n):
        now = T0 + timedelta(seconds=i * settings.health_interval_seconds)
        health_sweep(api.db, settings, lambda ids: None, now=now)


def test_a_bot_never_probed_has_an_empty_health(api: Api) -> None:
    bot = _dead_bot(api)
    response = api.get(f"/api/v1/bots/{bot}/health")
    assert response.status_code == 200
    body = response.json
    _valid(body)
    assert body["bot"] == {"id": bot, "name": "gone"}
    assert (body["status"], body["failed_probes"], body["passed_probes"]) == ("active", 0, 0)
    assert body["last_probed_at"] is None and body["last_probe"] is None
    assert body["items"] == [] and body["next_before"] is None
    assert body["policy"] == {
        "interval_seconds": 300.0,
        "timeout_seconds": 5.0,
        "failures_to_suspend": 3,
        "successes_to_resume": 2,
    }


def test_health_lists_probes_newest_first_and_pages_by_keyset(api: Api) -> None:
    bot = _dead_bot(api)
    _sweeps(api, 5)
    body = api.get(f"/api/v1/bots/{bot}/health?limit=2").json
    _valid(body)
    assert (body["status"], body["failed_probes"], body["passed_probes"]) == ("suspended", 5, 0)
    times = [p["probed_at"] for p in body["items"]]
    assert times == sorted(times, reverse=True) and len(times) == 2
    assert body["last_probe"] == body["items"][0]
    assert body["last_probed_at"] == body["last_probe"]["probed_at"]
    seen = list(body["items"])
    while body["next_before"] is not None:
        body = api.get(f"/api/v1/bots/{bot}/health?limit=2&before={body['next_before']}").json
        _valid(body)
        seen += body["items"]
    assert len(seen) == 5 and len({p["id"] for p in seen}) == 5
    assert [p["probed_at"] for p in seen] == sorted((p["probed_at"] for p in seen), reverse=True)
    assert [p["status_after"] for p in reversed(seen)] == ["active"] * 2 + ["suspended"] * 3
    first = seen[-1]
    assert first["passed"] is False and first["trigger"] == "sweep"
    assert first["reason"] == "GET /: connection: connection refused"
    assert first["latency_ms"] is None


def test_a_passing_probe_shows_its_latency(api: Api, house: HouseBots) -> None:
    bot = register_bot(api.db, name="fine", owner="o", url=house.urls[0]).bot_id
    probe_now(api.db, _settings(api), bot, now=T0)
    (probe,) = api.get(f"/api/v1/bots/{bot}/health").json["items"]
    assert probe["passed"] is True and probe["reason"] is None and probe["trigger"] == "cli"
    assert probe["latency_ms"] > 0


def test_health_errors_name_what_is_wrong(api: Api) -> None:
    bot, other = _dead_bot(api, "one"), _dead_bot(api, "two")
    _sweeps(api, 1)
    others_probe = api.get(f"/api/v1/bots/{other}/health").json["items"][0]["id"]
    response = api.get(f"/api/v1/bots/{bot}/health?before={others_probe}")
    assert response.status_code == 422
    assert response.json["errors"] == [
        {"field": "query.before", "message": "not a probe of this bot"}
    ]
    assert api.get("/api/v1/bots/999/health").status_code == 404
    assert api.get(f"/api/v1/bots/{bot}/health?limit=0").status_code == 422


def test_a_suspended_bot_is_listed_as_suspended_and_keeps_its_place_on_the_leaderboard(
    api: Api,
) -> None:
    bot = _dead_bot(api)
    _sweeps(api, 3)
    detail = api.get(f"/api/v1/bots/{bot}").json
    _valid(detail, "BotDetail")
    assert detail["status"] == "suspended"
    listed = api.get("/api/v1/bots?status=suspended").json["items"]
    assert [b["id"] for b in listed] == [bot]
    unrated = api.get("/api/v1/ratings").json["unrated"]
    assert [b["id"] for b in unrated] == [bot]


def test_a_challenge_to_a_suspended_bot_is_refused_with_a_clear_422(api: Api) -> None:
    down = _dead_bot(api)
    _sweeps(api, 3)
    me = register_bot(api.db, name="me", owner="o", url="http://127.0.0.1:9001")
    body = {"bot_id": me.bot_id, "opponent_id": down}
    response = api.post("/api/v1/challenges", body, token=me.token)
    assert response.status_code == 422
    assert response.json["detail"] == (
        f"bot {down} is suspended: its health probes failed, and it plays again once they pass"
    )
    assert response.json["errors"] == [{"field": "opponent_id", "message": "the bot is suspended"}]
    assert api.enqueued == []


def test_the_owner_may_reactivate_a_suspended_bot_that_passes_the_check(
    api: Api, house: HouseBots
) -> None:
    owned = register_bot(api.db, name="back", owner="o", url=house.urls[1])
    refusing = _settings(api).replace(allow_loopback=False)  # every probe fails: URL refused
    for i in range(3):
        now = T0 + timedelta(seconds=i * refusing.health_interval_seconds)
        health_sweep(api.db, refusing, lambda ids: None, now=now)
    assert api.get(f"/api/v1/bots/{owned.bot_id}/health").json["status"] == "suspended"
    response = api.post(f"/api/v1/bots/{owned.bot_id}/activate", token=owned.token)
    assert response.status_code == 200 and response.json["status"] == "active"
    body = api.get(f"/api/v1/bots/{owned.bot_id}/health").json
    assert (body["status"], body["failed_probes"]) == ("active", 3)  # counters as they were
    probe_now(api.db, _settings(api), owned.bot_id, now=T0 + timedelta(hours=1))
    body = api.get(f"/api/v1/bots/{owned.bot_id}/health").json
    assert (body["status"], body["failed_probes"], body["passed_probes"]) == ("active", 0, 1)
