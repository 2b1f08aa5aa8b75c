"""A match stream as a sequence of byte chunks: what one client of
``GET /api/v1/matches/{id}/events`` is sent, from the hub's feed (:mod:`arena.live.hub`).

The chunks are made without Flask (the view, :mod:`arena.api.views.streams`, only checks the
request and serves them): ``hello(attempt, status)`` makes the ``match`` event, ``settled()``
the ending of a match that is over (``replay`` and ``end``, from the database; None while the
match is open). Each chunk holds every event that was ready at once (one write per wake-up).

Under ``gin-arena serve`` a stream runs here only until it has its match's feed (the ``match``
event, and the wait of a pending match); then ``handoff`` gives its connection to the
process's one writer thread (:mod:`arena.live.writer`), which writes what follows. Served any
other way (another WSGI server, a test client), the whole stream is this iterator.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Iterator

from arena.live.feed import MatchFeed
from arena.live.hub import LiveHub
from arena.live.sse import PING, RETRY, sse_event

__all__ = ["follow_match", "parse_last_event_id"]

#: The shortest time between two writes to one stream. A match makes an event every few
#: milliseconds when its bots answer fast; writing each to every stream of the match as it
#: comes cost the API process more than a core at 500 streams (each write wakes a thread and
#: waitress's loop), and the backlog grew without end. Events that come within this time are
#: written as one chunk: at most 10 writes a second per stream, for 50 ms of added latency on
#: average (``benchmarks/bench_streams.py``).
FLUSH_SECONDS = 0.1

_EVENT_ID = re.compile(r"([1-9][0-9]{0,8})-([1-9][0-9]{0,8})")


def parse_last_event_id(value: str | None) -> tuple[int, int] | None:
    """``Last-Event-ID`` as (attempt, seq); None when absent or not one of ours.

    >>> parse_last_event_id("2-15"), parse_last_event_id("x"), parse_last_event_id(None)
    ((2, 15), None, None)
    """
    if not value:
        return None
    found = _EVENT_ID.fullmatch(value.strip())
    return None if found is None else (int(found[1]), int(found[2]))


def follow_match(
    hub: LiveHub,
    match_id: int,
    view: str,
    last: tuple[int, int] | None,
    *,
    status: str,
    hello: Callable[[int | None, str], bytes],
    settled: Callable[[], bytes | None],
    ping_seconds: float = 15.0,
    handoff: Callable[[MatchFeed, tuple[int, int] | None], bool] | None = None,
) -> Iterator[bytes]:
    """The stream of a pending or running match (see the module docstring). ``handoff(feed,
    last)``, once the stream has its feed, may take the stream away to be written elsewhere
    (:class:`arena.live.writer.StreamWriter`): True ends the iterator there."""
    feed = hub.feed(match_id)
    yield RETRY + hello(None if feed is None else feed.attempt or None, status)
    if feed is None:
        if status == "pending":
            yield sse_event("waiting", {"status": "pending"})
        found = yield from _wait_for_feed(hub, match_id, settled, ping_seconds)
        if found is None:
            return
        feed = found
        last = None
        yield hello(feed.attempt or None, "running")
    if handoff is not None and handoff(feed, last):
        return
    yield from _follow(feed, view, last, hello, settled, ping_seconds)


def _wait_for_feed(
    hub: LiveHub, match_id: int, settled: Callable[[], bytes | None], ping_seconds: float
) -> Generator[bytes, None, MatchFeed | None]:
    """Wait for the match's feed to appear (it starts); a ping when idle, and the ending if
    the match is settled meanwhile (another process played it)."""
    while True:
        feed = hub.wait_for_feed(match_id, ping_seconds)
        if feed is not None:
            return feed
        ending = settled()
        if ending is not None:
            yield ending
            return None
        yield PING


def _follow(
    feed: MatchFeed,
    view: str,
    last: tuple[int, int] | None,
    hello: Callable[[int | None, str], bytes],
    settled: Callable[[], bytes | None],
    ping_seconds: float,
) -> Iterator[bytes]:
    attempt, seq = last if last is not None else (feed.attempt, 0)
    idle_since = time.monotonic()
    written = 0.0
    while True:
        # At most one write per FLUSH_SECONDS: what arrives meanwhile goes out together.
        pause = written + FLUSH_SECONDS - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        with feed.changed:
            current, frames, ended = feed.since(attempt, seq)
            if current == attempt and not frames and not ended:
                feed.changed.wait(timeout=ping_seconds)
                current, frames, ended = feed.since(attempt, seq)
        chunk = b""
        if current != attempt:
            if attempt:  # the client saw an older attempt: it starts over
                chunk = sse_event("reset", {"attempt": current}) + hello(current, "running")
            attempt, seq = current, 0
            _, frames, ended = feed.since(attempt, seq)
        if frames:
            chunk += b"".join(feed.render(frame, view) for frame in frames)
            seq += len(frames)
        if chunk:
            idle_since = written = time.monotonic()
            yield chunk
        if ended and not frames and seq >= len(feed.frames):
            return
        if not chunk and time.monotonic() - idle_since >= ping_seconds * 0.9:
            ending = settled()  # the worker may have died and another process finished it
            if ending is not None and not feed.ended:
                yield ending
                return
            idle_since = time.monotonic()
            yield PING
