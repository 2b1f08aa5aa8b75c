"""The one writer of handed-off match streams (:class:`arena.live.writer.StreamWriter`), over
real sockets: a joiner gets the attempt so far, then the group's chunks; ``Last-Event-ID``
resumes; a new attempt resets every member; ``end`` closes each response (the last chunk of a
chunked one); a client that goes away gives back its place; so does every stream on close."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

from live_support import SseEvent, played_events, read_events

from arena.live.hub import LiveHub
from arena.live.sse import sse_event
from arena.live.writer import StreamWriter, Subscriber

WAIT = 60.0


def _hello(attempt: int | None, status: str) -> bytes:
    return sse_event("match", {"attempt": attempt, "status": status})


class Releases:
    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.count += 1


def _wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def _subscribe(
    writer: StreamWriter,
    hub: LiveHub,
    release: Releases,
    last: tuple[int, int] | None = None,
    *,
    chunked: bool = False,
) -> socket.socket:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    feed = hub.feed(1)
    assert feed is not None
    attempt, seq = last if last is not None else (feed.attempt, 0)
    writer.add(
        Subscriber(ours, chunked, feed, "public", attempt, seq, _hello, lambda: None, release, 5.0)
    )
    theirs.settimeout(WAIT)
    return theirs


def _raw(client: socket.socket) -> bytes:
    """Everything until the writer closes the connection (then ours is closed too)."""
    parts: list[bytes] = []
    with client:
        while True:
            data = client.recv(65536)
            if not data:
                return b"".join(parts)
            parts.append(data)


def _unchunked(body: bytes) -> Iterator[bytes]:
    """The chunked transfer coding undone; asserts the last chunk ends it."""
    while True:
        size_line, body = body.split(b"\r\n", 1)
        size = int(size_line, 16)
        if size == 0:
            assert body == b"\r\n"
            return
        yield body[:size]
        assert body[size : size + 2] == b"\r\n"
        body = body[size + 2 :]


def _events(body: bytes) -> list[SseEvent]:
    lines = (line + b"\n" for line in body.split(b"\n")[:-1])
    return [e for e in read_events(lines) if e is not None]  # type: ignore[arg-type]


def test_a_late_joiner_gets_the_attempt_so_far_and_the_stream_closes_after_end() -> None:
    hub, writer, release = LiveHub(), StreamWriter(0.02), Releases()
    events = played_events()
    for event in events[:60]:
        hub.deliver(event)
    try:
        client = _subscribe(writer, hub, release)
        for event in events[60:]:
            hub.deliver(event)
        got = _events(_raw(client))
    finally:
        writer.close()
    ids = [e.id for e in got]
    assert ids == [f"1-{i}" for i in range(1, len(ids) + 1)]
    assert got[-1].name == "end"
    assert release.count == 1


def test_many_members_of_one_view_get_the_same_bytes_chunked() -> None:
    hub, writer, release = LiveHub(), StreamWriter(0.02), Releases()
    events = played_events()
    hub.deliver(events[0])
    try:
        clients = [_subscribe(writer, hub, release, chunked=True) for _ in range(5)]
        for event in events[1:]:
            hub.deliver(event)
        bodies = [b"".join(_unchunked(_raw(c))) for c in clients]
    finally:
        writer.close()
    assert all(body == bodies[0] for body in bodies)
    assert _events(bodies[0])[-1].name == "end"
    assert release.count == 5


def test_last_event_id_resumes_after_its_event_through_the_writer() -> None:
    hub, writer, release = LiveHub(), StreamWriter(0.02), Releases()
    for event in played_events():
        hub.deliver(event)
    try:
        whole = _events(_raw(_subscribe(writer, hub, release)))
        resumed = _events(_raw(_subscribe(writer, hub, release, last=(1, 40))))
    finally:
        writer.close()
    assert [e.id for e in resumed] == [e.id for e in whole[40:]]


def test_a_new_attempt_resets_every_member_then_sends_its_frames() -> None:
    hub, writer, release = LiveHub(), StreamWriter(0.02), Releases()
    first, second = played_events(attempt=1), played_events(attempt=2)
    for event in first[:50]:  # the worker died here
        hub.deliver(event)
    try:
        clients = [_subscribe(writer, hub, release) for _ in range(2)]
        stale = _subscribe(writer, hub, release, last=(1, 10))
        _wait_until(lambda: writer.streams == 3)
        for event in second:
            hub.deliver(event)
        for client in [*clients, stale]:
            got = _events(_raw(client))
            names = [e.name for e in got]
            reset = names.index("reset")
            assert got[reset].data == {"attempt": 2}
            assert names[reset + 1] == "match" and got[reset + 1].data["attempt"] == 2
            assert got[reset + 2].id == "2-1" and names[-1] == "end"
            assert all(e.id.startswith("1-") for e in got[:reset] if e.id)
    finally:
        writer.close()


def test_a_client_that_goes_away_gives_back_its_place_and_close_ends_the_rest() -> None:
    hub, writer, release = LiveHub(), StreamWriter(0.02), Releases()
    events = played_events()
    for event in events[:30]:
        hub.deliver(event)
    try:
        gone = _subscribe(writer, hub, release)
        kept = _subscribe(writer, hub, release)
        _wait_until(lambda: writer.streams == 2)
        gone.close()
        _wait_until(lambda: release.count == 1)
        assert writer.streams == 1
    finally:
        writer.close()
    assert release.count == 2
    assert kept.recv(1 << 20)  # what it had been sent before the close
    _raw(kept)  # then the writer closed it


def test_a_member_resuming_ahead_of_its_group_gets_only_what_follows_its_own_id() -> None:
    hub, writer, release = LiveHub(), StreamWriter(0.02), Releases()
    events = played_events()
    for event in events[:40]:
        hub.deliver(event)
    try:
        behind = _subscribe(writer, hub, release)
        _wait_until(lambda: writer.streams == 1)
        feed = hub.feed(1)
        assert feed is not None
        ahead_at = len(feed.frames) + 20  # an id the feed is yet to reach
        ahead = _subscribe(writer, hub, release, last=(1, ahead_at))
        _wait_until(lambda: writer.streams == 2)
        for event in events[40:]:
            hub.deliver(event)
        whole, resumed = _events(_raw(behind)), _events(_raw(ahead))
    finally:
        writer.close()
    assert [e.id for e in resumed] == [e.id for e in whole[ahead_at:]]
