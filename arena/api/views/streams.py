"""The live streams (``text/event-stream``): a match's steps, a tournament's and the ladder's
events. The contract is docs/STREAMS.md; the events come from :mod:`arena.live`.

Errors before a stream starts are problem+json like the rest of the API: 404 for an unknown
match or tournament, 401/403 for a seat view without the right token, 503 when the process
already serves ``ARENA_MAX_STREAMS`` streams.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request

from arena.api.auth import current_principal, require_authenticated
from arena.api.context import arena_context
from arena.api.http import query_choice
from arena.api.problems import ProblemError, forbidden
from arena.live.follow import follow_match, parse_last_event_id
from arena.live.hub import LiveHub
from arena.live.outbox import OutboxTail, follow_outbox, ladder_events, tournament_events
from arena.live.sse import HEADERS, RETRY, sse_event
from arena.reading.embargo import match_deals_public
from arena.reading.queries import matches as match_queries
from arena.reading.queries.tournaments import tournament_state
from arena.reading.replay import load_record
from arena.states import MatchStatus
from arena.web.replay_steps import build_replay

__all__ = ["LIVE", "LiveServices", "bp"]

bp = Blueprint("streams", __name__, url_prefix="/api/v1")

#: Where the app keeps its :class:`LiveServices` (``app.extensions``).
LIVE = "gin_arena.live"
#: Seconds between ``: ping`` comments on an idle stream.
PING_SECONDS = 15.0
_SETTLED = {s.value for s in MatchStatus} - {MatchStatus.PENDING.value, MatchStatus.RUNNING.value}


class LiveServices:
    """What the streams of one app share: the hub of match feeds, the outbox tail, and the
    count of open streams (at most ``limit``)."""

    def __init__(self, hub: LiveHub, tail: OutboxTail, limit: int) -> None:
        self.hub = hub
        self.tail = tail
        self.limit = limit
        self.ping_seconds = PING_SECONDS
        self._open = 0
        self._lock = threading.Lock()

    @property
    def open_streams(self) -> int:
        return self._open

    def admit(self) -> None:
        """Count a new stream (503 when the limit is reached)."""
        with self._lock:
            if self._open >= self.limit:
                raise ProblemError(
                    503,
                    f"this server holds its limit of {self.limit} open streams"
                    " (ARENA_MAX_STREAMS); try again shortly",
                    kind="too-many-streams",
                    headers={"Retry-After": "5"},
                )
            self._open += 1

    def leave(self) -> None:
        with self._lock:
            self._open -= 1

    def close(self) -> None:
        self.tail.close()
        self.hub.close()


def live_services(app: Flask | None = None) -> LiveServices:
    services: LiveServices = (app or current_app).extensions[LIVE]
    return services


def _stream(chunks: Iterator[bytes], services: LiveServices) -> Response:
    services.admit()

    def counted() -> Iterator[bytes]:
        try:
            yield from chunks
        finally:
            services.leave()

    response = Response(counted(), mimetype="text/event-stream")
    response.headers.update(HEADERS)
    return response


def _seat_view(bot_ids: dict[str, int]) -> str:
    """The view asked for: ``public``, or a seat for its bot's owner or the organiser."""
    seat = query_choice("seat", ("a", "b"))
    if seat is None:
        return "public"
    principal = require_authenticated()
    if not (principal.is_organiser or principal.owns(bot_ids[seat])):
        raise forbidden(f"seat {seat}'s view is for the owner of bot {bot_ids[seat]} only")
    return seat


def _match_hello(detail: dict[str, Any], view: str) -> Callable[[int | None, str], bytes]:
    versions = detail.get("versions") or {}
    rules = detail["rules"]

    def hello(attempt: int | None, status: str) -> bytes:
        bots = {
            seat: {
                "id": detail["bots"][seat]["id"],
                "name": detail["bots"][seat]["name"],
                "version": versions.get(seat),
            }
            for seat in ("a", "b")
        }
        return sse_event(
            "match",
            {
                "id": detail["id"],
                "status": status,
                "names": {seat: bots[seat]["name"] for seat in ("a", "b")},
                "bots": bots,
                "rules": rules,
                "attempt": attempt if attempt is not None else detail["attempt"] or None,
                "view": view,
            },
        )

    return hello


def _ending(db: Any, match_id: int) -> bytes | None:
    """The end of a settled match's stream (``replay`` when it has one, then ``end``); None
    while it is open."""
    if match_queries.match_state(db, match_id)["status"] not in _SETTLED:
        return None
    detail = match_queries.match_detail(db, match_id)
    status = detail["status"]
    out = b""
    if status == MatchStatus.FINISHED.value and match_deals_public(db, detail):
        record = load_record(db, match_id)
        names = {seat: detail["bots"][seat]["name"] for seat in ("a", "b")}
        out += sse_event("replay", build_replay(record, names))
    out += sse_event(
        "end",
        {
            "status": status,
            "winner": detail["winner"],
            "score": detail["games_won"],
            "forfeit": detail["forfeit"],
            "links": {
                "api": f"/api/v1/matches/{match_id}",
                "replay": f"/api/v1/matches/{match_id}/replay",
                "page": f"/matches/{match_id}",
            },
        },
    )
    return out


@bp.get("/matches/<id('match'):match_id>/events")
def match_events(match_id: int) -> Response:
    context = arena_context()
    services = live_services()
    db = context.db
    detail = match_queries.match_detail(db, match_id)
    view = _seat_view({seat: detail["bots"][seat]["id"] for seat in ("a", "b")})
    last = parse_last_event_id(request.headers.get("Last-Event-ID"))
    hello = _match_hello(detail, view)
    status = detail["status"]
    if status in _SETTLED:
        ending = _ending(db, match_id) or b""
        return _stream(iter([RETRY + hello(detail["attempt"] or None, status) + ending]), services)
    chunks = follow_match(
        services.hub,
        match_id,
        view,
        last,
        status=status,
        hello=hello,
        settled=lambda: _ending(db, match_id),
        ping_seconds=services.ping_seconds,
    )
    return _stream(chunks, services)


def _last_outbox_id() -> int | None:
    raw = request.headers.get("Last-Event-ID", "").strip()
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 18 else None


@bp.get("/tournaments/<id('tournament'):tournament_id>/events")
def tournament_stream(tournament_id: int) -> Response:
    context = arena_context()
    services = live_services()
    tournament_state(context.db, tournament_id, ())  # 404 for no such tournament
    chunks = follow_outbox(
        services.tail,
        tournament_events(tournament_id),
        _last_outbox_id(),
        tournament_id=tournament_id,
        ping_seconds=services.ping_seconds,
    )
    return _stream(chunks, services)


@bp.get("/ladder/events")
def ladder_stream() -> Response:
    services = live_services()
    current_principal()
    chunks = follow_outbox(
        services.tail, ladder_events, _last_outbox_id(), ping_seconds=services.ping_seconds
    )
    return _stream(chunks, services)
