"""``/api/v1/matches``: the list (filters, keyset pagination), one match, and its replay.

A replay is the full record (omniscient), or with ``?seat=a|b`` what that bot was sent and
answered at each step (:mod:`arena.seat_replay`). A finished match's replay never changes, so
it carries an ETag and a year-long immutable ``Cache-Control``, and its encoded body is kept in
a small in-process cache. Seeds and replays stay hidden while they could help a bot still to
play those deals (:mod:`arena.embargo`).
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response

from arena import queries
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
from arena.api.problems import ProblemError, conflict, not_found
from arena.db.models import MatchStatus
from arena.embargo import match_deals_public, match_state
from arena.replay import MatchNotFoundError
from arena.seat_replay import SeatReplayError, seat_replay

__all__ = ["bp"]

bp = Blueprint("matches", __name__, url_prefix="/api/v1/matches")


def _public_error(error: str | None) -> str | None:
    """The first line of an internal error (the traceback stays in the database)."""
    return error.splitlines()[0][:500] if error else error


@bp.get("")
def index() -> Response:
    db = arena_context().db
    limit = query_int("limit", 50, low=1, high=200) or 50
    page, cursor = queries.list_matches(
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


def _match(match_id: int) -> dict[str, Any]:
    detail = queries.match_detail(arena_context().db, match_id)
    if detail is None:
        raise not_found(f"match {match_id}")
    return detail


@bp.get("/<id('match'):match_id>")
def read(match_id: int) -> Response:
    detail = _match(match_id)
    detail["error"] = _public_error(detail["error"])
    if not match_deals_public(arena_context().db, detail):
        detail["seed"] = None
    return json_response(detail)


@bp.get("/<id('match'):match_id>/replay")
def replay(match_id: int) -> Response:
    seat = query_choice("seat", ("a", "b"))
    game = query_int("game", None, low=0, high=100)
    context = arena_context()
    detail = match_state(context.db, match_id)
    if detail is None:
        raise not_found(f"match {match_id}")
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
            record = queries.match_replay(context.db, match_id)
        except MatchNotFoundError as exc:  # pragma: no cover - finished implies a result
            raise conflict(str(exc), "replay-not-available") from None
        etag = f"{record['digest'][:40]}-{seat or 'all'}-{'all' if game is None else game}"
        if seat is None:
            body = {"id": match_id, **record}
            if game is not None:
                body["games"] = [g for g in record["games"] if g["index"] == game]
        else:
            try:
                body = {"id": match_id, **seat_replay(record, seat, game=game)}
            except SeatReplayError as exc:
                raise ProblemError(
                    500, f"the stored record does not replay: {exc}", kind="corrupt-record"
                ) from None
        encoded = encode(body)
        hit = CachedBody(etag, encoded, gzipped(encoded))
        context.replays.put(key, hit)
    return cached(hit.body, hit.etag, immutable=True, gzipped_body=hit.gzipped)
