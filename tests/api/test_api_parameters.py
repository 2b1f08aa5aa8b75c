"""What a request may say, as ``api_spec/openapi.yaml`` says it and the code does it: empty
query values are refused (never taken for "absent"), integers are digits, ids are whole
numbers in range (and what is not one gets a 404 that says so, on SQLite and PostgreSQL, on
the API and on the pages), ``Retry-After`` is only on 429 and 503, and a Swiss tournament
needs its number of rounds, in the schema as in the code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, make_api
from api_world import ADMIN_TOKEN, World
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from arena.services.bots import register_bot

PROBLEM = "application/problem+json"
SPEC: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[2] / "api_spec" / "openapi.yaml").read_text("utf-8")
)
REGISTRY: Registry[Any] = Registry().with_resource(
    "urn:spec", Resource.from_contents(SPEC, default_specification=DRAFT202012)
)


def _spec_validator(component: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(
        {"$ref": f"urn:spec#/components/schemas/{component}"}, registry=REGISTRY
    )


def _query_parameters() -> list[tuple[str, str]]:
    """Every documented query parameter of every GET, as (path, name)."""
    out = []
    for path, item in SPEC["paths"].items():
        operation = item.get("get")
        if operation is None:
            continue
        for given in [*item.get("parameters", []), *operation.get("parameters", [])]:
            parameter = (
                SPEC["components"]["parameters"][given["$ref"].rsplit("/", 1)[1]]
                if "$ref" in given
                else given
            )
            if parameter["in"] == "query":
                out.append((path, parameter["name"]))
    return out


QUERY_PARAMETERS = _query_parameters()


def _fill(path: str, world: World) -> str:
    # The world has no webhook endpoint: query parameters are checked before it is looked up.
    return (
        path.replace("{bot_id}", str(world.bots["alpha"]))
        .replace("{match_id}", str(world.challenge_match))
        .replace("{tournament_id}", str(world.finished_tournament))
        .replace("{webhook_id}", "1")
    )


def test_every_list_has_its_query_parameters_in_the_table():
    assert len(QUERY_PARAMETERS) >= 15
    assert ("/api/v1/matches", "until") in QUERY_PARAMETERS
    assert ("/api/v1/bots", "status") in QUERY_PARAMETERS


@pytest.mark.parametrize(("path", "name"), QUERY_PARAMETERS, ids=lambda v: v)
def test_an_empty_query_value_is_refused_naming_the_parameter(
    reader: Api, world: World, path: str, name: str
):
    """``?status=`` used to be read as "no filter": a client's mistake passed silently."""
    response = reader.get(f"{_fill(path, world)}?{name}=", token=ADMIN_TOKEN)
    assert response.status_code == 422, response.json
    assert response.mimetype == PROBLEM
    assert response.json["errors"] == [
        {"field": f"query.{name}", "message": "empty: give a value or leave the parameter out"}
    ]
    assert repr(name) in response.json["detail"]


@pytest.mark.parametrize("raw", ["1.0", "1e3", "1_000", " 5", "٣", "0x10"])
def test_query_integers_are_ascii_digits(reader: Api, raw: str):
    response = reader.get("/api/v1/matches", query_string={"limit": raw})
    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == "query.limit"
    assert "not an integer" in response.json["detail"]


def test_query_ids_beyond_any_database_are_out_of_range_not_an_error(reader: Api):
    for raw in ("99999999999999999999", "9" * 5000):
        response = reader.get("/api/v1/matches", query_string={"bot_id": raw})
        assert response.status_code == 422
        assert "must be between 1 and 2147483647" in response.json["detail"]


#: Path templates of each kind of id, on the API and on the pages.
ID_PATHS = [
    ("bot", "/api/v1/bots/{}"),
    ("bot", "/api/v1/ratings/{}/history"),
    ("match", "/api/v1/matches/{}"),
    ("match", "/api/v1/matches/{}/replay"),
    ("tournament", "/api/v1/tournaments/{}"),
    ("tournament", "/api/v1/tournaments/{}/standings"),
    ("bot", "/bots/{}"),
    ("match", "/matches/{}"),
    ("tournament", "/tournaments/{}"),
]
NOT_IDS = ["0", "-1", "870503.0", "1e3", "abc", "٣", "+7"]
TOO_BIG = ["2147483648", "99999999999999999999", "9" * 400]


def _detail(response: Any) -> str:
    if response.mimetype == PROBLEM:
        return str(response.json["detail"])
    return str(response.get_data(as_text=True))


@pytest.mark.parametrize(("kind", "template"), ID_PATHS)
def test_what_is_not_an_id_is_a_404_that_says_so(api: Api, kind: str, template: str):
    for raw in NOT_IDS:
        response = api.get(template.format(raw))
        assert response.status_code == 404, (raw, response.status_code)
        detail = _detail(response)
        assert f"{kind} ids are whole numbers from 1 to 2147483647" in detail, (raw, detail)
        assert "does not exist" not in detail, raw


@pytest.mark.parametrize(("kind", "template"), ID_PATHS)
def test_an_id_beyond_any_database_is_a_404_naming_it_without_asking_the_database(
    api: Api, kind: str, template: str
):
    """The answer to all of these was "bot 0 does not exist"; on PostgreSQL the database must
    never see a number that overflows its integer columns."""
    for raw in TOO_BIG:
        response = api.get(template.format(raw))
        assert response.status_code == 404, (raw, response.status_code)
        assert f"{kind} {raw} does not exist" in _detail(response)


def test_writes_to_a_non_id_are_404_too(api: Api):
    for path in ("/api/v1/bots/0/deactivate", "/api/v1/tournaments/-3/start"):
        response = api.post(path, token=ADMIN_TOKEN)
        assert response.status_code == 404 and "ids are whole numbers" in response.json["detail"]


def test_an_id_written_as_a_float_in_a_body_is_refused_as_the_spec_says(api: Api):
    """JSON Schema alone takes ``870503.0`` for an integer; the spec says ids in bodies are
    JSON integers, and the code refuses the float with 422 naming the field."""
    a = register_bot(api.db, name="a", owner="o", url="http://127.0.0.1:9001")
    register_bot(api.db, name="b", owner="o", url="http://127.0.0.1:9002")
    assert "870503.0" in SPEC["components"]["schemas"]["Id"]["description"]
    response = api.client.post(
        "/api/v1/challenges",
        data='{"bot_id": 1.0, "opponent_id": 2}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {a.token}"},
    )
    assert response.status_code == 422 and response.json["errors"][0]["field"] == "bot_id"
    response = api.client.post(
        "/api/v1/tournaments",
        data='{"name": "t", "format": "round_robin", "participants": [1, 870503.0]}',
        content_type="application/json",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == "participants[1]"


def test_swiss_without_rounds_is_refused_by_the_spec_and_by_the_code(api: Api):
    for i in range(3):
        register_bot(api.db, name=f"s{i}", owner="o", url=f"http://127.0.0.1:{9001 + i}")
    schema = _spec_validator("TournamentCreate")
    for body in (
        {"name": "s", "format": "swiss"},
        {"name": "s", "format": "swiss", "options": {"duplicate": True}},
    ):
        assert not schema.is_valid(body), body
        response = api.post("/api/v1/tournaments", body, token=ADMIN_TOKEN)
        assert response.status_code == 422
        assert response.json["detail"] == "swiss: missing required option(s) rounds"
    body = {"name": "s", "format": "swiss", "options": {"rounds": 2}}
    schema.validate(body)
    assert api.post("/api/v1/tournaments", body, token=ADMIN_TOKEN).status_code == 201
    # Other formats need no rounds, in either.
    body = {"name": "r", "format": "round_robin"}
    schema.validate(body)
    assert api.post("/api/v1/tournaments", body, token=ADMIN_TOKEN).status_code == 201


def test_retry_after_is_only_on_429_and_503(db_url: str):
    """flask-limiter put ``Retry-After`` on every answer it counted, 200 and 201 included."""
    for api in make_api(db_url, rate_limit="6 per minute"):
        for i in range(2):
            register_bot(api.db, name=f"r{i}", owner="o", url=f"http://127.0.0.1:{9001 + i}")
        answers = [
            api.get("/api/v1/bots"),
            api.post("/api/v1/tournaments", {"name": "t", "format": "round_robin"}, ADMIN_TOKEN),
            api.get("/api/v1/bots/999"),
            api.get("/"),
            api.get("/api/v1/bots?limit=0"),
        ]
        assert [a.status_code for a in answers] == [200, 201, 404, 200, 422]
        for answer in answers:
            assert answer.headers["X-RateLimit-Limit"] == "6"
            assert "Retry-After" not in answer.headers, answer.status_code
        codes = [api.get("/api/v1/ratings").status_code for _ in range(2)]
        assert codes == [200, 429]
        limited = api.get("/api/v1/ratings")
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
    for api in make_api(db_url, broker_url="redis://127.0.0.1:1/0"):
        not_ready = api.get("/readyz")
        assert not_ready.status_code == 503 and int(not_ready.headers["Retry-After"]) > 0
        assert "Retry-After" not in api.get("/healthz").headers


@pytest.mark.parametrize("name", ["bot", "tournament", "before"])
def test_a_page_filter_beyond_any_id_is_the_400_page_not_a_database_error(api: Api, name: str):
    for raw in ("2147483648", "99999999999999999999"):
        page = api.get(f"/matches?{name}={raw}")
        assert page.status_code == 400 and page.mimetype == "text/html"
        assert f"{name} must be at most 2147483647" in page.get_data(as_text=True)
