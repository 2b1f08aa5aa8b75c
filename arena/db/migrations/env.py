"""Alembic environment: runs migrations on the URL given by arena.db.migrate."""

from __future__ import annotations

from alembic import context
from sqlalchemy import engine_from_config, pool

from arena.db.models import Base

target_metadata = Base.metadata
#: Alembic's context exists only while Alembic runs this file; anything else importing it
#: (pytest's doctest collection of the package) gets a module that does nothing.
RUN_BY_ALEMBIC = hasattr(context, "config")


def run_migrations_offline() -> None:
    context.configure(
        url=context.config.get_main_option("sqlalchemy.url"),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    config = context.config
    connectable = config.attributes.get("connection")
    if connectable is not None:
        _run(connectable)
        return
    engine = engine_from_config(
        config.get_section(config.config_ini_section, {}),
        prefix="sqlalchemy.",
        poolclass=pool.NullPool,
    )
    with engine.connect() as connection:
        _run(connection)


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite alters tables by copying them
    )
    with context.begin_transaction():
        context.run_migrations()


if RUN_BY_ALEMBIC and context.is_offline_mode():
    run_migrations_offline()
elif RUN_BY_ALEMBIC:
    run_migrations_online()
