"""Noticing that the broker lost its queue, instead of waiting out a grace period.

A Redis broker restarted without persistence (or flushed) comes back empty: every queued
``run_match`` message is gone, and the matches they carried stay ``pending`` with nothing to
deliver them. The sweep keeps a marker key in the broker's own database: a sweep that finds it
absent knows the broker's data was lost since the marker was set (or that this is the first
sweep on this broker), resubmits every pending match at once
(:func:`arena.services.sweeper.sweep`), and only then sets it, so a sweep that dies halfway
leaves the next one to do it all again. A needless resubmission is harmless (the claim
decides who plays), so the marker errs that way: a marker evicted by ``maxmemory`` only costs
one duplicate message per pending match.

Only a Celery executor on a Redis broker has such a queue; the local executor's queue dies with
its process, whose pickup finds the pending matches again.

>>> from arena.settings import load_settings
>>> queue_was_lost(load_settings({}))  # the local executor: no broker
False
"""

from __future__ import annotations

import logging

import redis

from arena.db.models import utcnow
from arena.settings import Settings

__all__ = ["MARKER_KEY", "mark_queue", "queue_was_lost"]

log = logging.getLogger(__name__)

#: The key the sweep keeps in the broker's database (its value: when it was set).
MARKER_KEY = "gin-arena:queue-marker"

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def _client(settings: Settings) -> redis.Redis | None:
    """A client of the broker's database, or None when there is no Redis broker."""
    if settings.executor_kind != "celery" or not settings.broker_url.startswith(_REDIS_SCHEMES):
        return None
    return redis.Redis.from_url(settings.broker_url, socket_timeout=5, socket_connect_timeout=5)


def queue_was_lost(settings: Settings) -> bool:
    """Whether the broker's queue was lost since :func:`mark_queue` last ran: its marker is
    absent. False when there is no Redis broker, or when it cannot be reached (the next sweep
    asks again)."""
    client = _client(settings)
    if client is None:
        return False
    try:
        return not client.exists(MARKER_KEY)
    except redis.RedisError as exc:
        log.warning("could not read the broker's queue marker: %s", exc)
        return False
    finally:
        client.close()


def mark_queue(settings: Settings) -> None:
    """Set the marker (after every pending match was resubmitted); a failure is logged (the
    next sweep finds the marker absent and resubmits again, which is harmless)."""
    client = _client(settings)
    if client is None:
        return
    try:
        client.set(MARKER_KEY, utcnow().isoformat())
    except redis.RedisError as exc:
        log.warning("could not set the broker's queue marker: %s", exc)
    finally:
        client.close()
