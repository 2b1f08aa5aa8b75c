"""One not-found: a resource that does not exist is the same 404 problem on every route, named
by its kind and id, whether a query or a service found it missing (arena.errors.NotFoundError,
mapped once in arena.api.problems)."""

from __future__ import annotations

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api
from api_world import ADMIN_TOKEN

from arena.errors import NotFoundError
from arena.reading.queries import bots as bot_queries

PROBLEM = "application/problem+json"
MISSING = 4242

#: (method, path, token, body, resource): every route that names a resource by id.
ROUTES = [
    ("GET", "/api/v1/bots/{id}", None, None, "bot"),
    ("PATCH", "/api/v1/bots/{id}", None, {"name": "renamed"}, "bot"),
    ("POST", "/api/v1/bots/{id}/token", None, None, "bot"),
    ("POST", "/api/v1/bots/{id}/secret", None, None, "bot"),
    ("DELETE", "/api/v1/bots/{id}/secret/previous", None, None, "bot"),
    ("POST", "/api/v1/bots/{id}/deactivate", ADMIN_TOKEN, None, "bot"),
    ("POST", "/api/v1/bots/{id}/activate", ADMIN_TOKEN, None, "bot"),
    ("POST", "/api/v1/bots/{id}/check", ADMIN_TOKEN, None, "bot"),
    ("GET", "/api/v1/ratings/{id}/history", None, None, "bot"),
    ("GET", "/api/v1/matches/{id}", None, None, "match"),
    ("GET", "/api/v1/matches/{id}/replay", None, None, "match"),
    ("GET", "/api/v1/tournaments/{id}", None, None, "tournament"),
    ("GET", "/api/v1/tournaments/{id}/bracket", None, None, "tournament"),
    ("GET", "/api/v1/tournaments/{id}/standings", None, None, "tournament"),
    ("POST", "/api/v1/tournaments/{id}/start", ADMIN_TOKEN, None, "tournament"),
    ("POST", "/api/v1/tournaments/{id}/cancel", ADMIN_TOKEN, None, "tournament"),
]


def not_found_problem(path: str, resource: str, key: object) -> dict[str, object]:
    return {
        "type": "/api/v1/problems/not-found",
        "title": "Not Found",
        "status": 404,
        "detail": f"{resource} {key} does not exist",
        "instance": path,
    }


def test_every_missing_resource_is_the_same_404_problem_naming_it(api: Api):
    wrong = []
    for method, template, token, body, resource in ROUTES:
        path = template.format(id=MISSING)
        response = api.client.open(path, method=method, json=body, headers=api.headers(token))
        answer = (response.status_code, response.mimetype, response.headers["Cache-Control"])
        expected = not_found_problem(path, resource, MISSING)
        if answer != (404, PROBLEM, "no-store") or response.json != expected:
            wrong.append(f"{method} {path}: {answer} {response.get_data(as_text=True)}")
    assert not wrong, "\n".join(wrong)


def test_a_not_found_error_from_anywhere_is_that_404_built_from_its_resource_and_key(
    api: Api, monkeypatch: pytest.MonkeyPatch
):
    def missing(*args: object, **kwargs: object) -> None:
        raise NotFoundError("tournament", 9)

    monkeypatch.setattr(bot_queries, "ratings_board", missing)
    response = api.get("/api/v1/ratings")
    assert response.status_code == 404 and response.mimetype == PROBLEM
    assert response.json == not_found_problem("/api/v1/ratings", "tournament", 9)
