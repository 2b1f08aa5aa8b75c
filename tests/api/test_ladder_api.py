"""``GET /api/v1/ladder`` on SQLite and PostgreSQL: the policy, each preset's last round, its
matches in flight and today's, and its standings by ladder Elo; every answer valid against its
schema in ``api_spec/openapi.yaml``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, make_api
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.players import HeuristicPlayer, Player
from arena.services.bots import register_bot, set_status
from arena.services.ladder import run_ladder
from arena.services.matches import Claim
from arena.settings import Settings
from arena.states import BotStatus

SPEC: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "api_spec" / "openapi.yaml").read_text("utf-8")
)
REGISTRY: Registry[Any] = Registry().with_resource(
    "urn:spec", Resource.from_contents(SPEC, default_specification=DRAFT202012)
)
OVERVIEW = jsonschema.Draft202012Validator(
    {"$ref": "urn:spec#/components/schemas/LadderOverview"}, registry=REGISTRY
)


def _heuristic(claim: Claim, _settings: Settings) -> list[Player]:
    return [HeuristicPlayer(name=b.name, early_knock=4 + b.id % 5) for b in claim.spec.bots]


def _play(db: Database, settings: Settings, ids: Iterable[int]) -> None:
    for match_id in ids:
        outcome = run_match_job(db, settings, match_id, "test", make_players=_heuristic)
        assert outcome.status is JobStatus.RECORDED, outcome


def _ladder(api: Api, query: str = "") -> dict[str, Any]:
    response = api.get(f"/api/v1/ladder{query}")
    assert response.status_code == 200, response.json
    body: dict[str, Any] = response.json
    OVERVIEW.validate(body)
    return body


def _bots(api: Api, count: int) -> list[int]:
    return [
        register_bot(api.db, name=f"bot{i}", owner="t", url=f"http://127.0.0.1:{9100 + i}").bot_id
        for i in range(count)
    ]


def test_the_ladder_shows_its_policy_last_round_today_and_standings(api: Api) -> None:
    settings: Settings = api.app.extensions["gin_arena"]["settings"]
    bots = _bots(api, 4)
    started = datetime.now(UTC)
    ids = run_ladder(api.db, settings, api.enqueued.extend)
    body = _ladder(api)
    assert body["policy"] == {
        "presets": ["standard"],
        "interval_seconds": 300.0,
        "matches_per_day": 100,
        "max_concurrent_per_bot": 2,
        "rating_window": 200.0,
        "exploration": 0.2,
        "duplicate_pairs": True,
        "provisional_matches": 10,
    }
    (ladder,) = body["ladders"]
    assert ladder["preset"] == "standard" and ladder["enabled"]
    assert ladder["last_round"]["scheduled"] == 4 == len(ids)
    assert ladder["in_flight"] == 4 and ladder["standings"] == []
    _play(api.db, settings, ids)
    after = _ladder(api)
    (ladder,) = after["ladders"]
    assert ladder["in_flight"] == 0
    standings = ladder["standings"]
    assert [row["rank"] for row in standings] == [1, 2, 3, 4]
    assert {row["bot_id"] for row in standings} == set(bots)
    assert all(row["matches"] == 2 and row["status"] == "active" for row in standings)
    assert [row["elo"] for row in standings] == sorted((r["elo"] for r in standings), reverse=True)
    assert sum(row["elo"] for row in standings) == pytest.approx(6000.0, abs=0.5)
    if after["day"] == started.date().isoformat():  # not across a UTC midnight
        assert ladder["today"]["matches"] == 4
        assert sorted(b["matches"] for b in ladder["today"]["bots"]) == [2, 2, 2, 2]


def test_an_inactive_bot_leaves_the_standings_and_a_suspended_one_keeps_its_place(
    api: Api,
) -> None:
    settings: Settings = api.app.extensions["gin_arena"]["settings"]
    bots = _bots(api, 4)
    _play(api.db, settings, run_ladder(api.db, settings, api.enqueued.extend))
    set_status(api.db, bots[0], BotStatus.INACTIVE)
    set_status(api.db, bots[1], BotStatus.SUSPENDED)
    standings = _ladder(api)["ladders"][0]["standings"]
    assert {row["bot_id"] for row in standings} == set(bots[1:])
    assert {row["bot_id"]: row["status"] for row in standings}[bots[1]] == "suspended"
    assert [row["rank"] for row in standings] == [1, 2, 3]
    assert len(_ladder(api, "?limit=2")["ladders"][0]["standings"]) == 2


def test_one_preset_is_shown_with_a_ladder_or_not(api: Api) -> None:
    body = _ladder(api, "?preset=oklahoma")
    (ladder,) = body["ladders"]
    assert ladder == {
        "preset": "oklahoma",
        "enabled": False,
        "last_round": None,
        "in_flight": 0,
        "today": {"matches": 0, "bots": []},
        "standings": [],
    }


def test_with_the_ladder_off_no_preset_is_listed(db_url: str) -> None:
    for api in make_api(db_url, ladder_presets=""):
        body = _ladder(api)
        assert body["policy"]["presets"] == [] and body["ladders"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [("?preset=chess", "query.preset"), ("?preset=", "query.preset"), ("?limit=0", "query.limit")],
    ids=["unknown-preset", "empty-preset", "limit-0"],
)
def test_a_bad_parameter_is_a_422_naming_it(api: Api, query: str, field: str) -> None:
    response = api.get(f"/api/v1/ladder{query}")
    assert response.status_code == 422
    assert response.mimetype == "application/problem+json"
    assert [e["field"] for e in response.json["errors"]] == [field]
