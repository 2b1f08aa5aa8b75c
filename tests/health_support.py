"""What the health tests share (``tests/`` is on ``sys.path``): settings, bots registered over
real loopback servers, a clock the tests move by hand, and two hand-written bots.

:class:`HeldBot` answers nothing until the test releases it (a bot that hangs); every
connection it accepts is counted, so it also shows that nothing reached a bot.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from loopback import HttpMessage, LoopbackServer
from sqlalchemy import select

from arena.db.models import BotRow, EventRow, HealthProbeRow
from arena.db.session import Database
from arena.services.bots import register_bot
from arena.settings import Settings, load_settings

__all__ = [
    "T0",
    "HeldBot",
    "bot_row",
    "events_of",
    "health_settings",
    "probes_of",
    "register",
    "tick",
    "wait_until",
]

#: The tests' clock starts here (a sweep is always given ``now``: no wall clock).
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def tick(n: int, settings: Settings) -> datetime:
    """The time of the ``n``-th sweep from :data:`T0`, one interval apart."""
    return T0 + timedelta(seconds=n * settings.health_interval_seconds)


def health_settings(db: Database, **changes: Any) -> Settings:
    """Loopback bots allowed (they are on 127.0.0.1), a generous probe timeout."""
    base: dict[str, Any] = {
        "database_url": db.url,
        "allow_loopback": True,
        "health_timeout_seconds": 10.0,
    }
    return load_settings({}, **{**base, **changes})


def register(db: Database, name: str, url: str, secret: str | None = None) -> int:
    """A bot stored without a check (the check is not what these tests are about)."""
    return register_bot(db, name=name, owner=f"{name}@example.org", url=url, secret=secret).bot_id


def bot_row(db: Database, bot_id: int) -> BotRow:
    with db.session() as session:
        row = session.get_one(BotRow, bot_id)
        session.expunge(row)
        return row


def probes_of(db: Database, bot_id: int) -> list[HealthProbeRow]:
    """The bot's probes, oldest first."""
    with db.session() as session:
        rows = list(
            session.scalars(
                select(HealthProbeRow)
                .where(HealthProbeRow.bot_id == bot_id)
                .order_by(HealthProbeRow.id)
            )
        )
        session.expunge_all()
        return rows


def events_of(db: Database, bot_id: int, *types: str) -> list[EventRow]:
    """The outbox's events about the bot (of ``types``, if given), oldest first."""
    with db.session() as session:
        query = select(EventRow).where(EventRow.bot_id == bot_id)
        if types:
            query = query.where(EventRow.type.in_(types))
        rows = list(session.scalars(query.order_by(EventRow.id)))
        session.expunge_all()
        return rows


def wait_until(predicate: Callable[[], Any], *, timeout: float, what: str) -> Any:
    """Poll until ``predicate()`` is truthy; fail naming ``what`` after ``timeout`` seconds (a
    generous bound, never what a test measures)."""
    deadline = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.02)
    return value


class HeldBot(LoopbackServer):
    """Accepts connections, reads each request and answers nothing until :attr:`release` is
    set; then it closes the connection (the probe fails)."""

    def __init__(self) -> None:
        super().__init__("held-bot")
        self.release = threading.Event()
        #: Set once a request has arrived.
        self.asked = threading.Event()

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        self.asked.set()
        self.release.wait(timeout=120)
        return False
