"""Lookups of what a user typed on the command line: bots given by name or by id.

>>> from arena.db.migrate import upgrade
>>> from arena.services.bots import register_bot
>>> db = Database("sqlite://")
>>> upgrade(db)
>>> seven = register_bot(db, name="7", owner="o", url="http://127.0.0.1:9").bot_id
>>> ann = register_bot(db, name="ann", owner="o", url="http://127.0.0.1:9").bot_id
>>> bot_ids(db, ["ann", "7", str(ann)]) == [ann, seven, ann]
True
>>> bot_ids(db, ["zed"])
Traceback (most recent call last):
...
arena.errors.NotFoundError: no bot zed
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from arena.db.models import BotRow
from arena.db.session import Database
from arena.errors import NotFoundError

__all__ = ["bot_ids"]


def bot_ids(db: Database, names: Sequence[str]) -> list[int]:
    """The id of each bot named, in order: a name is looked up first (a bot may be named
    ``7``), then a number as an id; :class:`NotFoundError` ("bot", name) if neither is one."""
    out = []
    with db.session() as session:
        for name in names:
            bot_id = session.scalar(select(BotRow.id).where(BotRow.name == name))
            if bot_id is None and name.isdigit():
                bot_id = session.scalar(select(BotRow.id).where(BotRow.id == int(name)))
            if bot_id is None:
                raise NotFoundError("bot", name)
            out.append(bot_id)
    return out
