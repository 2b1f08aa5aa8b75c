"""How the pages reach the application's services: the :class:`Database` and the
:class:`~arena.settings.Settings` the app factory set.

The app factory stores one :class:`~arena.db.session.Database` per app in
``app.extensions["gin_arena"]["db"]`` and its settings in ``...["settings"]``; views ask for
them here and never build their own.
"""

from __future__ import annotations

from flask import current_app

from arena.db.session import Database
from arena.settings import Settings

__all__ = ["database", "settings"]


def database() -> Database:
    """The current app's database (KeyError if the app factory did not set one)."""
    db = current_app.extensions["gin_arena"]["db"]
    if not isinstance(db, Database):
        raise TypeError(f'app.extensions["gin_arena"]["db"] is a {type(db).__name__}')
    return db


def settings() -> Settings:
    """The current app's settings (KeyError if the app factory did not set them)."""
    value = current_app.extensions["gin_arena"]["settings"]
    if not isinstance(value, Settings):
        raise TypeError(f'app.extensions["gin_arena"]["settings"] is a {type(value).__name__}')
    return value
