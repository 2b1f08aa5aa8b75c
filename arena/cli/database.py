"""The settings and the database as commands meet them, and ``gin-arena db upgrade``.

Every command reads its settings with :func:`settings_from_environment` (a bad ``ARENA_*``
value or an unsupported database URL is one line). Commands that only read or repair stored
data open :func:`existing_database`, which never creates one by accident; those that write
(registering, creating tournaments, the embedded ``serve``) open :func:`created_database`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from arena.cli.options import UsageError
from arena.settings import Settings, SettingsError, load_settings

if TYPE_CHECKING:
    from arena.cli.options import Subcommands
    from arena.db.session import Database

__all__ = ["created_database", "existing_database", "register", "settings_from_environment"]


def settings_from_environment() -> Settings:
    """The settings from ``ARENA_*`` variables, the database URL one gin-arena runs on."""
    from arena.db.urls import DatabaseUrlError, check_database_url

    try:
        settings = load_settings(None)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    try:
        check_database_url(settings.database_url)
    except DatabaseUrlError as exc:
        raise UsageError(f"ARENA_DATABASE_URL {exc}") from None
    return settings


def _database(settings: Settings) -> Database:
    from arena.db.session import Database

    return Database(settings.database_url)


def created_database(settings: Settings) -> Database:
    """The configured database, created or migrated to the current schema first."""
    from arena.db.migrate import upgrade

    db = _database(settings)
    upgrade(db)
    return db


def existing_database(settings: Settings) -> Database:
    """The configured database, which must exist and have the current schema (commands that
    only read or repair stored data: they never create a database by accident)."""
    from arena.db.migrate import schema_problem
    from arena.db.urls import shown_url, sqlite_file

    path = sqlite_file(settings.database_url)
    if path is not None and not path.exists():
        raise UsageError(
            f"no database at {path.resolve()}: run `gin-arena db upgrade` to create one,"
            " or set ARENA_DATABASE_URL, or run from the directory holding arena.db"
        )
    db = _database(settings)
    problem = schema_problem(db)
    if problem is not None:
        db.dispose()
        raise UsageError(f"database {shown_url(settings.database_url)} {problem}")
    return db


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Create or migrate the schema to the newest revision."""
    from arena.db.migrate import current_revision, upgrade
    from arena.db.urls import shown_url

    settings = settings_from_environment()
    db = _database(settings)
    before = current_revision(db)
    upgrade(db)
    after = current_revision(db)
    where = shown_url(settings.database_url)
    print(f"database {where}: schema {before or 'empty'} -> {after}")
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena db upgrade``."""
    dbp = sub.add_parser("db", help="database schema").add_subparsers(
        dest="db_command", required=True, metavar="DB_COMMAND"
    )
    p = dbp.add_parser("upgrade", help="create or migrate the schema (ARENA_DATABASE_URL)")
    p.set_defaults(func=cmd_db_upgrade)
