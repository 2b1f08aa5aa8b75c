"""Database connections: one :class:`Database` per process, SQLite or PostgreSQL.

SQLite is the embedded default and must stay safe with several worker processes writing:
write-ahead logging (readers never block the writer), a busy timeout (a writer waits for the
lock instead of failing), foreign keys on, and short transactions that take the write lock with
their first statement. PostgreSQL comes through ``ARENA_DATABASE_URL``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["Database"]

SQLITE_BUSY_TIMEOUT_MS = 30_000


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class Database:
    """An engine and a session factory. ``session()`` is a unit of work: commit or roll back."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = url
        kwargs: dict[str, Any] = {"echo": echo, "future": True}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {
                "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
                "check_same_thread": False,
            }
        else:
            kwargs.update(pool_pre_ping=True, pool_size=10, max_overflow=20)
        self.engine: Engine = create_engine(url, **kwargs)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in a transaction, committed on success and rolled back on any error."""
        with self._sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        """Close every pooled connection (after a fork, or at shutdown)."""
        self.engine.dispose()
