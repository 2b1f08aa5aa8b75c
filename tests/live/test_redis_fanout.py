"""The fan-out when Celery runs: a worker process publishes a match's live events to a real
Redis, and a serving process's hub, subscribed there, makes the same frames as in process; a
hub that joins late reads the attempt so far from the match's Redis list."""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from typing import Any

import pytest
import redis
from conftest import REDIS_URL, require_service
from live_support import SseEvent, played_events, read_events

from arena.live.follow import follow_match
from arena.live.hub import LiveHub
from arena.live.redis_bus import RedisSink, RedisSource, history_key
from arena.live.sse import sse_event


def _publish(url: str, match_id: int, count: int | None) -> None:
    """The worker process: publish a played match's events (the first ``count``) and stop."""
    sink = RedisSink(url)
    events = played_events(match_id)
    for event in events[:count]:
        sink.publish(event)
    sink.close()


def _worker(url: str, match_id: int, count: int | None = None) -> None:
    process = multiprocessing.get_context("spawn").Process(
        target=_publish, args=(url, match_id, count)
    )
    process.start()
    process.join(timeout=120)
    assert process.exitcode == 0


def _hub(url: str) -> tuple[LiveHub, RedisSource]:
    source = RedisSource(url)
    hub = LiveHub(history=source.history, subscribe=lambda h: source.start(h.deliver))
    hub.on_close(source.close)
    return hub, source


def _follow(hub: LiveHub, match_id: int, status: str = "running") -> list[SseEvent]:
    chunks = follow_match(
        hub,
        match_id,
        "public",
        None,
        status=status,
        hello=lambda a, s: sse_event("match", {"attempt": a, "status": s}),
        settled=lambda: None,
        ping_seconds=2,
    )
    lines = (line + b"\n" for chunk in chunks for line in chunk.split(b"\n")[:-1])
    return [e for e in read_events(lines) if e is not None]  # type: ignore[arg-type]


def _timeless(data: Any) -> Any:
    """``data`` without latencies (the players' think times differ between two plays)."""
    if isinstance(data, dict):
        return {k: _timeless(v) for k, v in data.items() if k not in ("latency", "latency_ms")}
    if isinstance(data, list):
        return [_timeless(v) for v in data]
    return data


@pytest.fixture
def url() -> str:
    require_service("Redis", "127.0.0.1", 6379)
    return REDIS_URL


def test_events_published_by_a_worker_process_reach_a_subscribed_hub(url: str) -> None:
    match_id = 10_000 + uuid.uuid4().int % 1_000_000
    hub, _source = _hub(url)
    try:
        hub.feed(match_id)  # the first stream subscribes
        received: list[SseEvent] = []
        reader = threading.Thread(target=lambda: received.extend(_follow(hub, match_id, "pending")))
        reader.start()
        _worker(url, match_id)
        reader.join(timeout=120)
        local = LiveHub()
        for event in played_events(match_id):
            local.deliver(event)
        expected = _follow(local, match_id)
        assert [e.name for e in received[:3]] == ["match", "waiting", "match"]
        got = [(e.name, e.id, _timeless(e.data)) for e in received[2:]]
        assert got == [(e.name, e.id, _timeless(e.data)) for e in expected]
    finally:
        hub.close()
        redis.Redis.from_url(url).delete(history_key(match_id))


def test_a_hub_that_joins_late_reads_the_attempt_so_far_from_redis(url: str) -> None:
    match_id = 10_000 + uuid.uuid4().int % 1_000_000
    _worker(url, match_id, count=200)  # published before this hub existed
    hub, _source = _hub(url)
    try:
        feed = hub.feed(match_id)
        assert feed is not None and feed.attempt == 1
        local = LiveHub()
        for event in played_events(match_id)[:200]:
            local.deliver(event)
        mine = local.feed(match_id)
        assert mine is not None
        assert [f.id for f in feed.frames] == [f.id for f in mine.frames]
        assert [_timeless(f.data) for f in feed.frames] == [_timeless(f.data) for f in mine.frames]
    finally:
        hub.close()
        redis.Redis.from_url(url).delete(history_key(match_id))
