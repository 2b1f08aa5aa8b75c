"""Helpers of the API tests: apps over real databases and a client that speaks bearer tokens.

Kept in a plain module (not the conftest) so test modules can import them by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from api_world import ADMIN_TOKEN
from flask import Flask
from flask.testing import FlaskClient

from arena.api import close_app, create_app
from arena.bots.sdk import BotServer
from arena.db.session import Database
from arena.settings import Settings


@dataclass
class HouseBots:
    """Real HTTP bots on loopback: three plain ones and one that requires signatures."""

    plain: list[BotServer]
    signed: BotServer
    secret: str

    @property
    def urls(self) -> list[str]:
        return [b.url for b in self.plain]


def settings_for(url: str, **changes: Any) -> Settings:
    """Test settings: loopback bots allowed, the organiser token set, no rate limits."""
    base = {
        "database_url": url,
        "allow_loopback": True,
        "admin_token": ADMIN_TOKEN,
        "rate_limit": "",
    }
    return Settings(**{**base, **changes})


class Submitted(list[int]):
    """The API tests' executor: it keeps the ids it is handed, in order, and plays nothing."""

    def submit(self, match_ids: Iterable[int]) -> None:
        self.extend(match_ids)

    def close(self) -> None:
        pass


@dataclass
class Api:
    """An app over a database, its test client and what it submitted to the executor."""

    app: Flask
    client: FlaskClient
    db: Database
    enqueued: list[int] = field(default_factory=list)

    def headers(self, token: str | None) -> dict[str, str]:
        return {} if token is None else {"Authorization": f"Bearer {token}"}

    def get(self, path: str, token: str | None = None, **kw: Any) -> Any:
        return self.client.get(path, headers=self.headers(token), **kw)

    def post(self, path: str, body: Any = None, token: str | None = None, **kw: Any) -> Any:
        if body is None:
            return self.client.post(path, headers=self.headers(token), **kw)
        return self.client.post(path, json=body, headers=self.headers(token), **kw)

    def patch(self, path: str, body: Any, token: str | None = None) -> Any:
        return self.client.patch(path, json=body, headers=self.headers(token))


def make_api(url: str, **changes: Any) -> Iterator[Api]:
    """An app over ``url`` for the duration of a ``for api in make_api(...)`` loop."""
    enqueued = Submitted()
    db = Database(url)
    app = create_app(settings_for(url, **changes), db=db, executor=enqueued)
    app.config["TESTING"] = True
    try:
        yield Api(app, app.test_client(), db, enqueued)
    finally:
        close_app(app)
        db.dispose()
