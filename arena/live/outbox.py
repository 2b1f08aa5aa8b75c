"""The tournament and ladder streams: the outbox (``events``), tailed, as server-sent events.

One :class:`OutboxTail` per serving process reads the events committed since its last look,
every :data:`POLL_SECONDS` while at least one stream is open (never otherwise), keeps the
newest :data:`KEEP` in memory and wakes the streams. A stream's events are the outbox rows it
selects (:func:`tournament_events`, :func:`ladder_events`), each with its outbox id as the SSE
id, so a client reconnecting with ``Last-Event-ID`` gets what it missed, read from the table.
Besides the rows themselves, a stream sends signals after them (same id): ``bracket`` on a
tournament's stream when a result or a round changes its bracket and standings, ``standings``
on the ladder's when a ladder match's result changes a preset's standings.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from arena.db.session import Database
from arena.live.sse import PING, RETRY, sse_event
from arena.reading.queries.events import events_after, last_event_id

__all__ = [
    "KEEP",
    "POLL_SECONDS",
    "OutboxTail",
    "follow_outbox",
    "ladder_events",
    "tournament_events",
]

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1
KEEP = 2000

Event = dict[str, Any]
#: What a stream sends for one outbox event: (SSE event name, data) pairs, maybe none.
Select = Callable[[Event], list[tuple[str, Any]]]

_TOURNAMENT_BRACKET = {
    "match.finished",
    "tournament.started",
    "tournament.round_started",
    "tournament.finished",
}


def tournament_events(tournament_id: int) -> Select:
    """The events of one tournament's stream."""

    def select(event: Event) -> list[tuple[str, Any]]:
        if event["tournament_id"] != tournament_id:
            return []
        out: list[tuple[str, Any]] = [(event["type"], event["data"])]
        if event["type"] in _TOURNAMENT_BRACKET:
            signal: dict[str, Any] = {"tournament": tournament_id}
            data = event["data"]
            if isinstance(data, dict) and data.get("round") is not None:
                signal["round"] = data["round"]
            out.append(("bracket", signal))
        return out

    return select


def ladder_events(event: Event) -> list[tuple[str, Any]]:
    """The events of the ladder's stream: its matches started and finished, rating changes,
    and ``standings`` after each ladder result."""
    data = event["data"] if isinstance(event["data"], dict) else {}
    kind = event["type"]
    if kind == "rating.changed":
        return [(kind, data)]
    if kind in ("match.started", "match.finished") and data.get("ladder") is not None:
        out: list[tuple[str, Any]] = [(kind, data)]
        if kind == "match.finished":
            out.append(("standings", {"preset": data["ladder"]}))
        return out
    return []


class OutboxTail:
    """The process's one reader of the outbox (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.changed = threading.Condition()
        self._recent: deque[Event] = deque(maxlen=KEEP)
        self._last = -1
        self._streams = 0
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def last(self) -> int:
        """The newest outbox id seen."""
        with self.changed:
            return self._last

    def open(self) -> int:
        """A stream opens: start tailing if nobody was; the newest id now."""
        with self.changed:
            self._streams += 1
            if self._last < 0:
                self._last = last_event_id(self.db)
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="outbox-tail", daemon=True)
                self._thread.start()
            return self._last

    def release(self) -> None:
        with self.changed:
            self._streams -= 1

    def _run(self) -> None:
        while True:
            with self.changed:
                if self._closed or self._streams <= 0:
                    self._thread = None
                    self._last = -1  # read the head again when a stream comes back
                    self._recent.clear()
                    return
                after = self._last
            try:
                new = events_after(self.db, after)
            except Exception:
                log.exception("reading the outbox failed")
                new = []
            if new:
                with self.changed:
                    self._recent.extend(new)
                    self._last = new[-1]["id"]
                    self.changed.notify_all()
            time.sleep(POLL_SECONDS)

    def after(self, event_id: int) -> list[Event]:
        """The kept events after ``event_id`` (call with :attr:`changed` held or not)."""
        with self.changed:
            return [e for e in self._recent if e["id"] > event_id]

    def close(self) -> None:
        with self.changed:
            self._closed = True
            self.changed.notify_all()


def _encode(event: Event, select: Select) -> bytes:
    return b"".join(sse_event(name, data, str(event["id"])) for name, data in select(event))


def follow_outbox(
    tail: OutboxTail,
    select: Select,
    last: int | None,
    *,
    tournament_id: int | None = None,
    ping_seconds: float = 15.0,
    until: Callable[[], bool] = lambda: False,
) -> Iterator[bytes]:
    """A stream of the outbox events ``select`` picks: after ``last`` (read from the table),
    then as they come; ``until()`` ends it (checked at every wake-up)."""
    head = tail.open()
    try:
        yield RETRY
        cursor = head
        if last is not None and last < head:
            while True:  # what the client missed, from the table
                missed = events_after(tail.db, last, tournament_id=tournament_id)
                chunk = b"".join(_encode(e, select) for e in missed if e["id"] <= head)
                if chunk:
                    yield chunk
                if not missed or missed[-1]["id"] >= head:
                    break
                last = missed[-1]["id"]
        while not until():
            with tail.changed:
                new = tail.after(cursor)
                if not new:
                    tail.changed.wait(timeout=ping_seconds)
                    new = tail.after(cursor)
            if not new:
                yield PING
                continue
            cursor = new[-1]["id"]
            chunk = b"".join(_encode(e, select) for e in new)
            if chunk:
                yield chunk
    finally:
        tail.release()
