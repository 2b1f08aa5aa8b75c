"""A match stream from the hub's feed (:func:`arena.live.follow.follow_match`): late joiners get
the attempt so far, ``Last-Event-ID`` resumes after its event, a new attempt resets the client,
and the stream ends after ``end``."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from typing import Any

from live_support import SseEvent, played_events, read_events

from arena.live.follow import follow_match
from arena.live.hub import LiveHub
from arena.live.publish import QueueSink
from arena.live.sse import sse_event


def _hello(attempt: int | None, status: str) -> bytes:
    return sse_event("match", {"attempt": attempt, "status": status})


def _events(chunks: Iterator[bytes]) -> list[SseEvent]:
    lines = (line + b"\n" for chunk in chunks for line in chunk.split(b"\n")[:-1])
    return [e for e in read_events(lines) if e is not None]  # type: ignore[arg-type]


def _stream(hub: LiveHub, last: tuple[int, int] | None = None, status: str = "running") -> Any:
    return follow_match(
        hub, 1, "public", last, status=status, hello=_hello, settled=lambda: None, ping_seconds=5
    )


def test_a_late_joiner_gets_the_whole_attempt_so_far_then_the_end() -> None:
    hub = LiveHub()
    events = played_events()
    for event in events:
        hub.deliver(event)
    got = _events(_stream(hub))
    assert got[0].name == "match" and got[0].data["attempt"] == 1
    assert got[-1].name == "end"
    ids = [e.id for e in got[1:]]
    assert ids == [f"1-{i}" for i in range(1, len(ids) + 1)]
    assert {e.name for e in got[1:]} == {"step", "deal", "end"}


def test_last_event_id_resumes_right_after_that_event() -> None:
    hub = LiveHub()
    for event in played_events():
        hub.deliver(event)
    whole = _events(_stream(hub))[1:]
    resumed = _events(_stream(hub, last=(1, 40)))[1:]
    assert [e.id for e in resumed] == [e.id for e in whole[40:]]
    assert [e.data for e in resumed] == [e.data for e in whole[40:]]


def test_an_id_of_an_older_attempt_gets_a_reset_then_the_new_attempt_from_its_start() -> None:
    hub = LiveHub()
    first = played_events(attempt=1)
    for event in first[:50]:  # the worker died here
        hub.deliver(event)
    for event in played_events(attempt=2):
        hub.deliver(event)
    got = _events(_stream(hub, last=(1, 30)))
    assert [e.name for e in got[:3]] == ["match", "reset", "match"]
    assert got[1].data == {"attempt": 2}
    assert got[3].id == "2-1"
    assert got[-1].name == "end"


def test_a_client_following_along_is_reset_when_the_match_restarts() -> None:
    hub = LiveHub()
    events = played_events(attempt=1)
    for event in events[:20]:
        hub.deliver(event)
    stream = _stream(hub)
    head = [next(stream), next(stream)]  # the match event, then the frames so far
    received: list[SseEvent] = []
    reader = threading.Thread(target=lambda: received.extend(_events(iter([*head, *stream]))))
    reader.start()
    for event in events[20:40]:
        hub.deliver(event)
    for event in played_events(attempt=2):
        hub.deliver(event)
    reader.join(timeout=60)
    names = [e.name for e in received]
    assert "reset" in names
    cut = names.index("reset")
    assert all(e.id is not None and e.id.startswith("1-") for e in received[1:cut])
    assert received[cut + 2].id == "2-1" and names[-1] == "end"


def test_a_pending_match_says_waiting_and_goes_on_when_it_starts() -> None:
    hub = LiveHub()
    stream = _stream(hub, status="pending")
    head = [next(stream), next(stream)]  # the match event, then waiting: nothing has started
    received: list[SseEvent] = []
    reader = threading.Thread(target=lambda: received.extend(_events(iter([*head, *stream]))))
    reader.start()
    for event in played_events():
        hub.deliver(event)
    reader.join(timeout=60)
    assert [e.name for e in received[:4]] == ["match", "waiting", "match", "step"]
    assert received[0].data["status"] == "pending" and received[2].data["status"] == "running"
    assert received[-1].name == "end"


def test_a_start_wakes_the_streams_of_its_own_match_not_those_waiting_for_another() -> None:
    hub = LiveHub()
    got: dict[int, Any] = {}

    def wait(match_id: int) -> None:
        got[match_id] = hub.wait_for_feed(match_id, timeout=60)

    waiters = {m: threading.Thread(target=wait, args=(m,)) for m in (1, 2)}
    for waiter in waiters.values():
        waiter.start()
    for event in played_events(match_id=1)[:5]:
        hub.deliver(event)
    waiters[1].join(timeout=60)
    assert got[1] is hub.feed(1) and got[1] is not None
    assert waiters[2].is_alive() and 2 not in got  # still waiting: match 2 has not started
    for event in played_events(match_id=2)[:5]:
        hub.deliver(event)
    waiters[2].join(timeout=60)
    assert got[2] is hub.feed(2) and got[2] is not None


def test_the_local_workers_events_reach_the_hub_in_batches_in_their_order() -> None:
    """QueueSink gathers a process's events and puts them on the queue as lists (one item,
    not one per event, for the serving process's intake); the pump delivers each in order."""
    events = played_events()
    queue: multiprocessing.Queue[list[dict[str, Any]]] = multiprocessing.get_context(
        "spawn"
    ).Queue()
    sink = QueueSink(queue, batch_seconds=3600)  # flushed by hand below
    for event in events:
        sink.publish(event)
    sink.flush()
    batch = queue.get(timeout=30)
    assert batch == events  # all of them in one item
    sink.publish(events[0])
    sink.flush()
    sink.flush()  # nothing gathered: nothing put
    queue.put(batch[1:])
    hub = LiveHub()
    hub.pump(queue)
    try:
        whole = _events(_stream(hub))
    finally:
        hub.close()
        queue.close()
    framed = [e.id for e in whole if e.id is not None]  # not match / waiting
    assert whole[-1].name == "end"
    assert framed == [f"1-{i}" for i in range(1, len(framed) + 1)] and len(framed) > 50
