"""Fixtures shared by the Celery tests: a clean PostgreSQL database, the workers' environment
(each test module supplies its ``worker_env``: leases and time limits), worker subprocesses and
the executor that submits to them. Import with ``from celery_fixtures import *``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from arena_procs import Workers
from conftest import _truncate

from arena.db.session import Database
from arena.playing.executors import CeleryExecutor
from arena.settings import Settings, load_settings

__all__ = ["broker_drained", "db", "env", "executor", "pg_url", "settings", "workers"]


@pytest.fixture
def pg_url(pg_server_url: str) -> str:
    db = Database(pg_server_url)
    _truncate(db)
    db.dispose()
    return pg_server_url


@pytest.fixture
def env(worker_env: dict[str, str], pg_url: str, redis_url: str) -> dict[str, str]:
    return {**worker_env, "ARENA_DATABASE_URL": pg_url, "ARENA_BROKER_URL": redis_url}


@pytest.fixture
def settings(env: dict[str, str]) -> Settings:
    return load_settings(env)


@pytest.fixture
def db(pg_url: str) -> Iterator[Database]:
    database = Database(pg_url)
    yield database
    database.dispose()


@pytest.fixture
def workers(env: dict[str, str], tmp_path: Path) -> Iterator[Workers]:
    pool = Workers(env, tmp_path)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture
def executor(settings: Settings) -> Iterator[CeleryExecutor]:
    ex = CeleryExecutor(settings)
    yield ex
    ex.close()


def broker_drained(redis_url: str) -> bool:
    """No task waiting in the queue (any of its priority lists) and none delivered but
    unacknowledged."""
    client = redis.Redis.from_url(redis_url)
    try:
        waiting = sum(client.llen(key) for key in client.scan_iter("celery*"))
        return waiting == 0 and client.hlen("unacked") == 0
    finally:
        client.close()
