"""Database connections: one :class:`Database` per process, SQLite or PostgreSQL, and its pool.

SQLite is the embedded default and must stay safe with several worker processes writing:
write-ahead logging (readers never block the writer), a busy timeout (a writer waits for the
lock instead of failing), foreign keys on, and short transactions that take the write lock with
their first statement. PostgreSQL comes through ``ARENA_DATABASE_URL``.

The pool: a process that plays matches (a ``gin-arena worker``, a local executor's worker
process) opens :meth:`Database.for_settings`, whose pool holds at most ``ARENA_DB_POOL_SIZE``
connections or, by default on PostgreSQL, :func:`pool_size_for` its concurrency (each match's
thread may hold one, its lease keeper one, and the periodic jobs fan out);
connections open as needed, :func:`kept_open` of them kept while idle; :func:`connection_room`
says how many more the server would accept. Any other process (the API, a command) keeps 10
connections and 20 overflow; SQLite keeps SQLAlchemy's pool. A thread finding the pool dry
waits ``ARENA_DB_POOL_TIMEOUT_SECONDS``, then gets a transient error
(:data:`arena.db.errors.DatabaseUnavailableError`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.orm import Session, sessionmaker

from arena.settings import Settings

__all__ = ["Database", "connection_room", "kept_open", "pool_size_for", "worker_pool_size"]

SQLITE_BUSY_TIMEOUT_MS = 30_000
#: The PostgreSQL pool of a process whose concurrency is not known (the API, commands).
DEFAULT_POOL_SIZE = 10
DEFAULT_MAX_OVERFLOW = 20
#: The connection of a match-playing process's lease keeper (:mod:`arena.playing.leases`: one
#: thread renews every lease the process holds).
LEASE_CONNECTIONS = 1
#: Connections a match-playing process may need beside its matches': a periodic job it runs
#: fans out to threads of its own that each record (the health sweep's 16 probes,
#: :data:`arena.services.health.PROBE_THREADS`, and the webhook sender's 8,
#: :data:`arena.services.webhooks.SENDING_THREADS`).
PERIODIC_CONNECTIONS = 24


def pool_size_for(concurrency: int) -> int:
    """Connections a process playing ``concurrency`` matches at once may hold at one moment:
    one for each match's own thread (claim, record), :data:`LEASE_CONNECTIONS` for the lease
    keeper and :data:`PERIODIC_CONNECTIONS`.

    >>> pool_size_for(16), pool_size_for(200)
    (41, 225)
    """
    return concurrency + LEASE_CONNECTIONS + PERIODIC_CONNECTIONS


def kept_open(pool_size: int) -> int:
    """Of a pool of ``pool_size`` connections, how many stay open while idle: half (a process
    rarely has every match between deals at once; the rest are closed when given back), at
    least 10 (the default pool's), at most all of them.

    >>> kept_open(225), kept_open(41), kept_open(12), kept_open(1)
    (112, 20, 10, 1)
    """
    return min(pool_size, max(DEFAULT_POOL_SIZE, pool_size // 2))


def worker_pool_size(settings: Settings, concurrency: int) -> int | None:
    """The pool of a process playing ``concurrency`` matches at once: ``ARENA_DB_POOL_SIZE``
    if set, else on PostgreSQL :func:`pool_size_for` the concurrency; None (SQLite's default
    pool) otherwise.

    >>> from arena.settings import load_settings
    >>> pg = "postgresql+psycopg://db/arena"
    >>> worker_pool_size(load_settings({"ARENA_DATABASE_URL": pg}), 200)
    225
    >>> worker_pool_size(load_settings({"ARENA_DATABASE_URL": pg, "ARENA_DB_POOL_SIZE": "90"}), 200)
    90
    >>> worker_pool_size(load_settings({}), 200) is None
    True
    """
    if settings.db_pool_size:
        return settings.db_pool_size
    if settings.database_url.startswith("sqlite"):
        return None
    return pool_size_for(concurrency)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _in_memory(url: str) -> bool:
    """A SQLite database in memory (one connection per thread: no pool to size)."""
    parsed = make_url(url)
    return parsed.database in (None, "", ":memory:") or parsed.query.get("mode") == "memory"


class Database:
    """An engine and a session factory. ``session()`` is a unit of work: commit or roll back.

    ``pool_size`` caps the connections this process holds, opened as needed; the first
    :func:`kept_open` of them stay open between uses, the others are closed when given back;
    None keeps the default pool (PostgreSQL: 10 and 20 overflow; SQLite:
    SQLAlchemy's). ``pool_timeout`` is how long a thread waits for a connection when all are
    busy (None: SQLAlchemy's 30 s). An in-memory SQLite database has no pool to size.
    """

    def __init__(
        self,
        url: str,
        *,
        echo: bool = False,
        pool_size: int | None = None,
        pool_timeout: float | None = None,
    ) -> None:
        self.url = url
        kwargs: dict[str, Any] = {"echo": echo, "future": True}
        sqlite = url.startswith("sqlite")
        if sqlite:
            kwargs["connect_args"] = {
                "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000,
                "check_same_thread": False,
            }
        else:
            kwargs.update(pool_pre_ping=True, pool_size=DEFAULT_POOL_SIZE)
            kwargs["max_overflow"] = DEFAULT_MAX_OVERFLOW
        if not (sqlite and _in_memory(url)):
            if pool_size is not None:
                kept = kept_open(pool_size)
                kwargs.update(pool_size=kept, max_overflow=pool_size - kept)
            if pool_timeout is not None:
                kwargs["pool_timeout"] = pool_timeout
        self.engine: Engine = create_engine(url, **kwargs)
        self._pool_limit: int | None = None
        if "max_overflow" in kwargs:
            self._pool_limit = int(kwargs["pool_size"]) + int(kwargs["max_overflow"])
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @classmethod
    def for_settings(cls, settings: Settings, *, concurrency: int) -> Database:
        """The database of a process playing ``concurrency`` matches at once: its pool holds
        :func:`worker_pool_size` connections, and a thread waits
        ``ARENA_DB_POOL_TIMEOUT_SECONDS`` for one."""
        return cls(
            settings.database_url,
            pool_size=worker_pool_size(settings, concurrency),
            pool_timeout=settings.db_pool_timeout_seconds,
        )

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @property
    def pool_limit(self) -> int | None:
        """The most connections this process's pool opens at once: ``pool_size`` if one was
        given, 30 (10 and 20 overflow) on PostgreSQL, None otherwise (SQLAlchemy's own pool)."""
        return self._pool_limit

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session in a transaction, committed on success and rolled back on any error."""
        with self._sessions() as session, session.begin():
            yield session

    def dispose(self) -> None:
        """Close every pooled connection (after a fork, or at shutdown)."""
        self.engine.dispose()


def connection_room(db: Database) -> int | None:
    """How many more connections the PostgreSQL server would accept now (``max_connections``
    less ``superuser_reserved_connections`` and the connections open, this one included);
    None on SQLite, which has no such limit."""
    if db.dialect != "postgresql":
        return None
    with db.engine.connect() as conn:
        most = int(conn.execute(text("SHOW max_connections")).scalar_one())
        reserved = int(conn.execute(text("SHOW superuser_reserved_connections")).scalar_one())
        used = int(
            conn.execute(
                text("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")
            ).scalar_one()
        )
    return most - reserved - used
