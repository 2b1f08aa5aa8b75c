"""A database migrated only to an older revision, on SQLite or a PostgreSQL database of its own:
what the tests of one migration fill with old rows before upgrading."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conftest import PG_ADMIN_URL, require_service
from sqlalchemy import create_engine, text

from arena.db.migrate import upgrade
from arena.db.session import Database


@contextmanager
def database_at(revision: str, backend: str, tmp_path: Path) -> Iterator[Database]:
    """A fresh database of ``backend`` (``sqlite`` or ``postgresql``) at ``revision``; a
    PostgreSQL one is dropped afterwards."""
    if backend == "sqlite":
        db = Database(f"sqlite:///{tmp_path / 'old.db'}")
        upgrade(db, revision)
        yield db
        db.dispose()
        return
    require_service("PostgreSQL", "127.0.0.1", 5432)
    name = f"arena_{revision}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        db = Database(PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name)
        upgrade(db, revision)
        yield db
        db.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
