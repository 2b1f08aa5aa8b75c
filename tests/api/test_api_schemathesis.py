"""Schemathesis against the live app, from the served description: no 5xx for any generated
request, and every answer (status, content type, headers, body) conforms to the spec.

Each operation is tried anonymously and with the organiser's token (so the organiser's writes
are exercised too), with valid input and, as the organiser, with input that breaks the
schema (which must be a 4xx problem, never a 5xx), on a database with history. The number of
examples is kept modest so the run takes seconds.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
import yaml
from api_support import make_api
from api_world import ADMIN_TOKEN, build_world
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode, checks

CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_headers_conformance,
    checks.response_schema_conformance,
]


@pytest.fixture(scope="module")
def live_schema(
    sqlite_template: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[schemathesis.BaseSchema]:
    path = tmp_path_factory.mktemp("schemathesis") / "arena.db"
    shutil.copy(sqlite_template, path)
    world = build_world(f"sqlite:///{path}")
    for api in make_api(world.url, rate_limit=""):
        yield schemathesis.openapi.from_wsgi("/api/v1/openapi.json", api.app)


SETTINGS = settings(
    max_examples=12,
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
    pytest.param(method.upper(), path, token, mode, id=f"{who}-{method.upper()} {path}")
    for path, item in SPEC["paths"].items()
    for method in item
    if method in ("get", "post", "patch", "put", "delete")
    for who, token, mode in [
        ("anonymous", None, POSITIVE),
        ("organiser", ADMIN_TOKEN, POSITIVE),
        ("organiser-invalid-input", ADMIN_TOKEN, NEGATIVE),
    ]
    if mode is POSITIVE or _has_input(path, method)
    # Live streams never end on their own: tests/live follows them over real HTTP.
    if not item[method].get("x-streaming")
]


# (Not schemathesis' own pytest plugin: its parametrize does not run under pytest 9.)
@pytest.mark.parametrize(("method", "path", "token", "mode"), CASES)
def test_operation_conforms_to_the_spec(
    live_schema: schemathesis.BaseSchema,
    method: str,
    path: str,
    token: str | None,
    mode: GenerationMode,
):
    operation = live_schema[path][method]
    # The WSGI transport does not decompress: ask for plain bodies (gzip is tested elsewhere).
    headers = {"Accept-Encoding": "identity"}
    if token:
        headers["Authorization"] = f"Bearer {token}"

    @given(case=operation.as_strategy(mode))
    @SETTINGS
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=headers, checks=CHECKS)

    run()
