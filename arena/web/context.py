"""How the pages reach the application's services: the :class:`Database` the app factory set.

The app factory stores one :class:`~arena.db.session.Database` per app in
``app.extensions["gin_arena"]["db"]``; views ask for it here and never build their own.
"""

from __future__ import annotations

from flask import current_app

from arena.db.session import Database

__all__ = ["database"]


def database() -> Database:
    """The current app's database (KeyError if the app factory did not set one)."""
    db = current_app.extensions["gin_arena"]["db"]
    if not isinstance(db, Database):
        raise TypeError(f'app.extensions["gin_arena"]["db"] is a {type(db).__name__}')
    return db
