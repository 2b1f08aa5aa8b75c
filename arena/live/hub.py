"""The serving process's side of the live match streams: every match's feed, in one place.

Raw events arrive by :meth:`LiveHub.deliver`: from the local executor's worker processes
through a multiprocessing queue (:meth:`LiveHub.pump`, one thread), or from Redis when Celery
runs (:class:`~arena.live.redis_bus.RedisSource`). Each match gets a
:class:`~arena.live.feed.MatchFeed`; a stream waits on its feed, or, for a match with no feed
yet (pending), in :meth:`LiveHub.wait_for_feed` (woken when that match's feed appears, not
when any does: a start wakes only its own match's waiting streams). A feed that missed the
start of its attempt (this process subscribed late, or a message was lost) is rebuilt from the
attempt's history when the hub has one (Redis: then a match is followed from its ``start``
or from the first stream that asks for it); otherwise it starts at the next attempt. A
finished feed is dropped :data:`KEEP_ENDED_SECONDS` after its end, an idle one after
:data:`KEEP_IDLE_SECONDS` (the streams read finished matches from the database).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arena.live.feed import MatchFeed
from arena.live.publish import RawEvent

__all__ = ["KEEP_ENDED_SECONDS", "KEEP_IDLE_SECONDS", "LiveHub"]

log = logging.getLogger(__name__)

KEEP_ENDED_SECONDS = 120.0
KEEP_IDLE_SECONDS = 3600.0


class LiveHub:
    """Feeds by match id (see the module docstring). ``history(match_id)`` gives the events of a
    match's current attempt so far (Redis), ``twin_open(match_id)`` whether another open
    match shares its seed; ``subscribe(hub)`` starts its source, when the first stream asks
    for a feed (an app that serves no stream never connects to Redis)."""

    def __init__(
        self,
        *,
        twin_open: Callable[[int], bool] | None = None,
        history: Callable[[int], list[RawEvent]] | None = None,
        subscribe: Callable[[LiveHub], None] | None = None,
    ) -> None:
        self._feeds: dict[int, MatchFeed] = {}
        self._lock = threading.Lock()
        self._twin_open = twin_open
        #: Where the feeds ask their twin question (one thread: the database, not the
        #: thread delivering every match's events, waits for the answer).
        self._checks = (
            None if twin_open is None else ThreadPoolExecutor(1, thread_name_prefix="live-twin")
        )
        self._history = history
        self._closers: list[Callable[[], None]] = []
        self._stop = threading.Event()
        self._pruned = time.monotonic()
        self._subscribe = subscribe
        self._wanted: set[int] = set()
        #: What the streams of each pending match wait on (set when its feed is created).
        self._appeared: dict[int, tuple[threading.Event, float]] = {}

    def feed(self, match_id: int) -> MatchFeed | None:
        """The match's feed: the one followed here, else one rebuilt from its history (None
        when there is neither)."""
        with self._lock:
            if self._subscribe is not None:  # the first stream starts the subscription
                subscribe, self._subscribe = self._subscribe, None
                subscribe(self)
            feed = self._feeds.get(match_id)
        if feed is not None or self._history is None:
            return feed
        events = self._history(match_id)
        if not events:
            with self._lock:
                self._wanted.add(match_id)  # a stream waits for it: follow it when it starts
            return None
        with self._lock:
            feed = self._feeds.get(match_id)
            if feed is None:
                feed = self._feeds[match_id] = MatchFeed(match_id, self._twin_open, self._checks)
        for event in events:
            feed.apply(event)
        return feed

    def wait_for_feed(self, match_id: int, timeout: float) -> MatchFeed | None:
        """The match's feed once it exists, waiting at most ``timeout`` seconds for it (None
        if it still has none)."""
        feed = self.feed(match_id)
        if feed is not None:
            return feed
        with self._lock:
            appeared = None
            if match_id not in self._feeds:
                appeared, _ = self._appeared.setdefault(
                    match_id, (threading.Event(), time.monotonic())
                )
        if appeared is not None:
            appeared.wait(timeout)
        return self.feed(match_id)

    def deliver(self, event: RawEvent) -> None:
        """Take one raw event (from the one intake thread)."""
        match_id = int(event["m"])
        created = False
        with self._lock:
            feed = self._feeds.get(match_id)
            wanted = match_id in self._wanted
            self._wanted.discard(match_id)
            if feed is None:
                if self._history is not None and event["k"] != "start" and not wanted:
                    return  # nobody follows it here; a stream reads its history when it comes
                feed = self._feeds[match_id] = MatchFeed(match_id, self._twin_open, self._checks)
                created = True
        if not feed.apply(event) and self._history is not None:
            for past in self._history(match_id):
                feed.apply(past)
            feed.apply(event)
        if created:
            with self._lock:
                appeared = self._appeared.pop(match_id, None)
            if appeared is not None:
                appeared[0].set()
        self._prune()

    def _prune(self) -> None:
        now = time.monotonic()
        if now - self._pruned < 10:
            return
        self._pruned = now
        with self._lock:
            for match_id, feed in list(self._feeds.items()):
                idle = now - feed.updated
                if (feed.ended and idle > KEEP_ENDED_SECONDS) or idle > KEEP_IDLE_SECONDS:
                    del self._feeds[match_id]
            # A match that never starts here (played by another process) leaves its waiters'
            # event: they wake, find it gone, and wait again on a new one.
            for match_id, (appeared, since) in list(self._appeared.items()):
                if now - since > KEEP_IDLE_SECONDS:
                    del self._appeared[match_id]
                    appeared.set()

    def pump(self, events: Any) -> None:
        """Deliver every event of a multiprocessing queue (whose items are lists of events:
        :class:`~arena.live.publish.QueueSink`), from a thread of its own."""

        def run() -> None:
            while not self._stop.is_set():
                try:
                    batch = events.get(timeout=0.5)
                except queue.Empty:
                    continue
                except (EOFError, OSError, ValueError):  # the queue was closed
                    return
                for event in batch:
                    try:
                        self.deliver(event)
                    except Exception:
                        log.exception("live event not delivered")

        thread = threading.Thread(target=run, name="live-pump", daemon=True)
        thread.start()
        self._closers.append(lambda: thread.join(timeout=5))

    def on_close(self, close: Callable[[], None]) -> None:
        """Run ``close`` when the hub closes (a Redis subscription)."""
        self._closers.append(close)

    def close(self) -> None:
        self._stop.set()
        for close in reversed(self._closers):
            close()
        self._closers.clear()
        if self._checks is not None:
            self._checks.shutdown(wait=False, cancel_futures=True)
