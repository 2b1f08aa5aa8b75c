"""Every error is application/problem+json with a useful detail; never a stack trace, never a
500 for bad input; an unexpected failure is logged and answered with a generic problem."""

from __future__ import annotations

import logging

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, Submitted, settings_for

from arena.api import close_app, create_app
from arena.db.session import Database
from arena.reading.queries import bots as bot_queries

PROBLEM = "application/problem+json"


def test_unknown_path_is_a_404_problem(api: Api):
    response = api.get("/api/v1/nothing-here")
    assert response.status_code == 404 and response.mimetype == PROBLEM
    body = response.json
    assert body["status"] == 404 and body["title"] == "Not Found"
    assert body["instance"] == "/api/v1/nothing-here" and body["type"].endswith("/not-found")


def test_wrong_method_is_a_405_problem_with_allow(api: Api):
    response = api.client.delete("/api/v1/bots")
    assert response.status_code == 405 and response.mimetype == PROBLEM
    assert "GET" in response.headers["Allow"] and "POST" in response.headers["Allow"]


def test_oversized_body_is_a_413_problem(api: Api):
    response = api.client.post(
        "/api/v1/bots", data=b"{" + b" " * 300_000 + b"}", content_type="application/json"
    )
    assert response.status_code == 413 and response.mimetype == PROBLEM


@pytest.mark.parametrize(
    "body",
    [b"", b"null", b"[]", b'"x"', b"1e999", b'{"name": null}', b"\xff\xfe", b'{"a": 1' * 50],
)
def test_hostile_bodies_are_4xx_problems(api: Api, body: bytes):
    for path in ("/api/v1/bots", "/api/v1/tournaments", "/api/v1/challenges"):
        response = api.client.post(
            path,
            data=body,
            content_type="application/json",
            headers={"Authorization": "Bearer organiser-secret-token"},
        )
        assert 400 <= response.status_code < 500, (path, body, response.status_code)
        assert response.mimetype == PROBLEM and response.json["detail"]


def test_an_unexpected_failure_is_a_generic_500_problem_that_is_logged(
    api: Api, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(bot_queries, "ratings_board", explode)
    with caplog.at_level(logging.ERROR, logger="arena.api.problems"):
        response = api.get("/api/v1/ratings")
    assert response.status_code == 500 and response.mimetype == PROBLEM
    text = response.get_data(as_text=True)
    assert "secret internal detail" not in text and "Traceback" not in text
    assert "RuntimeError" not in text
    assert any("secret internal detail" in r.getMessage() or r.exc_info for r in caplog.records)


def test_errors_are_never_cached(api: Api):
    assert api.get("/api/v1/bots/999").headers["Cache-Control"] == "no-store"


def test_pages_outside_the_api_get_the_web_error_page(api: Api):
    response = api.get("/no-such-page")
    assert response.status_code == 404
    assert response.mimetype == "text/html"


def test_a_database_that_cannot_answer_is_a_503_with_retry_after_not_a_500(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The pool run dry (its one connection held, a wait of 50 ms): the API says 503 with
    Retry-After and a problem type of its own, a page says the same to a browser, both log one
    warning line, and the next request after the connection is back is answered."""
    db = Database(db_url, pool_size=1, pool_timeout=0.05)
    app = create_app(settings_for(db_url), db=db, executor=Submitted())
    client = app.test_client()
    try:
        with db.engine.connect(), caplog.at_level(logging.WARNING):
            response = client.get("/api/v1/ratings")
            page = client.get("/")
        assert response.status_code == 503 and response.mimetype == PROBLEM
        assert response.headers["Retry-After"] == "5"
        assert response.json["type"] == "/api/v1/problems/database-unavailable"
        assert "QueuePool" not in response.get_data(as_text=True)
        assert page.status_code == 503 and page.mimetype == "text/html"
        assert page.headers["Retry-After"] == "5" and "Traceback" not in page.get_data(as_text=True)
        warnings = [r for r in caplog.records if "database unavailable" in r.getMessage()]
        assert len(warnings) == 2 and all(r.exc_info is None for r in warnings)
        assert all("\n" not in r.getMessage() for r in warnings)
        assert client.get("/api/v1/ratings").status_code == 200
    finally:
        close_app(app)
        db.dispose()
