"""The interactive docs call the server they came from: "Try it out" in Swagger UI
(``/api/v1/docs/``) sends requests to the description's server URL resolved against the
description's own URL, so that URL must lead back to the page's origin on any host and port
(it used to be ``http://127.0.0.1:8000`` whatever the server)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, make_api
from live_api import sqlite_copy, waitress_serving

#: How the docs page tells Swagger UI where the description is.
SPEC_URL_IN_PAGE = re.compile(r'"url":\s*"([^"]+)"')


def _get(url: str) -> tuple[str, bytes]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.geturl(), response.read()


def _api_base(spec: dict[str, object], spec_url: str) -> str:
    """Where Swagger UI sends "Try it out": the first server, resolved against the spec URL
    (OpenAPI 3.1, section 4.8.5: a relative server URL is relative to the description)."""
    servers = spec["servers"]
    assert isinstance(servers, list) and servers
    return urljoin(spec_url, servers[0]["url"])


@pytest.fixture
def served(sqlite_template: Path, tmp_path: Path) -> Iterator[str]:
    """The real app under waitress on a free loopback port (not 8000)."""
    with waitress_serving(sqlite_copy(sqlite_template, tmp_path)) as url:
        yield url


def test_try_it_out_calls_the_server_the_docs_page_came_from(served: str):
    origin = urlsplit(served)
    assert origin.port != 8000
    page_url, page = _get(served + "/api/v1/docs/")
    found = SPEC_URL_IN_PAGE.search(page.decode())
    assert found, "the docs page names the description it loads"
    spec_url, body = _get(urljoin(page_url, found.group(1)))
    base = _api_base(json.loads(body), spec_url)
    assert urlsplit(base)[:2] == origin[:2] == ("http", f"127.0.0.1:{origin.port}")
    # What "Try it out" on GET /api/v1/bots requests: the server URL, then the path.
    _, listing = _get(base.rstrip("/") + "/api/v1/bots")
    assert json.loads(listing)["items"] == []


@pytest.mark.parametrize(
    "origin", ["http://arena.example.org:8123", "https://gin.example.net", "http://[::1]:9"]
)
def test_the_served_description_resolves_to_any_host_and_port(db_url: str, origin: str):
    for api in make_api(db_url):
        response = api.client.get("/api/v1/openapi.json", base_url=origin)
        assert response.status_code == 200
        base = _api_base(response.json, origin + "/api/v1/openapi.json")
        assert base == origin + "/"


def test_the_docs_page_loads_the_description_by_a_relative_url(api: Api):
    page = api.get("/api/v1/docs/").get_data(as_text=True)
    found = SPEC_URL_IN_PAGE.search(page)
    assert found and found.group(1) == "/api/v1/openapi.json"
