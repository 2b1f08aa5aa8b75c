"""The fan-out when Celery runs: a worker process publishes a match's live events to a real
Redis, and a serving process's hub, subscribed there, makes the same frames as in process; a
hub that joins late reads the attempt so far from the match's Redis list."""

from __future__ import annotations

import json
import multiprocessing
import threading
import uuid
from typing import Any

import pytest
import redis
from conftest import REDIS_URL, require_service
from health_support import wait_until
from live_support import SseEvent, played_events, read_events

from arena.live import redis_bus
from arena.live.follow import follow_match
from arena.live.hub import LiveHub
from arena.live.redis_bus import CHANNEL, RedisSink, RedisSource, history_key
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


#: Long enough for anything these tests wait on, on a loaded machine (never a pass condition).
PATIENCE_S = 60.0


def _subscribed(url: str) -> tuple[RedisSource, list[dict[str, Any]]]:
    """A source delivering into a list, once its subscription is in place (a probe event,
    published until it arrives; Redis drops what is published before)."""
    source = RedisSource(url)
    received: list[dict[str, Any]] = []
    source.start(received.append)
    probe = {"m": 0, "k": "probe", "n": uuid.uuid4().hex}
    client = redis.Redis.from_url(url)

    def arrived() -> bool:
        client.publish(CHANNEL, json.dumps(probe))
        return probe in received

    wait_until(arrived, timeout=PATIENCE_S, what="the subscription's probe")
    return source, received


def _mine(received: list[dict[str, Any]], ids: set[int], count: int) -> list[dict[str, Any]]:
    """The events of matches ``ids`` (the channel is shared with every other test), once
    ``count`` have arrived."""

    def mine() -> list[dict[str, Any]]:
        return [e for e in list(received) if e.get("m") in ids]

    wait_until(lambda: len(mine()) >= count, timeout=PATIENCE_S, what=f"{count} events")
    return mine()


def test_a_batch_of_two_matches_and_a_new_attempt_keeps_each_list_to_its_current_attempt(
    url: str,
) -> None:
    """Events of two matches in one sink's batches, the first match restarting (attempt 2)
    mid-way: each match's list holds its current attempt's events in order, the second's
    untouched, and a subscribed source receives every event in the order it was published."""
    first, second = (10_000 + uuid.uuid4().int % 1_000_000 + i for i in (0, 1))
    old, new, other = played_events(first)[:40], played_events(first, 2)[:30], played_events(second)
    published = [*old[:20], *other[:50], *old[20:], *new, *other[50:80]]
    source, received = _subscribed(url)
    client = redis.Redis.from_url(url)
    try:
        sink = RedisSink(url)
        for event in published:
            sink.publish(event)
        sink.close()
        stored_first = [json.loads(b) for b in client.lrange(history_key(first), 0, -1)]
        stored_second = [json.loads(b) for b in client.lrange(history_key(second), 0, -1)]
        assert [(e["at"], e["n"]) for e in stored_first] == [(2, e["n"]) for e in new]
        assert [e["n"] for e in stored_second] == list(range(80))
        got = _mine(received, {first, second}, len(published))
        assert [(e["m"], e["at"], e["n"]) for e in got] == [
            (e["m"], e["at"], e["n"]) for e in published
        ]
    finally:
        source.close()
        client.delete(history_key(first), history_key(second))


def test_a_message_of_one_event_from_an_earlier_worker_is_delivered(url: str) -> None:
    """Workers of the version before sent one event per message, not an array."""
    match_id = 10_000 + uuid.uuid4().int % 1_000_000
    source, received = _subscribed(url)
    try:
        event = played_events(match_id)[0]
        redis.Redis.from_url(url).publish(CHANNEL, json.dumps(event))
        assert _mine(received, {match_id}, 1) == [event]
    finally:
        source.close()


def test_a_batch_after_redis_lost_its_scripts_still_reaches_the_list_and_the_channel(
    url: str,
) -> None:
    """A restarted Redis has forgotten the sink's script: the next batch loads it again
    (redis-py answers ``NOSCRIPT`` with the script itself) and nothing is lost."""
    match_id = 10_000 + uuid.uuid4().int % 1_000_000
    events = played_events(match_id)[:30]
    source, received = _subscribed(url)
    client = redis.Redis.from_url(url)
    try:
        sink = RedisSink(url)
        for event in events[:10]:
            sink.publish(event)
        _mine(received, {match_id}, 10)
        client.script_flush()
        for event in events[10:]:
            sink.publish(event)
        sink.close()
        assert [e["n"] for e in _mine(received, {match_id}, 30)] == list(range(30))
        assert [json.loads(b)["n"] for b in client.lrange(history_key(match_id), 0, -1)] == list(
            range(30)
        )
    finally:
        source.close()
        client.delete(history_key(match_id))


def test_a_match_list_keeps_its_newest_events_and_expires_after_its_last(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list is capped at ``MAX_EVENTS`` (the oldest go) and expires ``TTL_SECONDS`` after
    the batch that last added to it."""
    monkeypatch.setattr(redis_bus, "MAX_EVENTS", 7)
    monkeypatch.setattr(redis_bus, "TTL_SECONDS", 120)
    match_id = 10_000 + uuid.uuid4().int % 1_000_000
    client = redis.Redis.from_url(url)
    try:
        sink = RedisSink(url)
        for event in played_events(match_id)[:25]:
            sink.publish(event)
        sink.close()
        kept = [json.loads(b)["n"] for b in client.lrange(history_key(match_id), 0, -1)]
        assert kept == list(range(18, 25))
        assert 0 < client.ttl(history_key(match_id)) <= 120
    finally:
        client.delete(history_key(match_id))
