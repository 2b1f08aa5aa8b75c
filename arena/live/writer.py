"""One thread that writes every handed-off match stream of a serving process.

A match stream starts in a thread of the web server (:mod:`arena.live.follow`: the request is
checked, the ``match`` event sent, a pending match waited for) and its connection is then given
to the process's :class:`StreamWriter` (:mod:`arena.live.handoff`), which owns it until it ends:

* the streams of one match seen through one view (public, a seat) form a group; every
  :data:`TICK_SECONDS` the writer takes each group's new frames from the
  match's feed, encodes them once for that view (:meth:`~arena.live.feed.MatchFeed.render`
  caches each frame's bytes per view), frames the chunk once, and writes the same bytes to
  every member: no thread per stream, no wake-up per stream, one encoding per (feed, view);
* a new member first gets, on its own, what its group already sent since its own position (the
  attempt so far, or what followed its ``Last-Event-ID``; a ``reset`` first if it saw an older
  attempt), then goes on with the group;
* a new attempt of the match sends every member ``reset`` and the ``match`` event again; the
  match's ``end`` ends every member's response (the chunked coding's last chunk) and closes it;
* a member idle for its ``ping_seconds`` gets ``: ping``; a group idle that long asks, in a
  helper thread, whether its match was settled meanwhile by another process (its worker died
  here), and if so sends the stored ending (``replay``, ``end``) and closes;
* a client that closes its connection is dropped at once (the socket reads as closed), and so
  is one that reads so slowly that :data:`MAX_BUFFER` bytes wait for it (it reconnects with
  ``Last-Event-ID``). Each dropped or finished stream gives back its place under
  ``ARENA_MAX_STREAMS`` (``release``).
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from arena.live.feed import Frame, MatchFeed
from arena.live.sse import PING, sse_event

__all__ = ["MAX_BUFFER", "TICK_SECONDS", "StreamWriter", "Subscriber"]

log = logging.getLogger(__name__)

#: How often the writer sends each group what is new: the events made meanwhile go out in
#: one chunk (25 ms of added latency on average). A tick costs a send per stream that has
#: something new, whatever the number of events, not a thread wake-up per stream.
TICK_SECONDS = 0.05

#: Bytes that may wait for one slow client before it is dropped.
MAX_BUFFER = 8 * 1024 * 1024
_LAST_CHUNK = b"0\r\n\r\n"


@dataclass(eq=False, slots=True)
class Subscriber:
    """One handed-off stream: its connection (non-blocking), whether its response is chunked,
    the feed and view it follows, its position (``attempt``, ``seq``: the frames it has had),
    its ``match`` event maker, its settled-ending reader and what gives back its place."""

    sock: socket.socket
    chunked: bool
    feed: MatchFeed
    view: str
    attempt: int
    seq: int
    hello: Callable[[int | None, str], bytes]
    settled: Callable[[], bytes | None]
    release: Callable[[], None]
    ping_seconds: float = 15.0
    out: bytearray = field(default_factory=bytearray)
    written: float = 0.0
    closing: bool = False
    closed: bool = False


@dataclass(eq=False, slots=True)
class _Group:
    feed: MatchFeed
    view: str
    attempt: int
    cursor: int
    #: The group's frames so far (``cursor`` of them) as it sent them: what a newcomer from
    #: the start of the attempt is sent at once, instead of a frame-by-frame join each time.
    sent: bytearray = field(default_factory=bytearray)
    members: list[Subscriber] = field(default_factory=list)
    idle_since: float = field(default_factory=time.monotonic)
    checking: bool = False


class StreamWriter:
    """The writer (see the module docstring); its thread starts with the first stream."""

    def __init__(self, flush_seconds: float) -> None:
        self.flush_seconds = flush_seconds
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._incoming: deque[Subscriber] = deque()
        self._checked: deque[tuple[_Group, bytes | None]] = deque()
        self._groups: dict[tuple[int, str], _Group] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._checks: ThreadPoolExecutor | None = None

    @property
    def streams(self) -> int:
        """Streams the writer holds now."""
        return sum(len(g.members) for g in list(self._groups.values()))

    def add(self, subscriber: Subscriber) -> None:
        """Take a stream (from any thread); it is written from the writer's thread on."""
        with self._lock:
            if self._closed:
                subscriber.sock.close()
                subscriber.release()
                return
            self._incoming.append(subscriber)
            if self._thread is None:
                self._checks = ThreadPoolExecutor(1, thread_name_prefix="live-check")
                self._thread = threading.Thread(target=self._run, name="live-writer", daemon=True)
                self._thread.start()
        self._wake()

    def close(self) -> None:
        """Close every stream and stop the thread."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake()
        if thread is not None:
            thread.join(timeout=10)
        if self._checks is not None:
            self._checks.shutdown(wait=False, cancel_futures=True)
        for subscriber in list(self._incoming):
            self._drop(subscriber)
        self._incoming.clear()
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # already woken (full) or closed
            self._wake_w.send(b"\0")

    # -- the writer's thread -------------------------------------------------------------

    def _run(self) -> None:
        tick = time.monotonic()
        try:
            while not self._closed:
                timeout = max(0.0, tick - time.monotonic())
                for key, mask in self._selector.select(timeout):
                    if key.data is None:
                        with contextlib.suppress(OSError):
                            self._wake_r.recv(4096)
                        continue
                    self._ready(key.data, mask)
                while self._incoming:
                    self._join(self._incoming.popleft())
                while self._checked:
                    self._settle(*self._checked.popleft())
                now = time.monotonic()
                if now >= tick:
                    self._tick(now)
                    tick = max(tick + self.flush_seconds, now + self.flush_seconds / 2)
        except Exception:
            log.exception("the live stream writer failed")
        finally:
            for group in list(self._groups.values()):
                for member in list(group.members):
                    self._drop(member)
            self._groups.clear()

    def _ready(self, subscriber: Subscriber, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            try:
                data = subscriber.sock.recv(4096)
            except BlockingIOError:
                data = b"-"
            except OSError:
                data = b""
            if not data:  # the client closed its connection
                self._drop(subscriber)
                return
        if mask & selectors.EVENT_WRITE:
            self._flush(subscriber)

    def _join(self, subscriber: Subscriber) -> None:
        """A new stream: catch it up with its group, then it is a member."""
        try:
            self._selector.register(subscriber.sock, selectors.EVENT_READ, subscriber)
        except (OSError, ValueError):
            self._drop(subscriber)
            return
        subscriber.written = time.monotonic()
        feed = subscriber.feed
        key = (id(feed), subscriber.view)
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = self._group(feed, subscriber.view)
        else:
            self._advance(group, time.monotonic())
            if self._groups.get(key) is not group:  # it ended just now
                group = self._groups[key] = self._group(feed, subscriber.view)
        chunk = b""
        if subscriber.attempt != group.attempt:
            if subscriber.attempt:  # it saw an older attempt: it starts over
                chunk = sse_event("reset", {"attempt": group.attempt})
                chunk += subscriber.hello(group.attempt, "running")
            subscriber.attempt, subscriber.seq = group.attempt, 0
        if subscriber.seq == 0:
            chunk += group.sent
        else:
            _, frames, _ = feed.since(group.attempt, subscriber.seq)
            frames = frames[: max(0, group.cursor - subscriber.seq)]
            chunk += b"".join(feed.render(frame, group.view) for frame in frames)
        subscriber.seq = max(subscriber.seq, group.cursor)
        group.members.append(subscriber)
        if chunk:
            self._send(subscriber, chunk)
        self._advance(group, time.monotonic())

    @staticmethod
    def _group(feed: MatchFeed, view: str) -> _Group:
        """A new group of ``feed`` seen through ``view``, at the feed's frames so far."""
        attempt, frames, _ = feed.since(feed.attempt, 0)
        sent = bytearray().join(feed.render(frame, view) for frame in frames)
        return _Group(feed, view, attempt, len(frames), sent)

    def _tick(self, now: float) -> None:
        for group in list(self._groups.values()):
            self._advance(group, now)
            if not group.members:
                continue
            for member in list(group.members):
                if now - member.written >= member.ping_seconds:
                    self._send(member, PING)
            ping = min(m.ping_seconds for m in group.members)
            if not group.checking and now - group.idle_since >= ping * 0.9:
                self._check(group)

    def _advance(self, group: _Group, now: float) -> None:
        """Send ``group`` what its feed made since the last time, once encoded for all."""
        feed = group.feed
        current, frames, ended = feed.since(group.attempt, group.cursor)
        chunk = b""
        if current != group.attempt:
            reset = sse_event("reset", {"attempt": current})
            for member in list(group.members):
                if group.attempt:  # it saw an older attempt: it starts over
                    self._send(member, reset + member.hello(current, "running"))
                member.attempt, member.seq = current, 0
            group.attempt, group.cursor = current, 0
            group.sent.clear()
        if frames:
            chunk = b"".join(feed.render(frame, group.view) for frame in frames)
            start = group.cursor
            group.cursor += len(frames)
            group.sent += chunk
            group.idle_since = now
            self._broadcast(group, chunk, start, frames)
        if ended and group.cursor >= len(feed.since(current, 0)[1]):
            for member in list(group.members):
                self._finish(member)
            self._forget(group)

    def _broadcast(self, group: _Group, chunk: bytes, start: int, frames: list[Frame]) -> None:
        """The same bytes to every member at the group's position (``start``); a member that
        resumed from further on (its ``Last-Event-ID``) gets only what follows its own."""
        framed = self._framed(chunk)
        for member in list(group.members):
            if member.seq > start:
                ahead = frames[member.seq - start :]
                if ahead:
                    rest = b"".join(group.feed.render(frame, group.view) for frame in ahead)
                    self._send(member, rest)
            else:
                self._send(member, framed if member.chunked else chunk, framed=True)
            member.seq = max(member.seq, group.cursor)

    @staticmethod
    def _framed(chunk: bytes) -> bytes:
        return b"%X\r\n" % len(chunk) + chunk + b"\r\n"

    def _check(self, group: _Group) -> None:
        """Ask (in the helper thread) whether the idle group's match was settled elsewhere."""
        checks = self._checks
        if checks is None or group.feed.ended:
            return
        group.checking = True
        settled = group.members[0].settled

        def done(future: Future[bytes | None]) -> None:
            try:
                ending = future.result()
            except Exception:
                log.exception("reading whether match %s was settled failed", group.feed.match_id)
                ending = None
            self._checked.append((group, ending))
            self._wake()

        try:
            checks.submit(settled).add_done_callback(done)
        except RuntimeError:  # shutting down
            group.checking = False

    def _settle(self, group: _Group, ending: bytes | None) -> None:
        group.checking = False
        group.idle_since = time.monotonic()
        if ending is None or group.feed.ended or self._groups.get(self._key(group)) is not group:
            return
        for member in list(group.members):
            self._send(member, ending)
            self._finish(member)
        self._forget(group)

    @staticmethod
    def _key(group: _Group) -> tuple[int, str]:
        return (id(group.feed), group.view)

    def _forget(self, group: _Group) -> None:
        if self._groups.get(self._key(group)) is group:
            del self._groups[self._key(group)]

    # -- one connection ------------------------------------------------------------------

    def _send(self, subscriber: Subscriber, data: bytes, *, framed: bool = False) -> None:
        """Write ``data`` (chunk-framed here unless ``framed``) or queue what does not fit."""
        if subscriber.closed or subscriber.closing:
            return
        if subscriber.chunked and not framed:
            data = self._framed(data)
        subscriber.written = time.monotonic()
        if subscriber.out:
            subscriber.out += data
            if len(subscriber.out) > MAX_BUFFER:
                log.info("dropping a live stream that reads too slowly")
                self._drop(subscriber)
            return
        try:
            sent = subscriber.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._drop(subscriber)
            return
        if sent < len(data):
            subscriber.out += data[sent:]
            self._want_write(subscriber, True)

    def _flush(self, subscriber: Subscriber) -> None:
        if subscriber.closed:
            return
        try:
            sent = subscriber.sock.send(subscriber.out) if subscriber.out else 0
        except BlockingIOError:
            return
        except OSError:
            self._drop(subscriber)
            return
        del subscriber.out[:sent]
        if not subscriber.out:
            if subscriber.closing:
                self._drop(subscriber)
            else:
                self._want_write(subscriber, False)

    def _want_write(self, subscriber: Subscriber, want: bool) -> None:
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if want else 0)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.modify(subscriber.sock, events, subscriber)

    def _finish(self, subscriber: Subscriber) -> None:
        """End the response (its last chunk) and close once everything is sent."""
        if subscriber.chunked:
            self._send(subscriber, _LAST_CHUNK, framed=True)
        subscriber.closing = True
        if not subscriber.out:
            self._drop(subscriber)

    def _drop(self, subscriber: Subscriber) -> None:
        if subscriber.closed:
            return
        subscriber.closed = True
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._selector.unregister(subscriber.sock)
        with contextlib.suppress(OSError):
            subscriber.sock.close()
        group = self._groups.get((id(subscriber.feed), subscriber.view))
        if group is not None and subscriber in group.members:
            group.members.remove(subscriber)
            if not group.members:
                self._forget(group)
        try:
            subscriber.release()
        except Exception:
            log.exception("releasing a live stream failed")
