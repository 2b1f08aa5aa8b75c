"""The live fan-out across processes when Celery runs: Redis pub/sub, and a list per match.

A worker's :class:`RedisSink` sends the raw events (:mod:`arena.live.publish`) of every match
of its process from a thread of its own, so a match never waits on Redis, in batches
(what came in :data:`~arena.live.publish.BATCH_SECONDS` after the first, at most
:data:`BATCH_EVENTS`), one pipeline each: per match of the batch, one ``RPUSH`` of its events
to the match's list ``arena:live:<id>`` (the attempt's events so far, for late joiners and
``Last-Event-ID``: emptied by a new attempt's ``start``, capped at :data:`MAX_EVENTS`, gone
:data:`TTL_SECONDS` after its last event), then one ``PUBLISH`` of the whole batch (a JSON
array, in order) on the channel ``arena:live:events``. A command per event cost a worker
playing 200 matches a sixth of its time (``benchmarks/bench_load.py``). A serving process's
:class:`RedisSource` subscribes to that channel and feeds every event to its hub (a message
holding one event, not an array, is read too); a hub meeting a match it has not followed from
its start reads the list first (:meth:`RedisSource.history`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import msgspec
import redis

from arena.live.publish import BATCH_SECONDS, RawEvent
from arena.settings import Settings

__all__ = [
    "BATCH_EVENTS",
    "CHANNEL",
    "MAX_EVENTS",
    "TTL_SECONDS",
    "RedisSink",
    "RedisSource",
    "history_key",
    "live_redis_url",
]

log = logging.getLogger(__name__)

CHANNEL = "arena:live:events"
#: Events kept per match (a long standard match has a few thousand).
MAX_EVENTS = 50_000
#: How long a match's list outlives its last event.
TTL_SECONDS = 3600
#: The most events one batch (one pipeline, one message) carries.
BATCH_EVENTS = 500
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()


def live_redis_url(settings: Settings) -> str:
    """Where the live events travel when Celery runs (``ARENA_LIVE_REDIS_URL``, else the
    broker's URL)."""
    return settings.live_redis_url or settings.broker_url


def history_key(match_id: int) -> str:
    return f"arena:live:{match_id}"


class RedisSink:
    """Publishes raw events to Redis from a sending thread (started on the first event)."""

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(url)
        self._queue: queue.SimpleQueue[RawEvent | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def publish(self, event: RawEvent) -> None:
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, name="live-redis", daemon=True
                    )
                    self._thread.start()
        self._queue.put(event)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is not None:
                time.sleep(BATCH_SECONDS)  # let the others come: one pipeline for them all
            batch: list[RawEvent] = []
            while item is not None:  # None: close() was called, send what came before it
                batch.append(item)
                if len(batch) == BATCH_EVENTS:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            self._send(batch)
            if item is None:
                return

    def _send(self, batch: list[RawEvent]) -> None:
        if not batch:
            return
        encoded = [(event, _encoder.encode(event)) for event in batch]
        pipe = self._client.pipeline(transaction=False)
        for match_id, bodies, restarted in _by_match(encoded):
            key = history_key(match_id)
            if restarted:  # a new attempt: its list starts again
                pipe.delete(key)
            pipe.rpush(key, *bodies)
            pipe.ltrim(key, -MAX_EVENTS, -1)
            pipe.expire(key, TTL_SECONDS)
        pipe.publish(CHANNEL, b"[" + b",".join(body for _, body in encoded) + b"]")
        try:
            pipe.execute()
        except redis.RedisError as exc:  # the stream misses these; the match goes on
            log.warning("live events not sent to Redis: %s", exc)

    def close(self) -> None:
        """Send what is queued, then stop the thread."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=10)
            self._thread = None
        self._client.close()


def _by_match(
    encoded: list[tuple[RawEvent, bytes]],
) -> list[tuple[int, list[bytes], bool]]:
    """A batch's events (each with its JSON) as each match's list gets them, in order: (match
    id, the events from its last ``start`` on, whether there was one: the list is emptied
    first).

    >>> _by_match([({"m": 1, "k": "act"}, b"a"), ({"m": 2, "k": "start"}, b"s"),
    ...            ({"m": 1, "k": "start"}, b"t"), ({"m": 1, "k": "deal"}, b"d")])
    [(1, [b't', b'd'], True), (2, [b's'], True)]
    """
    lists: dict[int, tuple[list[bytes], bool]] = {}
    for event, body in encoded:
        match_id = int(event["m"])
        if event["k"] == "start":
            lists[match_id] = ([body], True)
        else:
            lists.setdefault(match_id, ([], False))[0].append(body)
    return [(match_id, bodies, restarted) for match_id, (bodies, restarted) in lists.items()]


def _events(message: Any) -> list[RawEvent]:
    """The events of one message on the channel: a batch (an array), or one event."""
    data = _decoder.decode(message)
    return data if isinstance(data, list) else [data]


class RedisSource:
    """A serving process's subscription: every event on the channel to ``deliver``."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._client = redis.Redis.from_url(url)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def history(self, match_id: int) -> list[RawEvent]:
        """The events of the match's current attempt so far (empty when Redis has none)."""
        try:
            items = self._client.lrange(history_key(match_id), 0, -1)
        except redis.RedisError as exc:
            log.warning("live history of match %s not read: %s", match_id, exc)
            return []
        return [_decoder.decode(item) for item in items]

    def start(self, deliver: Callable[[RawEvent], None]) -> None:
        """Deliver every published event from a thread of its own (reconnecting on errors)."""
        self._thread = threading.Thread(
            target=self._run, args=(deliver,), name="live-redis-source", daemon=True
        )
        self._thread.start()

    def _run(self, deliver: Callable[[RawEvent], None]) -> None:
        while not self._stop.is_set():
            try:
                pubsub = self._client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
                pubsub.subscribe(CHANNEL)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message is not None:
                        for event in _events(message["data"]):
                            deliver(event)
                pubsub.close()
            except redis.RedisError as exc:
                log.warning("live subscription to Redis lost (retrying): %s", exc)
                self._stop.wait(1.0)
            except Exception:
                log.exception("live event from Redis not delivered")

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._client.close()
