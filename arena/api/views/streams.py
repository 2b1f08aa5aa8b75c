"""The live streams (``text/event-stream``): a match's steps, a tournament's and the ladder's
events. The contract is docs/STREAMS.md; the events come from :mod:`arena.live`.

Errors before a stream starts are problem+json like the rest of the API: 404 for an unknown
match or tournament, 401/403 for a seat view without the right token, 503 when the process
already serves ``ARENA_MAX_STREAMS`` streams.

Under waitress (``gin-arena serve``) a match stream's connection goes, once the stream has its
match's feed, to the process's one writer thread (:mod:`arena.live.handoff`,
:mod:`arena.live.writer`); the tournament and ladder streams, and every stream served another
way, are written from the thread serving the request.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request

from arena.api.auth import current_principal, require_authenticated
from arena.api.context import arena_context
from arena.api.http import query_choice
from arena.api.problems import ProblemError, forbidden
from arena.live.feed import MatchFeed
from arena.live.follow import follow_match, parse_last_event_id
from arena.live.handoff import waitress_handoff
from arena.live.hub import LiveHub
from arena.live.outbox import OutboxTail, follow_outbox, ladder_events, tournament_events
from arena.live.sse import HEADERS, RETRY, sse_event
from arena.live.writer import TICK_SECONDS, StreamWriter, Subscriber
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
#: Match streams set up at once (the rest wait their turn, asleep). Setting one up is work
#: under the interpreter lock (a database read, the viewer's check, the ``match`` event); when
#: hundreds of clients join at once (a match ends and its spectators move to the next) and
#: each does it in its own thread, the lock is shared among hundreds of threads and the one
#: that takes the matches' events in (the hub's) gets so few turns that every running
#: match's stream falls seconds behind. A few at a time, the joins take as long in all, and
#: the events keep flowing (``benchmarks/bench_streams.py``).
JOINING = 4
#: How long a settled match's stream ending is kept (:class:`Endings`).
ENDING_SECONDS = 60.0
_SETTLED = {s.value for s in MatchStatus} - {MatchStatus.PENDING.value, MatchStatus.RUNNING.value}


class Lease:
    """One stream's place under the limit, given back once (by the iterator serving the
    stream, or by the writer it was handed to)."""

    def __init__(self, services: LiveServices) -> None:
        self._services = services
        self._held = True
        self.handed_off = False
        self._lock = threading.Lock()

    def release(self) -> None:
        with self._lock:
            held, self._held = self._held, False
        if held:
            self._services.leave()


class LiveServices:
    """What the streams of one app share: the hub of match feeds, the outbox tail, the writer
    of handed-off streams, and the count of open streams (at most ``limit``)."""

    def __init__(self, hub: LiveHub, tail: OutboxTail, limit: int) -> None:
        self.hub = hub
        self.tail = tail
        self.limit = limit
        self.ping_seconds = PING_SECONDS
        self.writer = StreamWriter(TICK_SECONDS)
        #: Held while a match stream is being set up (its match read, its viewer checked, its
        #: ``match`` event made): at most :data:`JOINING` at once, see there.
        self.joining = threading.BoundedSemaphore(JOINING)
        self.endings = Endings()
        self._open = 0
        self._lock = threading.Lock()

    @property
    def open_streams(self) -> int:
        return self._open

    def admit(self) -> Lease:
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
        return Lease(self)

    def leave(self) -> None:
        with self._lock:
            self._open -= 1

    def close(self) -> None:
        self.tail.close()
        self.writer.close()
        self.hub.close()


def live_services(app: Flask | None = None) -> LiveServices:
    services: LiveServices = (app or current_app).extensions[LIVE]
    return services


class _Counted:
    """A stream's chunks, giving its place back when they end or the server closes them
    (even unstarted), unless the stream was handed off (then the writer gives it back)."""

    def __init__(self, chunks: Iterator[bytes], lease: Lease) -> None:
        self._chunks = chunks
        self._lease = lease

    def __iter__(self) -> _Counted:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        if not self._lease.handed_off:
            self._lease.release()


def _stream(
    chunks: Iterator[bytes], services: LiveServices, lease: Lease | None = None
) -> Response:
    response = Response(_Counted(chunks, lease or services.admit()), mimetype="text/event-stream")
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


class Endings:
    """The endings of settled matches' streams, as made last (:func:`_ending`), for
    :data:`ENDING_SECONDS`: a crowd that arrives as a match ends (or reconnects then) would
    otherwise build the same replay once per client. Only an ending that will not change is
    kept: one with the replay, or one of a match that has none (void or cancelled), not a
    finished match's whose deals are still embargoed (its twin is open)."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._kept: OrderedDict[int, tuple[float, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, db: Any, match_id: int) -> bytes | None:
        now = time.monotonic()
        with self._lock:
            kept = self._kept.get(match_id)
            if kept is not None and now - kept[0] < ENDING_SECONDS:
                return kept[1]
        made = _ending(db, match_id)
        if made is None:
            return None
        ending, final = made
        if final:
            with self._lock:
                self._kept[match_id] = (now, ending)
                self._kept.move_to_end(match_id)
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
        return ending


def _ending(db: Any, match_id: int) -> tuple[bytes, bool] | None:
    """The end of a settled match's stream (``replay`` when it has one, then ``end``), and
    whether it is final (it cannot change: see :class:`Endings`); None while it is open."""
    if match_queries.match_state(db, match_id)["status"] not in _SETTLED:
        return None
    detail = match_queries.match_detail(db, match_id)
    status = detail["status"]
    out = b""
    final = status != MatchStatus.FINISHED.value
    if not final and match_deals_public(db, detail):
        final = True
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
    return out, final


@bp.get("/matches/<id('match'):match_id>/events")
def match_events(match_id: int) -> Response:
    context = arena_context()
    services = live_services()
    db = context.db
    with services.joining:
        detail = match_queries.stream_head(db, match_id)
        view = _seat_view({seat: detail["bots"][seat]["id"] for seat in ("a", "b")})
        last = parse_last_event_id(request.headers.get("Last-Event-ID"))
        hello = _match_hello(detail, view)
        status = detail["status"]
        if status in _SETTLED:
            ending = services.endings.get(db, match_id) or b""
            first = RETRY + hello(detail["attempt"] or None, status) + ending
            return _stream(iter([first]), services)
    lease = services.admit()

    def settled() -> bytes | None:
        return services.endings.get(db, match_id)

    handoff = waitress_handoff(request.environ)

    def hand_off(feed: MatchFeed, last: tuple[int, int] | None) -> bool:
        if handoff is None:
            return False
        sock = handoff.take()
        if sock is None:
            return False
        lease.handed_off = True
        attempt, seq = last if last is not None else (feed.attempt, 0)
        services.writer.add(
            Subscriber(
                sock,
                handoff.chunked,
                feed,
                view,
                attempt,
                seq,
                hello,
                settled,
                lease.release,
                ping_seconds=services.ping_seconds,
            )
        )
        return True

    chunks = follow_match(
        services.hub,
        match_id,
        view,
        last,
        status=status,
        hello=hello,
        settled=settled,
        ping_seconds=services.ping_seconds,
        handoff=hand_off,
    )
    return _stream(chunks, services, lease)


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
