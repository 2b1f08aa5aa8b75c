"""Golden examples of the REST API: checked-in response bodies in ``api_spec/examples/api/``
(volatile fields normalised) that lock the wire format, each valid against its schema in
``api_spec/openapi.yaml``.

After a deliberate change to a response, rewrite them with::

    GIN_ARENA_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/api/test_api_golden.py -k sqlite
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api
from api_world import ADMIN_TOKEN, World
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

ROOT = Path(__file__).resolve().parents[2] / "api_spec"
EXAMPLES = ROOT / "examples" / "api"
SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
SPEC_URI = "urn:gin-arena:api"
REGISTRY: Registry[Any] = Registry().with_resource(
    SPEC_URI, Resource.from_contents(SPEC, default_specification=DRAFT202012)
)
UPDATE = os.environ.get("GIN_ARENA_UPDATE_GOLDEN") == "1"

#: Keys whose values change from run to run (times, latencies, credentials, digests).
VOLATILE = {
    "created_at", "updated_at", "started_at", "finished_at", "at", "duration_ms",
    "bot_time_ms", "latency_ms", "p50", "p99", "max", "ms", "token", "secret", "digest",
    "previous_rtt_ms",
}  # fmt: skip

#: name -> (how to get it, its schema: a component name or a JSON pointer into the spec)
GOLDEN: dict[str, tuple[Callable[[Api, World], Any], str]] = {
    "leaderboard": (lambda a, w: a.get("/api/v1/ratings"), "Leaderboard"),
    "bots.page": (lambda a, w: a.get("/api/v1/bots?sort=id"), "BotPage"),
    "bot": (lambda a, w: a.get(f"/api/v1/bots/{w.bots['charlie']}"), "BotDetail"),
    # What its owner (and the organiser) read: the owner contact and the URL too.
    "bot.as-owner": (
        lambda a, w: a.get(f"/api/v1/bots/{w.bots['charlie']}", token=w.tokens["charlie"]),
        "BotDetail",
    ),
    "bot.versions": (
        lambda a, w: a.get(f"/api/v1/bots/{w.bots['alpha']}/versions"),
        "BotVersions",
    ),
    "rating-history": (
        lambda a, w: a.get(f"/api/v1/ratings/{w.bots['alpha']}/history"),
        "/paths/~1api~1v1~1ratings~1{bot_id}~1history/get/responses/200/content/application~1json/schema",
    ),
    "tournament": (
        lambda a, w: a.get(f"/api/v1/tournaments/{w.finished_tournament}"),
        "TournamentDetail",
    ),
    "tournament.running": (
        lambda a, w: a.get(f"/api/v1/tournaments/{w.running_tournament}"),
        "TournamentDetail",
    ),
    "bracket": (
        lambda a, w: a.get(f"/api/v1/tournaments/{w.finished_tournament}/bracket"),
        "Bracket",
    ),
    "standings": (
        lambda a, w: a.get(f"/api/v1/tournaments/{w.finished_tournament}/standings"),
        "/paths/~1api~1v1~1tournaments~1{tournament_id}~1standings/get/responses/200/content/application~1json/schema",
    ),
    "matches.page": (lambda a, w: a.get("/api/v1/matches?limit=3"), "MatchPage"),
    "match": (lambda a, w: a.get(f"/api/v1/matches/{w.challenge_match}"), "MatchDetail"),
    "replay": (lambda a, w: a.get(f"/api/v1/matches/{w.challenge_match}/replay"), "Replay"),
    "replay.seat-b": (
        lambda a, w: a.get(f"/api/v1/matches/{w.challenge_match}/replay?seat=b"),
        "SeatReplay",
    ),
    "problem.validation": (
        lambda a, w: a.post(
            "/api/v1/tournaments",
            {"name": "x", "format": "swiss", "rules": {"fields": {"target": "far"}}},
            token=ADMIN_TOKEN,
        ),
        "Problem",
    ),
    "problem.embargoed": (
        lambda a, w: a.get(f"/api/v1/matches/{w.embargoed_match}/replay"),
        "Problem",
    ),
    "problem.forbidden": (
        lambda a, w: a.post(f"/api/v1/bots/{w.bots['alpha']}/secret", token=w.tokens["bravo"]),
        "Problem",
    ),
}


def normalise(value: Any, key: str | None = None) -> Any:
    if key in VOLATILE and value is not None:
        return f"<{key}>"
    if isinstance(value, dict):
        return {k: normalise(v, k) for k, v in value.items()}
    if isinstance(value, list):
        if key == "actions":  # [seat, action, latency_ms, fault?]
            return [[e[0], e[1], "<latency_ms>", *e[3:]] for e in value]
        return [normalise(v) for v in value]
    return value


def validator(where: str) -> jsonschema.Draft202012Validator:
    pointer = where if where.startswith("/") else f"/components/schemas/{where}"
    return jsonschema.Draft202012Validator({"$ref": f"{SPEC_URI}#{pointer}"}, registry=REGISTRY)


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_example(reader: Api, world: World, name: str):
    fetch, schema = GOLDEN[name]
    response = fetch(reader, world)
    body = response.json
    validator(schema).validate(body)
    path = EXAMPLES / f"{name}.json"
    text = json.dumps(normalise(body), indent=2, sort_keys=True) + "\n"
    if UPDATE:
        EXAMPLES.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == text, f"{name} changed: see the module docstring"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_golden_file_is_still_produced(path: Path):
    assert path.stem in GOLDEN
