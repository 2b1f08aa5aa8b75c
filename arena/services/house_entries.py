"""The house bots' entries: the demo's bots, registered on the first run and found again by
name on every later one, each with the signing secret its server verifies requests with (a
written-side secret: the read-side queries never hand it out).

>>> from arena.db.migrate import upgrade
>>> db = Database("sqlite://")
>>> upgrade(db)
>>> first = enter_house_bots(db, ["house-a", "house-b"])
>>> enter_house_bots(db, ["house-b", "house-a"]) == first
True
>>> first["house-a"].secret.startswith("whsec_")
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from arena.db.models import BotRow
from arena.db.session import Database
from arena.services.bots import register_bot

__all__ = ["HouseEntry", "enter_house_bots"]

#: The owner contact of every house bot.
HOUSE_OWNER = "gin-arena demo"

#: Where a house bot is registered before its server has a port (the demo re-points it).
UNSERVED_URL = "http://127.0.0.1:9"


@dataclass(frozen=True, slots=True)
class HouseEntry:
    """A registered house bot: its id, and the secret its server verifies requests with."""

    bot_id: int
    secret: str


def enter_house_bots(db: Database, names: Sequence[str]) -> dict[str, HouseEntry]:
    """Register the house bots ``names`` not yet registered; every name's entry."""
    with db.session() as session:
        entries = {
            bot.name: HouseEntry(bot.id, bot.secret)
            for bot in session.scalars(select(BotRow).where(BotRow.name.in_(names)))
        }
    for name in names:
        if name not in entries:
            registered = register_bot(db, name=name, owner=HOUSE_OWNER, url=UNSERVED_URL)
            entries[name] = HouseEntry(registered.bot_id, registered.secret)
    return entries
