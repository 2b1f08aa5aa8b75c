"""``/api/v1/tournaments``: the organiser creates, starts and cancels; everyone reads the
tournament, its bracket and its standings (seeds withheld until it is over, see
:mod:`arena.reading.embargo`). A tournament that does not exist is the one 404 of
:class:`arena.errors.NotFoundError`, raised by the queries and services."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, url_for

from arena.api.auth import require_organiser
from arena.api.context import arena_context
from arena.api.http import json_response, query_choice, query_int
from arena.api.models import TournamentCreate, decode_body
from arena.api.problems import FieldError, conflict, unprocessable
from arena.api.read_cache import public_read
from arena.api.versions import cached_tournament_view
from arena.api.views.rules import rules_from
from arena.reading.embargo import (
    redact_bracket,
    tournament_seed_public,
    tournament_seed_public_by_id,
)
from arena.reading.queries import tournaments as tournament_queries
from arena.services.tournaments import (
    TournamentStateError,
    cancel_tournament,
    create_tournament,
    start_tournament,
)
from arena.states import TournamentStatus
from arena.tournaments import FormatError

__all__ = ["bp"]

bp = Blueprint("tournaments", __name__, url_prefix="/api/v1/tournaments")


def _detail(tournament_id: int) -> dict[str, Any]:
    detail = tournament_queries.tournament_detail(arena_context().db, tournament_id)
    if not tournament_seed_public(detail):
        detail["seed"] = None
    return detail


@bp.post("")
def create() -> Response:
    require_organiser()
    body = decode_body(TournamentCreate)
    rules = rules_from(body.rules)
    participants = None if body.participants == "all_active" else body.participants
    try:
        tournament_id = create_tournament(
            arena_context().db,
            name=body.name,
            format_name=body.format,
            options=body.options,
            bot_ids=participants,
            rules=rules,
            seed=body.seed,
            rated=body.rated,
        )
    except FormatError as exc:
        raise unprocessable(str(exc), [FieldError("options", str(exc))]) from None
    except ValueError as exc:
        raise unprocessable(str(exc), [FieldError("participants", str(exc))]) from None
    return json_response(
        _detail(tournament_id),
        201,
        headers={"Location": url_for("tournaments.read", tournament_id=tournament_id)},
    )


@bp.get("")
@public_read
def index() -> Response:
    status = query_choice("status", [s.value for s in TournamentStatus])
    limit = query_int("limit", 50, low=1, high=200) or 50
    before = query_int("before", None, low=1)
    rows = tournament_queries.tournament_list(
        arena_context().db, status=status, limit=limit + 1, before=before
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return json_response({"items": rows, "next_before": rows[-1]["id"] if more else None})


@bp.get("/<id('tournament'):tournament_id>")
def read(tournament_id: int) -> Response:
    return cached_tournament_view("detail", tournament_id, lambda: _detail(tournament_id))


@bp.post("/<id('tournament'):tournament_id>/start")
def start(tournament_id: int) -> Response:
    require_organiser()
    context = arena_context()
    try:
        report = start_tournament(context.db, tournament_id, context.executor.submit)
    except TournamentStateError as exc:
        raise conflict(str(exc), "tournament-state") from None
    return json_response({"scheduled": report.scheduled, "tournament": _detail(tournament_id)})


@bp.post("/<id('tournament'):tournament_id>/cancel")
def cancel(tournament_id: int) -> Response:
    require_organiser()
    try:
        cancelled = cancel_tournament(arena_context().db, tournament_id)
    except TournamentStateError as exc:
        raise conflict(str(exc), "tournament-state") from None
    return json_response({"cancelled": cancelled, "tournament": _detail(tournament_id)})


def _as_id(value: str | None) -> int | None:
    return None if value is None else int(value)


def _pairing(p: dict[str, Any]) -> dict[str, Any]:
    """Participant ids as integers (the planner keeps them as text)."""
    result = p.get("result")
    if result is not None:
        result = {
            **result,
            "winner": _as_id(result["winner"]),
            "forfeited": [int(x) for x in result["forfeited"]],
        }
    return {
        **p,
        "winner": _as_id(p.get("winner")),
        "result": result,
        "matches": [{**m, "seats": [int(s) for s in m["seats"]]} for m in p["matches"]],
    }


@bp.get("/<id('tournament'):tournament_id>/bracket")
def bracket(tournament_id: int) -> Response:
    return cached_tournament_view("bracket", tournament_id, lambda: _bracket(tournament_id))


def _bracket(tournament_id: int) -> dict[str, Any]:
    db = arena_context().db
    public = tournament_seed_public_by_id(db, tournament_id)
    data = tournament_queries.tournament_bracket(db, tournament_id)
    data["sections"] = [
        {
            **section,
            "rounds": [
                {**r, "pairings": [_pairing(p) for p in r["pairings"]]} for r in section["rounds"]
            ],
        }
        for section in data["sections"]
    ]
    if not public:
        redact_bracket(data)
    return {"tournament_id": tournament_id, **data}


@bp.get("/<id('tournament'):tournament_id>/standings")
def standings(tournament_id: int) -> Response:
    return cached_tournament_view("standings", tournament_id, lambda: _standings(tournament_id))


def _standings(tournament_id: int) -> dict[str, Any]:
    rows = tournament_queries.tournament_standings(arena_context().db, tournament_id)
    return {"tournament_id": tournament_id, "items": rows}
