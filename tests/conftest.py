"""Shared fixtures: real databases (SQLite and PostgreSQL) and Redis, never mocks.

PostgreSQL (127.0.0.1:5432, trust auth) and Redis (127.0.0.1:6379) are expected to run; the
test command starts them when they are installed but down. On a machine without them the tests
that need them skip with one loud line; under ``CI=true`` a missing service fails instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, settings
from sqlalchemy import create_engine, text

from arena.db.migrate import upgrade
from arena.db.models import Base
from arena.db.session import Database

# No hypothesis deadlines: the machines are shared and noisy, and speed is measured by the
# benchmarks, never by a test's clock. Profiles of stricter suites still apply per test.
settings.register_profile(
    "arena", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "arena"))

PG_ADMIN_URL = os.environ.get(
    "ARENA_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def _worker_redis_db() -> int:
    """Redis database 15 for a plain run; under pytest-xdist (``make test`` runs two workers)
    15 for ``gw0``, 14 for ``gw1``, ...: each worker flushes and fills its own database, so
    the Celery tests of two workers never share a queue."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    return 15 - index % 15


REDIS_URL = os.environ.get("ARENA_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{_worker_redis_db()}")
IN_CI = os.environ.get("CI", "").lower() == "true"


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip (or, under CI=true, fail) when a service is not reachable."""
    if _port_open(host, port):
        return
    message = f"{name} is not reachable at {host}:{port}"
    if IN_CI:
        pytest.fail(f"{message}; CI=true requires it (the test command starts it)")
    print(f"\n!!! SKIPPING {name} TESTS: {message} !!!")
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """A PostgreSQL database of this test session, migrated, dropped at the end."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    name = f"arena_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    db = Database(url)
    upgrade(db)
    db.dispose()
    yield url
    with admin.connect() as conn:
        conn.execute(
            text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
            {"n": name},
        )
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
    admin.dispose()


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file, copied for each test (migrating once is the slow part)."""
    path = tmp_path_factory.mktemp("template") / "template.db"
    db = Database(f"sqlite:///{path}")
    upgrade(db)
    db.dispose()
    return path


def _truncate(db: Database) -> None:
    """Empty every table and restart the ids (DELETE: TRUNCATE costs ~0.3 s a test here)."""
    with db.engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):
            conn.execute(text(f'DELETE FROM "{table.name}"'))
            if "id" in table.columns:
                conn.execute(
                    text("SELECT setval(pg_get_serial_sequence(:t, 'id'), 1, false)"),
                    {"t": table.name},
                )


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated database URL, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        path = tmp_path / "arena.db"
        shutil.copy(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    url = request.getfixturevalue("pg_server_url")
    db = Database(url)
    _truncate(db)
    db.dispose()
    yield url


@pytest.fixture
def db(db_url: str) -> Iterator[Database]:
    """A :class:`Database` on a fresh schema (SQLite and PostgreSQL)."""
    database = Database(db_url)
    yield database
    database.dispose()


@pytest.fixture
def redis_url() -> str:
    """A Redis database for this test, flushed first (db 15, or this xdist worker's: never the
    default db 0)."""
    require_service("Redis", "127.0.0.1", 6379)
    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    return REDIS_URL
