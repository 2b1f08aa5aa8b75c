"""The contract: ``api_spec/openapi.yaml`` is valid OpenAPI 3.1, documents exactly the routes
the app serves, and its request schemas agree with the msgspec models that validate bodies."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest
import schemathesis
import yaml
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api

from arena.api import models
from arena.api.spec import load_spec

SPEC_PATH = Path(__file__).resolve().parents[2] / "api_spec" / "openapi.yaml"
SPEC: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
MODELS = {
    "BotCreate": models.BotCreate,
    "BotUpdate": models.BotUpdate,
    "RulesSpec": models.RulesSpec,
    "TournamentCreate": models.TournamentCreate,
    "ChallengeCreate": models.ChallengeCreate,
    "WebhookCreate": models.WebhookCreate,
    "TestCreate": models.TestCreate,
}
#: The request body schema of each write, by (method, path).
BODIES = {
    ("post", "/api/v1/bots"): "BotCreate",
    ("patch", "/api/v1/bots/{bot_id}"): "BotUpdate",
    ("post", "/api/v1/tournaments"): "TournamentCreate",
    ("post", "/api/v1/challenges"): "ChallengeCreate",
    ("post", "/api/v1/bots/{bot_id}/webhooks"): "WebhookCreate",
    ("post", "/api/v1/tests"): "TestCreate",
}


def test_the_served_spec_is_the_yaml():
    assert load_spec() == SPEC


def test_the_packaged_spec_is_the_yaml():
    """``arena/api/openapi.yaml`` is what an installed package serves (the source checkout's
    ``api_spec/`` is not there): it must be the same description, byte for byte."""
    packaged = Path(models.__file__).resolve().parent / "openapi.yaml"
    assert packaged.read_bytes() == SPEC_PATH.read_bytes()


def test_the_server_is_relative_so_the_docs_call_the_server_they_came_from():
    assert SPEC["servers"] == [{"url": "/", "description": SPEC["servers"][0]["description"]}]


def test_the_spec_is_valid_openapi_31():
    schema = schemathesis.openapi.from_dict(SPEC)
    operations = [op.ok() for op in schema.get_all_operations()]
    assert len(operations) == 49
    for component in SPEC["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(component)


def _flask_path(rule: str) -> str:
    return re.sub(r"<(?:[^:>]+:)?(\w+)>", r"{\1}", rule).rstrip("/") or "/"


def test_every_route_is_documented_and_every_documented_route_exists(api: Api):
    served = set()
    for rule in api.app.url_map.iter_rules():
        path = _flask_path(rule.rule)
        if not path.startswith(("/api/", "/healthz", "/readyz", "/metrics")):
            continue  # the web pages and static assets
        if path.startswith("/api/v1/docs") and path != "/api/v1/docs":
            continue  # Swagger UI's own assets
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            served.add((method.lower(), path))
    documented = {
        (method, path.rstrip("/") or "/")
        for path, item in SPEC["paths"].items()
        for method in item
        if method in ("get", "post", "patch", "put", "delete")
    }
    assert served == documented


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    return defs[ref.rsplit("/", 1)[1]]


def _shape(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """What a request schema accepts, in a form both sides can be compared in."""
    schema = _resolve(schema, defs)
    if "anyOf" in schema:
        return sorted((_shape(s, defs) for s in schema["anyOf"]), key=repr)
    keys = ("type", "enum", "minimum", "maximum", "minLength", "maxLength", "pattern",
            "minItems", "maxItems", "additionalProperties")  # fmt: skip
    out: dict[str, Any] = {k: schema[k] for k in keys if k in schema}
    if "enum" in out:
        out["enum"] = sorted(out["enum"], key=repr)
        out.pop("type", None)
    if "properties" in schema:
        out["properties"] = {k: _shape(v, defs) for k, v in schema["properties"].items()}
        out["required"] = sorted(schema.get("required", []))
    if "items" in schema:
        out["items"] = _shape(schema["items"], defs)
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_request_models_and_spec_agree(name: str):
    (generated,), components = msgspec.json.schema_components([MODELS[name]])
    model_shape = _shape(generated, components)
    spec_shape = _shape(SPEC["components"]["schemas"][name], SPEC["components"]["schemas"])
    assert model_shape == spec_shape


@pytest.mark.parametrize("operation", sorted(BODIES))
def test_each_write_takes_its_model(operation: tuple[str, str]):
    method, path = operation
    body = SPEC["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    assert body == {"$ref": f"#/components/schemas/{BODIES[operation]}"}


@pytest.mark.parametrize("operation", sorted(BODIES))
def test_request_examples_decode_with_the_models(operation: tuple[str, str]):
    method, path = operation
    content = SPEC["paths"][path][method]["requestBody"]["content"]["application/json"]
    model = MODELS[BODIES[operation]]
    for example in content["examples"].values():
        msgspec.convert(example["value"], model)
