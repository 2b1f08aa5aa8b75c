"""Database URLs: which ones gin-arena runs on, how one is shown, where a SQLite one's file is.

gin-arena runs on SQLite (the embedded default) and on PostgreSQL through psycopg; any other URL
is refused with a :class:`DatabaseUrlError` saying what to use instead, never shown with its
password.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

__all__ = ["DATABASE_DRIVERS", "DatabaseUrlError", "check_database_url", "shown_url", "sqlite_file"]

#: The databases gin-arena runs on: SQLAlchemy backend name -> the drivers installed for it.
DATABASE_DRIVERS = {"sqlite": ("pysqlite",), "postgresql": ("psycopg",)}


class DatabaseUrlError(ValueError):
    """A URL that is not one of a database gin-arena runs on; the message says what to use."""


def check_database_url(url: str) -> None:
    """Refuse (:class:`DatabaseUrlError`) a URL that is not SQLite or PostgreSQL via psycopg.

    >>> check_database_url("mysql://arena:pw@db/arena")
    Traceback (most recent call last):
    ...
    arena.db.urls.DatabaseUrlError: mysql://arena:***@db/arena: gin-arena runs on SQLite \
(sqlite:///PATH) and PostgreSQL (postgresql+psycopg://USER:PASSWORD@HOST/DB) only
    """
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise DatabaseUrlError(
            "is not a database URL: use sqlite:///PATH or"
            " postgresql+psycopg://USER:PASSWORD@HOST/DB"
        ) from None
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if driver not in DATABASE_DRIVERS.get(backend, ()):
        raise DatabaseUrlError(
            f"{parsed.render_as_string(hide_password=True)}: gin-arena runs on SQLite"
            " (sqlite:///PATH) and PostgreSQL (postgresql+psycopg://USER:PASSWORD@HOST/DB) only"
        )


def shown_url(url: str) -> str:
    """A database URL fit to print (no password).

    >>> shown_url("postgresql+psycopg://arena:s3cret@127.0.0.1/arena")
    'postgresql+psycopg://arena:***@127.0.0.1/arena'
    """
    return make_url(url).render_as_string(hide_password=True)


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names, or None (another database, or SQLite in memory).

    >>> sqlite_file("sqlite:///arena.db") == Path("arena.db"), sqlite_file("sqlite://")
    (True, None)
    """
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)
