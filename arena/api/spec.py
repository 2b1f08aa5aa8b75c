"""The OpenAPI description (``api_spec/openapi.yaml``, the source of truth) and the
interactive docs, served from packages (no CDN).

* ``GET /api/v1/openapi.json``: the description as JSON (with an ETag);
* ``GET /api/v1/docs/``: Swagger UI from the ``flask-swagger-ui`` package, reading the above.

The yaml is found next to the package in a source checkout (``api_spec/openapi.yaml``) or,
in an installed package, as ``arena/api/openapi.yaml`` (in the repository a symlink to the
former, which building a wheel turns into a copy).

Its one server is ``/``: relative, so "Try it out" in the docs calls the server the page came
from, on whatever host and port it runs (OpenAPI 3.1 resolves a relative server URL against
the description's own URL).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped, unused-ignore]
from flask import Blueprint, Flask, Response
from flask_swagger_ui import get_swaggerui_blueprint  # type: ignore[import-untyped]

from arena.api.http import cached, json_response
from arena.api.problems import ProblemError

__all__ = ["SPEC_PATHS", "load_spec", "register_docs"]

SPEC_PATHS = (
    Path(__file__).resolve().parents[2] / "api_spec" / "openapi.yaml",
    Path(__file__).resolve().parent / "openapi.yaml",
)
DOCS_URL = "/api/v1/docs"
SPEC_URL = "/api/v1/openapi.json"


@cache
def load_spec() -> dict[str, Any]:
    """The OpenAPI description as a dict (FileNotFoundError if it was not installed)."""
    for path in SPEC_PATHS:
        if path.is_file():
            spec: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
            return spec
    raise FileNotFoundError(f"no OpenAPI description at {' or '.join(map(str, SPEC_PATHS))}")


@cache
def _spec_body() -> tuple[bytes, str]:
    body = json.dumps(load_spec(), separators=(",", ":")).encode()
    return body, hashlib.sha256(body).hexdigest()[:32]


bp = Blueprint("spec", __name__)


@bp.get(SPEC_URL)
def openapi_json() -> Response:
    try:
        body, etag = _spec_body()
    except FileNotFoundError:
        raise ProblemError(
            404, "the OpenAPI description is not installed with this package", kind="no-spec"
        ) from None
    return cached(body, etag, immutable=False)


@bp.get("/api/v1")
@bp.get("/api/v1/")
def api_index() -> Response:
    return json_response({"openapi": SPEC_URL, "docs": DOCS_URL + "/", "version": "v1"})


def register_docs(app: Flask) -> None:
    """Mount the description and Swagger UI on ``app``."""
    app.register_blueprint(bp)
    docs: Blueprint = get_swaggerui_blueprint(
        DOCS_URL, SPEC_URL, config={"app_name": "gin-arena API", "deepLinking": True}
    )
    app.register_blueprint(docs)
