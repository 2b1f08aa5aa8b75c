"""Small HTTP helpers shared by the views: JSON bodies, query parameters, ids, caching.

* :func:`json_response` encodes with msgspec (fast, and datetimes come out as RFC 3339).
* ``query_*`` parse query parameters or raise a 422 problem naming the parameter; a parameter
  given with an empty value (``?status=``) is refused like any other bad value, never read as
  absent.
* :class:`IdConverter` (``<id("bot"):bot_id>``) takes any path segment and lets through only
  ids a database can hold: anything else is a 404 that says what is wrong with it (``0``,
  ``-1`` or ``870503.0`` are not ids; ``99999999999999999999`` is no bot), and the database
  never sees the number.
* :func:`cached` answers ``If-None-Match`` with 304 and marks immutable resources.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
from flask import Response, request
from werkzeug.routing import BaseConverter, Map

from arena.api.models import MAX_ID
from arena.api.problems import FieldError, NoSuchResource, unprocessable

__all__ = [
    "IMMUTABLE",
    "IdConverter",
    "cached",
    "json_response",
    "query_bool",
    "query_choice",
    "query_datetime",
    "query_int",
]

#: Cache-Control of resources that never change (finished matches' replays).
IMMUTABLE = "public, max-age=31536000, immutable"
#: Bodies from this size on are sent gzipped to clients that accept it.
GZIP_MIN_SIZE = 1024
_encoder = msgspec.json.Encoder()
_INTEGER = re.compile(r"[+-]?[0-9]+")


class IdConverter(BaseConverter):
    """A database id in a path, for resources of kind ``what`` (``<id("bot"):bot_id>``).

    It matches any segment, so that what is not an id gets an answer saying so instead of
    the bare "no resource at ..." of an unknown path: ASCII digits from 1 to ``MAX_ID`` are an
    id; more digits than any id has name a resource that does not exist; anything else (``0``,
    ``-1``, ``870503.0``, ``1e3``) is not an id. Both are 404 (:class:`NoSuchResource`).

    >>> converter = IdConverter(Map(), "bot")
    >>> converter.to_python("0042")
    42
    >>> converter.to_python("870503.0")
    Traceback (most recent call last):
    ...
    arena.api.problems.NoSuchResource: 404 Not Found: bot ids are whole numbers from 1 to \
2147483647: '870503.0' is not one
    """

    regex = "[^/]+"
    part_isolating = True

    def __init__(self, url_map: Map, what: str = "resource") -> None:
        super().__init__(url_map)
        self.what = what

    def to_python(self, value: str) -> int:
        if value.isascii() and value.isdigit():
            number = int(value)
            if 1 <= number <= MAX_ID:
                return number
            if number > MAX_ID:
                raise NoSuchResource(f"{self.what} {number} does not exist")
        raise NoSuchResource(
            f"{self.what} ids are whole numbers from 1 to {MAX_ID}: {value!r} is not one"
        )

    def to_url(self, value: object) -> str:
        return str(int(value))  # type: ignore[call-overload]


def encode(data: Any) -> bytes:
    return _encoder.encode(data)


def json_response(
    data: Any, status: int = 200, *, headers: dict[str, str] | None = None
) -> Response:
    """``data`` as an ``application/json`` response."""
    response = Response(_encoder.encode(data), status=status, mimetype="application/json")
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def gzipped(body: bytes) -> bytes | None:
    """The gzip form of a body worth compressing (None for small ones)."""
    return gzip.compress(body, 6, mtime=0) if len(body) >= GZIP_MIN_SIZE else None


def cached(
    body: bytes, etag: str, *, immutable: bool, gzipped_body: bytes | None = None
) -> Response:
    """A JSON response with a (weak) ETag; 304 when the client already has it.

    With ``gzipped_body`` (precomputed, e.g. for a cached replay) a client accepting gzip gets
    it as is, so the body is not compressed again on every request.
    """
    use_gzip = gzipped_body is not None and request.accept_encodings["gzip"] > 0
    response = Response(gzipped_body if use_gzip else body, mimetype="application/json")
    if use_gzip:
        response.headers["Content-Encoding"] = "gzip"
    response.vary.add("Accept-Encoding")
    response.set_etag(etag, weak=True)
    response.headers["Cache-Control"] = IMMUTABLE if immutable else "no-cache"
    if request.if_none_match.contains_weak(etag):
        response.status_code = 304
        response.set_data(b"")
    return response


def _bad(name: str, message: str) -> Exception:
    return unprocessable(
        f"query parameter {name!r}: {message}", [FieldError(f"query.{name}", message)]
    )


def _raw(name: str) -> str | None:
    """The parameter's value (None when absent); an empty value is refused, not taken for
    "absent": ``?status=`` is a mistake a client should hear about, not a silent default."""
    raw = request.args.get(name)
    if raw == "":
        raise _bad(name, "empty: give a value or leave the parameter out")
    return raw


def query_int(
    name: str, default: int | None = None, *, low: int = 0, high: int = MAX_ID
) -> int | None:
    """An integer parameter within ``[low, high]`` (``default`` when absent), in ASCII digits
    with an optional sign (``1.0``, ``1e3``, ``1_000`` or `` 1`` are not integers here)."""
    raw = _raw(name)
    if raw is None:
        return default
    if _INTEGER.fullmatch(raw) is None:
        raise _bad(name, f"{raw!r} is not an integer")
    # More digits than any bound has (and never thousands: int() refuses those) is out of range.
    value = int(raw) if len(raw) <= 40 else high + 1
    if not low <= value <= high:
        raise _bad(name, f"must be between {low} and {high}")
    return value


def query_choice(name: str, choices: Sequence[str], default: str | None = None) -> str | None:
    """One of ``choices`` (``default`` when absent)."""
    raw = _raw(name)
    if raw is None:
        return default
    if raw not in choices:
        raise _bad(name, f"{raw!r} is not one of {', '.join(choices)}")
    return raw


def query_bool(name: str, default: bool = False) -> bool:
    """``true``/``false`` (also ``1``/``0``)."""
    raw = _raw(name)
    if raw is None:
        return default
    value = {"true": True, "1": True, "false": False, "0": False}.get(raw.lower())
    if value is None:
        raise _bad(name, f"{raw!r} is not true or false")
    return value


def query_datetime(name: str) -> datetime | None:
    """An RFC 3339 date-time (a date alone means its midnight, UTC; no offset means UTC)."""
    raw = _raw(name)
    if raw is None:
        return None
    # An unescaped "+" of an offset arrives as a space.
    for text in (raw, raw.replace(" ", "+")):
        try:
            value = datetime.fromisoformat(text.replace("Z", "+00:00"))
            if value.tzinfo is None:
                value = value.replace(tzinfo=UTC)
            return value.astimezone(UTC)
        except (ValueError, OverflowError):
            continue
    raise _bad(name, f"{raw!r} is not an RFC 3339 date-time")


def query_text(name: str, *, max_length: int = 200) -> str | None:
    """A free-text parameter (``None`` when absent)."""
    raw = _raw(name)
    if raw is None:
        return None
    if len(raw) > max_length:
        raise _bad(name, f"longer than {max_length} characters")
    return raw
