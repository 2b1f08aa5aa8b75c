"""``/api/v1/matches``: the list (filters, keyset pagination), one match, and its replay.

A replay is the full record (omniscient), or with ``?seat=a|b`` what that bot was sent and
answered at each step (:mod:`arena.reading.seat_replay`). A finished match's replay never changes,
so it carries an ETag and a year-long immutable ``Cache-Control``, and its encoded body is kept in
a small in-process cache. Seeds and replays stay hidden while they could help a bot still to
play those deals (:mod:`arena.reading.embargo`).
"""

from __future__ import annotations

from flask import Blueprint, Response

from arena.api.context import CachedBody, arena_context
from arena.api.http import (
    cached,
    encode,
    gzipped,
    json_response,
    query_choice,
    query_datetime,
    query_int,
)
from arena.api.problems import ProblemError, conflict
from arena.api.read_cache import public_read
from arena.playing.stored import RecordFormatError
from arena.reading.embargo import match_deals_public
from arena.reading.queries import bot_versions as version_queries
from arena.reading.queries import matches as match_queries
from arena.reading.queries.records import RecordNotReadyError
from arena.reading.replay import load_record, load_stored_json
from arena.reading.seat_replay import SeatReplayError, seat_replay
from arena.states import MatchStatus

__all__ = ["bp"]

bp = Blueprint("matches", __name__, url_prefix="/api/v1/matches")


def _public_error(error: str | None) -> str | None:
    """The first line of an internal error (the traceback stays in the database)."""
    return error.splitlines()[0][:500] if error else error


@bp.get("")
@public_read
def index() -> Response:
    db = arena_context().db
    limit = query_int("limit", 50, low=1, high=200) or 50
    page, cursor = match_queries.list_matches(
        db,
        tournament_id=query_int("tournament_id", None, low=1),
        bot_id=query_int("bot_id", None, low=1),
        status=query_choice("status", [s.value for s in MatchStatus]),
        since=query_datetime("since"),
        until=query_datetime("until"),
        before=query_int("before", None, low=1),
        limit=limit,
    )
    return json_response({"items": page, "next_before": cursor})


@bp.get("/<id('match'):match_id>")
@public_read
def read(match_id: int) -> Response:
    detail = match_queries.match_detail(arena_context().db, match_id)
    detail["error"] = _public_error(detail["error"])
    if not match_deals_public(arena_context().db, detail):
        detail["seed"] = None
    return json_response(detail)


@bp.get("/<id('match'):match_id>/replay")
def replay(match_id: int) -> Response:
    seat = query_choice("seat", ("a", "b"))
    game = query_int("game", None, low=0, high=100)
    context = arena_context()
    detail = match_queries.match_state(context.db, match_id)
    if detail["status"] != MatchStatus.FINISHED.value:
        raise conflict(
            f"match {match_id} is {detail['status']}: only a finished match has a replay",
            "replay-not-available",
        )
    if not match_deals_public(context.db, detail):
        raise conflict(
            f"the replay of match {match_id} is withheld until the match on the same deals"
            " (its duplicate twin) has been played",
            "replay-embargoed",
        )
    key = (match_id, seat, game)
    hit = context.replays.get(key)
    if hit is None:
        try:
            if seat is None:
                stored = load_stored_json(context.db, match_id)
                digest = str(stored["digest"])
                body = {"id": match_id, **stored}
                if game is not None:
                    body["games"] = [
                        g for g in body["games"] if isinstance(g, dict) and g.get("index") == game
                    ]
            else:
                record = load_record(context.db, match_id)
                digest = record.digest
                body = {"id": match_id, **seat_replay(record, seat, game=game)}
            body["versions"] = version_queries.replay_versions(context.db, match_id)
        except RecordNotReadyError as exc:  # pragma: no cover - finished implies a result
            raise conflict(str(exc), "replay-not-available") from None
        except RecordFormatError as exc:
            raise ProblemError(
                500, f"the stored record cannot be read: {exc}", kind="corrupt-record"
            ) from None
        except SeatReplayError as exc:
            raise ProblemError(
                500, f"the stored record does not replay: {exc}", kind="corrupt-record"
            ) from None
        etag = f"{digest[:40]}-{seat or 'all'}-{'all' if game is None else game}"
        encoded = encode(body)
        hit = CachedBody(etag, encoded, gzipped(encoded))
        context.replays.put(key, hit)
    return cached(hit.body, hit.etag, immutable=True, gzipped_body=hit.gzipped)
