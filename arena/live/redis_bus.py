"""The live fan-out across processes when Celery runs: Redis pub/sub, and a list per match.

A worker's :class:`RedisSink` sends the raw events (:mod:`arena.live.publish`) of every match
of its process from a thread of its own, so a match never waits on Redis, in batches
(what came in :data:`~arena.live.publish.BATCH_SECONDS` after the first, at most
:data:`BATCH_EVENTS`), one command each: a Lua script (:data:`SEND_SCRIPT`, sent by its SHA
once Redis has it) that, per match of the batch, pushes its events to the match's list
``arena:live:<id>`` (the attempt's events so far, for late joiners and ``Last-Event-ID``:
emptied by a new attempt's ``start``, capped at :data:`MAX_EVENTS`, gone :data:`TTL_SECONDS`
after its last event), then publishes the whole batch (a JSON array, in order) on the channel
``arena:live:events``. A command per event cost a worker playing 200 matches a sixth of its
time (``benchmarks/bench_load.py``); a pipeline of three commands per match of the batch
still cost the worker twice the script's CPU an event (``benchmarks/bench_live_sink.py``).
Redis runs the script atomically, where it ran the pipeline's commands one by one. A serving
process's
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
    "SEND_SCRIPT",
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
#: One batch in one command. ``KEYS``: the lists of the batch's matches, in order. ``ARGV``: the
#: batch's message (a JSON array of all its events), :data:`MAX_EVENTS`, :data:`TTL_SECONDS`,
#: then for each key in turn: its number of events, ``1`` if the list starts again (a new
#: attempt) else ``0``, and the events themselves.
SEND_SCRIPT = f"""
local at = 4
for i, key in ipairs(KEYS) do
  local count = tonumber(ARGV[at])
  if ARGV[at + 1] == '1' then redis.call('DEL', key) end
  redis.call('RPUSH', key, unpack(ARGV, at + 2, at + 1 + count))
  redis.call('LTRIM', key, -tonumber(ARGV[2]), -1)
  redis.call('EXPIRE', key, ARGV[3])
  at = at + 2 + count
end
redis.call('PUBLISH', '{CHANNEL}', ARGV[1])
return #KEYS
"""


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
        # Sent by SHA; after a Redis restart (its script cache gone) redis-py loads it again.
        self._script = self._client.register_script(SEND_SCRIPT)
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
        keys: list[str] = []
        args: list[bytes | int] = [
            b"[" + b",".join(body for _, body in encoded) + b"]",
            MAX_EVENTS,
            TTL_SECONDS,
        ]
        for match_id, bodies, restarted in _by_match(encoded):
            keys.append(history_key(match_id))
            args += [len(bodies), 1 if restarted else 0, *bodies]
        try:
            self._script(keys=keys, args=args)
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
                pubsub = self._client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call, unused-ignore]
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
