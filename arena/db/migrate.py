"""Schema migrations (Alembic, shipped inside the package): ``gin-arena db upgrade``."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from arena.db.session import Database

__all__ = ["alembic_config", "current_revision", "head_revision", "schema_problem", "upgrade"]

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic configuration for a database URL (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    return config


def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema up to ``revision`` (default: the newest)."""
    config = alembic_config(db.url)
    sqlite = db.engine.dialect.name == "sqlite"
    with db.engine.connect() as connection:
        if sqlite:
            # SQLite alters a table by copying it and dropping the old one, and a drop with
            # foreign keys enforced would cascade to every row referring to it (results,
            # games, deals). The pragma only takes effect outside a transaction.
            connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
            connection.commit()
        try:
            with connection.begin():
                config.attributes["connection"] = connection
                command.upgrade(config, revision)
        finally:
            if sqlite:
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")
                connection.commit()


def current_revision(db: Database) -> str | None:
    """The schema's revision, or None for an empty database."""
    with db.engine.connect() as connection:
        if not inspect(connection).has_table("alembic_version"):
            return None
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    """The newest revision this version of gin-arena ships."""
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head is not None, "the packaged migrations have no head"
    return head


def schema_problem(db: Database) -> str | None:
    """Why this database cannot be used as it is (no schema, an older one), or None."""
    current, head = current_revision(db), head_revision()
    if current is None:
        return "has no gin-arena schema yet: run `gin-arena db upgrade`"
    if current != head:
        return (
            f"has schema revision {current}, this version of gin-arena needs {head}:"
            " run `gin-arena db upgrade`"
        )
    return None
