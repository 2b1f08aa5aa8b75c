"""The live fan-out across processes when Celery runs: Redis pub/sub, and a list per match.

A worker's :class:`RedisSink` sends each raw event (:mod:`arena.live.publish`) from a thread of
its own, so a match never waits on Redis: per event, in one pipeline, it appends it to the
match's list ``arena:live:<id>`` (the attempt's events so far, for late joiners and
``Last-Event-ID``: emptied by a new attempt's ``start``, capped at :data:`MAX_EVENTS`, gone
:data:`TTL_SECONDS` after its last event) and publishes it on the channel
``arena:live:events``. A serving process's :class:`RedisSource` subscribes to that channel and
feeds every event to its hub; a hub meeting a match it has not followed from its start reads
the list first (:meth:`RedisSource.history`).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

import msgspec
import redis

from arena.live.publish import RawEvent
from arena.settings import Settings

__all__ = [
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
            batch = [self._queue.get()]
            while len(batch) < 500:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            if None in batch:
                batch = batch[: batch.index(None)]
                self._send(batch)
                return
            self._send(batch)

    def _send(self, batch: list[RawEvent | None]) -> None:
        if not batch:
            return
        pipe = self._client.pipeline(transaction=False)
        for event in batch:
            assert event is not None
            key = history_key(int(event["m"]))
            body = _encoder.encode(event)
            if event["k"] == "start":
                pipe.delete(key)
            pipe.rpush(key, body)
            pipe.ltrim(key, -MAX_EVENTS, -1)
            pipe.expire(key, TTL_SECONDS)
            pipe.publish(CHANNEL, body)
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
                        deliver(_decoder.decode(message["data"]))
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
