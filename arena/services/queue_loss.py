"""Noticing that the broker lost its queue, instead of waiting out a grace period.

A Redis broker restarted without persistence (or flushed) comes back empty: every queued
``run_match`` message is gone, and the matches they carried stay ``pending`` with nothing to
deliver them. The sweep keeps a marker key in the broker's own database, so the marker is lost
with the queue. A sweep that finds it absent knows the broker's data was lost since the marker
was set (or that this is the first sweep on this broker), and resubmits every pending match at
once (:func:`arena.services.sweeper.sweep`):

1. :func:`begin_resend` writes a token of its own in the marker, *before* the pending matches
   are read and sent;
2. every pending match is sent;
3. :func:`mark_queue` marks the queue whole only if the marker still holds that token.

So a loss during the resubmission cannot be marked over: if the broker restarted while the
matches were being sent (some went into the Redis that died), the token went with it, the
queue is not marked whole, and the next sweep resubmits again. A marker that still holds a
token (a sweep that died halfway, or one still sending) counts as lost too. A needless
resubmission is harmless (the claim decides who plays), so the marker errs that way: a marker
evicted by ``maxmemory`` only costs one duplicate message per pending match.

Only a Celery executor on a Redis broker has such a queue; the local executor's queue dies with
its process, whose pickup finds the pending matches again.

>>> from arena.settings import load_settings
>>> queue_was_lost(load_settings({}))  # the local executor: no broker
False
"""

from __future__ import annotations

import logging
import uuid

import redis

from arena.db.models import utcnow
from arena.services.broker import broker_client
from arena.settings import Settings

__all__ = ["MARKER_KEY", "begin_resend", "mark_queue", "queue_was_lost"]

log = logging.getLogger(__name__)

#: The key the sweep keeps in the broker's database. Its value: when the queue was last marked
#: whole, or a resubmission's token (``RESENDING`` and more) while one is under way.
MARKER_KEY = "gin-arena:queue-marker"
#: How a token starts: a marker holding one was not marked whole.
RESENDING = "resending "


def queue_was_lost(settings: Settings) -> bool:
    """Whether the broker's queue may have lost messages since it was last marked whole: its
    marker is absent, or holds a resubmission's token (not marked whole after it). False when
    there is no Redis broker, or when it cannot be reached (the next sweep asks again)."""
    client = broker_client(settings)
    if client is None:
        return False
    try:
        value = client.get(MARKER_KEY)
    except redis.RedisError as exc:
        log.warning("could not read the broker's queue marker: %s", exc)
        return False
    finally:
        client.close()
    if value is None:
        return True
    text = value.decode(errors="replace") if isinstance(value, bytes) else str(value)
    return text.startswith(RESENDING)


def begin_resend(settings: Settings) -> str | None:
    """Write a new token in the marker (before the pending matches are read and sent) and
    return it, for :func:`mark_queue`; None when there is no Redis broker or it cannot be
    reached (the queue is then not marked whole: the next sweep resubmits again)."""
    client = broker_client(settings)
    if client is None:
        return None
    token = f"{RESENDING}{utcnow().isoformat()} {uuid.uuid4().hex}"
    try:
        client.set(MARKER_KEY, token)
    except redis.RedisError as exc:
        log.warning("could not write the broker's queue marker: %s", exc)
        return None
    finally:
        client.close()
    return token


def mark_queue(settings: Settings, token: str | None) -> bool:
    """Mark the queue whole (after every pending match was resubmitted), only if the marker
    still holds ``token`` (:func:`begin_resend`): a broker that lost its data meanwhile no
    longer has it. Whether it was marked; a failure is logged (the next sweep finds the queue
    lost and resubmits again, which is harmless)."""
    client = broker_client(settings)
    if client is None or token is None:
        return False
    try:
        with client.pipeline() as pipe:
            pipe.watch(MARKER_KEY)  # type: ignore[no-untyped-call]
            if pipe.get(MARKER_KEY) != token.encode():
                log.warning(
                    "the broker's queue marker changed while pending matches were resubmitted"
                    " (its data lost meanwhile, or another sweep resubmitting): not marked"
                )
                return False
            pipe.multi()
            pipe.set(MARKER_KEY, utcnow().isoformat())
            pipe.execute()
        return True
    except redis.WatchError:
        log.warning("the broker's queue marker changed while it was marked: not marked")
        return False
    except redis.RedisError as exc:
        log.warning("could not set the broker's queue marker: %s", exc)
        return False
    finally:
        client.close()
