"""Operations: liveness, readiness (database and broker), Prometheus metrics, the OpenAPI
description and the interactive docs served without any CDN."""

from __future__ import annotations

import re

from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, make_api
from api_world import World
from prometheus_client.parser import text_string_to_metric_families


def test_healthz(api: Api):
    response = api.get("/healthz")
    assert response.status_code == 200 and response.json == {"status": "ok"}


def test_readyz_checks_the_database(api: Api):
    body = api.get("/readyz").json
    assert body["status"] == "ready" and body["checks"]["database"]["ok"] is True
    assert "broker" not in body["checks"]


def test_readyz_checks_a_real_broker(db_url: str, redis_url: str):
    for api in make_api(db_url, broker_url=redis_url):
        body = api.get("/readyz").json
        assert body["checks"]["broker"]["ok"] is True


def test_readyz_is_503_problem_when_the_broker_is_down(db_url: str):
    for api in make_api(db_url, broker_url="redis://127.0.0.1:1/0"):
        response = api.get("/readyz")
        assert response.status_code == 503
        assert response.mimetype == "application/problem+json"
        assert response.json["checks"]["broker"]["ok"] is False
        assert response.json["checks"]["database"]["ok"] is True


def test_readyz_is_503_when_the_database_is_unreachable(tmp_path):
    url = "postgresql+psycopg://postgres@127.0.0.1:1/nowhere"
    for api in make_api(url):
        response = api.get("/readyz")
        assert response.status_code == 503
        assert "database" in response.json["detail"]
        assert "Traceback" not in response.get_data(as_text=True)


def test_metrics_report_matches_latency_faults_and_queue_depth(reader: Api, world: World):
    response = reader.get("/metrics")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    families = {f.name: f for f in text_string_to_metric_families(response.get_data(as_text=True))}
    matches = {s.labels["status"]: s.value for s in families["gin_arena_matches"].samples}
    assert matches["finished"] == 5 and matches["pending"] == 2
    assert families["gin_arena_queue_depth"].samples[0].value == 2
    faults = {
        s.labels["bot"]: s.value
        for s in families["gin_arena_bot_faults"].samples
        if s.name.endswith("_total")
    }
    assert faults["charlie"] > 0 and faults["alpha"] == 0
    latency = families["gin_arena_bot_call_latency_ms"]
    count = next(s.value for s in latency.samples if s.name.endswith("_count"))
    assert count > 100


def test_metrics_answer_even_when_the_database_does_not():
    for api in make_api("postgresql+psycopg://postgres@127.0.0.1:1/nowhere"):
        text = api.get("/metrics").get_data(as_text=True)
        assert "gin_arena_database_up 0.0" in text


def test_openapi_json_is_served_with_an_etag(api: Api):
    response = api.get("/api/v1/openapi.json")
    assert response.status_code == 200
    spec = response.json
    assert spec["openapi"].startswith("3.1") and "/api/v1/bots" in spec["paths"]
    again = api.client.get(
        "/api/v1/openapi.json", headers={"If-None-Match": response.headers["ETag"]}
    )
    assert again.status_code == 304


def test_docs_are_served_from_the_package_without_a_cdn(api: Api):
    page = api.get("/api/v1/docs/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    html = page.get_data(as_text=True)
    assert "/api/v1/openapi.json" in html
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources and all(s.startswith("/api/v1/docs/") for s in sources), sources
    for asset in sources:
        with api.get(asset) as response:  # a file response: close it
            assert response.status_code == 200, asset
            assert len(response.data) > 100


def test_api_index_links(api: Api):
    assert api.get("/api/v1").json["openapi"] == "/api/v1/openapi.json"
