"""What the sweep reads of a Celery broker on Redis: a client of its database, and the matches
whose message a worker took and has not acknowledged.

kombu's Redis transport moves each message it delivers to a worker out of the queue's list and
into the hash ``unacked`` (field: the delivery tag; value: ``[message, exchange, routing key]``)
until the worker acknowledges it; with late acknowledgement (``task_acks_late``) that is when
the task ends. A worker SIGKILLed takes nothing from the hash, but the broker gives those
messages out again only after its visibility timeout (``ARENA_VISIBILITY_TIMEOUT``, an hour).
Those whose match is still ``pending`` were taken and never started: a worker that reconnected
after a broker restart takes a new prefetch while it still plays, and holds it unstarted until a
slot frees. :func:`held_match_ids` finds them, so that the sweep sends them again ahead of the
queue when a worker dies (:func:`arena.services.sweeper.sweep`), not behind the backlog they
were taken from.

Only a Celery executor on a Redis broker has either; without one they are None and empty.

>>> from arena.settings import load_settings
>>> held_match_ids(load_settings({}), [1, 2])  # the local executor: no broker
[]
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import redis

from arena.settings import Settings

__all__ = [
    "RUN_MATCH",
    "UNACKED_KEY",
    "broker_client",
    "delivered_match_ids",
    "held_match_ids",
    "message_match_id",
]

log = logging.getLogger(__name__)

#: The Celery task that plays one match (:mod:`workers.tasks`): ``run_match(match_id)``.
RUN_MATCH = "workers.tasks.run_match"
#: kombu's hash of delivered, unacknowledged messages (its ``unacked_key``, left at default).
UNACKED_KEY = "unacked"

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def broker_client(settings: Settings) -> redis.Redis | None:
    """A client of the broker's database, or None when there is no Redis broker."""
    if settings.executor_kind != "celery" or not settings.broker_url.startswith(_REDIS_SCHEMES):
        return None
    return redis.Redis.from_url(settings.broker_url, socket_timeout=5, socket_connect_timeout=5)


def held_match_ids(settings: Settings, match_ids: Iterable[int]) -> list[int]:
    """Those of ``match_ids`` (pending matches) whose ``run_match`` message a worker took and
    has not acknowledged, in the order given. Empty when there is no Redis broker or it cannot
    be reached (a failure is logged: the caller sends them again at the normal priority)."""
    client = broker_client(settings)
    if client is None:
        return []
    try:
        held = delivered_match_ids(client)
    except redis.RedisError as exc:
        log.warning("could not read the broker's delivered messages: %s", exc)
        return []
    finally:
        client.close()
    return [match_id for match_id in match_ids if match_id in held]


def delivered_match_ids(client: redis.Redis) -> set[int]:
    """The matches of every ``run_match`` message in the broker's ``unacked`` hash (delivered to
    a worker, not acknowledged); a Redis error is the caller's."""
    ids = {_match_id(raw) for _tag, raw in client.hscan_iter(UNACKED_KEY)}
    return {match_id for match_id in ids if match_id is not None}


def message_match_id(message: Mapping[str, Any]) -> int | None:
    """The match a ``run_match`` message carries, else None: kombu's envelope of Celery's
    message protocol 2 (the body, base64, is ``[args, kwargs, embed]``), as a queue's list
    holds it and as the first item of an ``unacked`` entry."""
    try:
        if message["headers"]["task"] != RUN_MATCH:
            return None
        body = message["body"]
        if message["properties"].get("body_encoding") == "base64":
            body = base64.b64decode(body)
        return int(json.loads(body)[0][0])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None


def _match_id(raw: bytes) -> int | None:
    """The match of an ``unacked`` entry (``[message, exchange, routing key]``), else None."""
    try:
        entry = json.loads(raw)
    except ValueError:
        return None
    return message_match_id(entry[0]) if isinstance(entry, list) and entry else None
