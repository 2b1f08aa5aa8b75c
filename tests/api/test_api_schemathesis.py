"""Schemathesis against the live app, from the served description: no 5xx for any generated
request, and every answer (status, content type, headers, body) conforms to the spec.

Each operation is tried anonymously, with a bot owner's token and with the organiser's (so
the owners' and the organiser's writes are exercised too, not only their 401s), with valid
input and, as an owner and as the organiser, with input that breaks the schema (which must be
a 4xx problem, never a 5xx), on a database with history (a webhook endpoint with a delivery
and an SPRT test included). Half the generated requests name ids that exist (a bot, its
webhook and delivery, a tournament, a match, a test), so the logic behind the 404 is reached;
the rate limit is raised (not off) so the limiter runs on every request and never answers
429 (the expensive writes' fixed budget is emptied before each request). Each operation
counts its requests and 5xx answers. The number of examples is kept modest so the run takes
seconds (``ARENA_SCHEMATHESIS_EXAMPLES`` raises it: ``benchmarks/bench_security.py`` runs the
big form and writes the counts where ``ARENA_SECURITY_FIGURES`` says).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml
from api_support import make_api
from api_world import ADMIN_TOKEN, World, build_world
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode, checks
from sqlalchemy import select

from arena.db.models import WebhookDeliveryRow
from arena.db.session import Database
from arena.events import EventType
from arena.services.events import emit
from arena.services.webhook_endpoints import create_endpoint
from arena.settings import Settings

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]


#: Raised, not off: the limiter runs on every request and never refuses one of these.
RAISED_LIMIT = "1000000 per minute"
EXAMPLES = int(os.environ.get("ARENA_SCHEMATHESIS_EXAMPLES", "7"))


@dataclass
class Live:
    """The schema of the live app, the ids that exist and the tokens of each role."""

    schema: schemathesis.BaseSchema
    ids: dict[str, int]
    tokens: dict[str, str | None]
    app: Any


def _history(world: World) -> dict[str, int]:
    """A webhook endpoint of alpha with one delivery, and an SPRT test of alpha against itself:
    the ids every path parameter can take."""
    db = Database(world.url)
    alpha = world.bots["alpha"]
    try:
        settings_ = Settings(database_url=world.url, allow_loopback=True)
        hook = create_endpoint(
            db, settings_, alpha, url="http://127.0.0.1:9/hooks", event_types=["match.finished"]
        )
        with db.session() as session:
            emit(session, EventType.MATCH_FINISHED, {"match": 1}, audience=[alpha])
        with db.session() as session:
            delivery = session.scalars(select(WebhookDeliveryRow.id)).one()
    finally:
        db.dispose()
    return {
        "bot_id": alpha,
        "webhook_id": hook.endpoint_id,
        "delivery_id": delivery,
        "tournament_id": world.finished_tournament,
        "match_id": world.finished_matches[0],
    }


@pytest.fixture(scope="module")
def live(sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    path = tmp_path_factory.mktemp("schemathesis") / "arena.db"
    shutil.copy(sqlite_template, path)
    world = build_world(f"sqlite:///{path}")
    ids = _history(world)
    tokens = {"anonymous": None, "owner": world.tokens["alpha"], "organiser": ADMIN_TOKEN}
    for api in make_api(world.url, rate_limit=RAISED_LIMIT):
        test = api.post(
            "/api/v1/tests",
            {"candidate_id": ids["bot_id"], "baseline_id": ids["bot_id"], "elo0": 0, "elo1": 10},
            token=tokens["owner"],
        )
        assert test.status_code == 201, test.json
        ids["test_id"] = test.json["id"]
        schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", api.app)
        yield Live(schema, ids, tokens, api.app)


SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
SPEC = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "api_spec" / "openapi.yaml").read_text("utf-8")
)
POSITIVE, NEGATIVE = GenerationMode.POSITIVE, GenerationMode.NEGATIVE


def _has_input(path: str, method: str) -> bool:
    item = SPEC["paths"][path]
    return bool(item.get("parameters") or item[method].get("parameters")) or (
        "requestBody" in item[method]
    )


CASES = [
    pytest.param(method.upper(), path, who, mode, id=f"{who}-{mode.value}-{method.upper()} {path}")
    for path, item in SPEC["paths"].items()
    for method in item
    if method in ("get", "post", "patch", "put", "delete")
    for who, mode in [
        ("anonymous", POSITIVE),
        ("owner", POSITIVE),
        ("organiser", POSITIVE),
        ("owner", NEGATIVE),
        ("organiser", NEGATIVE),
    ]
    if mode is POSITIVE or _has_input(path, method)
    # Live streams never end on their own: tests/live follows them over real HTTP.
    if not item[method].get("x-streaming")
]


def _record(figures: dict[str, Any]) -> None:
    """Append this operation's counts to ``ARENA_SECURITY_FIGURES`` (a JSON-lines file), if set."""
    out = os.environ.get("ARENA_SECURITY_FIGURES")
    if out:
        with open(out, "a", encoding="utf-8") as file:
            file.write(json.dumps({"schemathesis": figures}) + "\n")


# (Not schemathesis' own pytest plugin: its parametrize does not run under pytest 9.)
@pytest.mark.parametrize(("method", "path", "who", "mode"), CASES)
def test_operation_conforms_to_the_spec(
    live: Live, method: str, path: str, who: str, mode: GenerationMode
):
    operation = live.schema[path][method]
    # The WSGI transport does not decompress: ask for plain bodies (gzip is tested elsewhere).
    headers = {"Accept-Encoding": "identity"}
    token = live.tokens[who]
    if token:
        headers["Authorization"] = f"Bearer {token}"
    counts = {"requests": 0, "5xx": 0, "429": 0}

    @given(case=operation.as_strategy(mode), real_ids=st.booleans())
    @SETTINGS
    def run(case: schemathesis.Case, real_ids: bool) -> None:
        if real_ids and mode is POSITIVE and case.path_parameters:
            for name in case.path_parameters:
                case.path_parameters[name] = live.ids[name]
        counts["requests"] += 1
        # The expensive writes' own budget (60 an hour, arena.api.limits.EXPENSIVE) is not a
        # setting: emptied before each request, so the views behind it are reached too.
        for limiter in live.app.extensions["limiter"]:
            limiter.reset()
        response = case.call(headers=headers)
        if path == "/api/v1/bots/{bot_id}/token" and response.status_code == 200:
            # The owner rotated its own token: the old one is now (rightly) a 401.
            live.tokens["owner"] = response.json()["token"]
            if who == "owner":
                headers["Authorization"] = f"Bearer {live.tokens['owner']}"
        counts["5xx"] += response.status_code >= 500
        counts["429"] += response.status_code == 429
        case.validate_response(response, checks=CHECKS, headers=headers)

    try:
        run()
    finally:
        _record({"operation": f"{method} {path}", "who": who, "mode": mode.value, **counts})
    assert counts["requests"] > 0 and counts["5xx"] == 0 and counts["429"] == 0, counts
