"""Encoded bodies of a tournament's derived resources, reused while its fingerprint holds.

A tournament's detail, bracket and standings are computed by replanning the whole event from
its results, which costs more the bigger the event; its fingerprint
(:func:`arena.reading.queries.versions.tournament_version`, one cheap statement) changes
whenever they can, so a body computed for a fingerprint is served again (with an ETag) until it
changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from flask import Response

from arena.api.context import CachedBody, arena_context
from arena.api.http import cached, encode, gzipped
from arena.reading.queries.versions import tournament_version

__all__ = ["cached_tournament_view"]


def cached_tournament_view(kind: str, tournament_id: int, build: Callable[[], Any]) -> Response:
    """The body ``build()`` makes for this tournament, reused while its fingerprint holds
    (:class:`~arena.errors.NotFoundError` if there is no such tournament)."""
    context = arena_context()
    version = tournament_version(context.db, tournament_id)
    key = (kind, tournament_id, version)
    hit = context.tournaments.get(key)
    if hit is None:
        body = encode(build())
        digest = hashlib.sha256(version.encode()).hexdigest()[:16]
        hit = CachedBody(f"{kind}-{tournament_id}-{digest}", body, gzipped(body))
        context.tournaments.put(key, hit)
    return cached(hit.body, hit.etag, immutable=False, gzipped_body=hit.gzipped)
