"""Fixtures of the API tests: apps over real databases (SQLite and PostgreSQL), real HTTP
house bots on loopback, and a small arena with history for the read tests.

Test modules take them with ``from api_fixtures import *``: a ``conftest.py`` here would
shadow the suite's root conftest, which other test modules import by name.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator

import pytest
from api_support import Api, HouseBots, make_api
from api_world import World, build_world
from sqlalchemy import create_engine, text

from arena.bots.house import start_house_bots
from arena.db.migrate import upgrade
from arena.db.session import Database
from arena.protocol.signing import generate_secret

PG_ADMIN_URL = os.environ.get(
    "ARENA_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="module")
def house() -> Iterator[HouseBots]:
    secret = generate_secret()
    plain = start_house_bots(["greedy", "random", "strong"])
    signed = start_house_bots(["balanced"], secret=secret)[0]
    yield HouseBots(plain, signed, secret)
    for bot in [*plain, signed]:
        bot.stop()


@pytest.fixture
def api(db_url: str) -> Iterator[Api]:
    """An app over a fresh database (SQLite and PostgreSQL)."""
    yield from make_api(db_url)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    """A database with history (see api_world.py), built per module and backend for read tests."""
    if request.param == "sqlite":
        path = tmp_path_factory.mktemp("world") / "world.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield build_world(f"sqlite:///{path}")
        return
    request.getfixturevalue("pg_server_url")  # skips (or fails under CI) without PostgreSQL
    name = f"arena_api_world_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    db = Database(url)
    upgrade(db)
    db.dispose()
    try:
        yield build_world(url)
    finally:
        with admin.connect() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                {"n": name},
            )
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


@pytest.fixture
def reader(world: World) -> Iterator[Api]:
    """An app over the world's database (read tests only: the world is shared)."""
    yield from make_api(world.url)


__all__ = ["api", "house", "reader", "world"]
