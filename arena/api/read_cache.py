"""A short-lived cache of public reads, for an arena whose pages many people watch at once.

Off unless ``ARENA_READ_CACHE_MS`` is set above 0. Then the answer to an anonymous ``GET`` of a
public resource (the views decorated with :func:`public_read`: lists and details of bots,
matches, ratings, the ladder, SPRT tests and the tournament list) is kept for that many
milliseconds and served as is to every request for the same path and query meanwhile,
gzipped once. So such a read shows the arena as
it was at most that long ago; a change made through this API process (any request other than
``GET``, ``HEAD`` or ``OPTIONS``) empties the cache, so its own writes show at once. What workers
record (a match finished) and what other API processes change shows within the time.

It holds at most 2,048 URLs and 32 MB of bodies per process (the least recently read go
first). Only ``200`` answers are kept, never an error; a request with ``Authorization`` (whose
answer may show its owner more) neither reads nor fills it. ``benchmarks/bench_load.py``
measures what it saves under load (``--read-cache-ms``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import ParamSpec

from flask import Response, request

from arena.api.context import arena_context

__all__ = ["forget_on_write", "public_read"]

P = ParamSpec("P")

_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Headers the cache sets itself on a hit.
_OWN_HEADERS = frozenset({"Content-Type", "Content-Length", "Content-Encoding"})


def public_read(view: Callable[P, Response]) -> Callable[P, Response]:
    """Serve the view's ``200`` JSON answers from the app's
    :class:`~arena.api.context.ReadCache` (see the module docstring)."""

    @wraps(view)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Response:
        cache = arena_context().reads
        if not cache.enabled or request.method != "GET" or "Authorization" in request.headers:
            return view(*args, **kwargs)
        key = request.full_path
        entry = cache.get(key)
        if entry is None:
            generation = cache.generation()
            response = view(*args, **kwargs)
            if (
                response.status_code != 200
                or response.mimetype != "application/json"
                or response.direct_passthrough
                or "Content-Encoding" in response.headers
                or "ETag" in response.headers  # answered with 304s already
            ):
                return response
            headers = tuple(
                (name, value)
                for name, value in response.headers.items()
                if name not in _OWN_HEADERS
            )
            entry = cache.put(key, response.get_data(), headers, generation)
        use_gzip = entry.gzipped is not None and request.accept_encodings["gzip"] > 0
        response = Response(entry.gzipped if use_gzip else entry.body, mimetype="application/json")
        response.headers.extend(entry.headers)
        if use_gzip:
            response.headers["Content-Encoding"] = "gzip"
        response.vary.add("Accept-Encoding")
        return response

    return wrapper


def forget_on_write(response: Response) -> Response:
    """An ``after_request`` hook: any request that may have written empties the cache."""
    if request.method not in _SAFE_METHODS:
        arena_context().reads.forget()
    return response
