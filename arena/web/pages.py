"""The page views: leaderboard, bots, matches (with the replay viewer), tournaments and the
rules (``docs/RULES.md``, see :mod:`arena.web.rules_doc`).

Each view reads through :mod:`arena.reading.queries` (nothing here writes), shapes the result for
its template and renders it. A match's deals (its seed, replay and fault details) stay hidden while
a match on the same deals is still to be played, as in the API (:mod:`arena.reading.embargo`).
Unknown ids give the 404 page (every query's :class:`arena.errors.NotFoundError`, mapped in one
place; what is not an id at all, or an id beyond any database's, a 404 saying so, before the
database is asked), bad query parameters the 400 page, and any
failure a 500 page without internals (the exception goes to the log). A bot's owner contact
and URL are shown only to a request bearing its owner token or the organiser token, as on the
API (:mod:`arena.api.owners`); everyone else sees the owner's public name.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Blueprint, Response, abort, make_response, render_template, request
from flask.blueprints import BlueprintSetupState
from werkzeug.exceptions import HTTPException, InternalServerError, NotFound

from arena.api.auth import ANONYMOUS, Principal, current_principal
from arena.api.http import IdConverter
from arena.api.models import MAX_ID
from arena.api.owners import with_owner_view
from arena.api.problems import ProblemError, database_unavailable
from arena.db.errors import DatabaseUnavailableError
from arena.errors import NotFoundError
from arena.playing.stored import RecordFormatError
from arena.reading.embargo import match_deals_public, redact_bracket
from arena.reading.queries import bots as bot_queries
from arena.reading.queries import matches as match_queries
from arena.reading.queries import tournaments as tournament_queries
from arena.reading.queries.records import RecordNotReadyError
from arena.reading.replay import load_record
from arena.states import MatchStatus
from arena.web.context import database
from arena.web.health_panel import health_panel
from arena.web.ladder_panel import ladder_panel
from arena.web.live import api_path, live_viewer
from arena.web.present import HELPERS, rating_scale
from arena.web.replay_steps import build_replay
from arena.web.rules_doc import load_rules
from arena.web.versions_panel import versions_panel

__all__ = ["REFRESH_SECONDS", "bp", "error_page"]

log = logging.getLogger(__name__)

#: How often a live page (a running tournament or match) reloads itself without JavaScript
#: (with it, the page follows the event streams instead: :mod:`arena.web.live`).
REFRESH_SECONDS = 5

bp = Blueprint(
    "web", __name__, template_folder="templates", static_folder="static", static_url_path="/assets"
)


@bp.record_once
def _id_converter(state: BlueprintSetupState) -> None:
    """Before any route (recorded first): ``<id(...)>`` must be known to the app's map when the
    routes are added, also in an app that did not come from the app factory."""
    state.app.url_map.converters.setdefault("id", IdConverter)


@bp.context_processor
def _helpers() -> dict[str, Any]:
    return HELPERS


def error_page(error: HTTPException) -> tuple[str, int, dict[str, str]]:
    """The page for an HTTP error: its status, title and a plain explanation, nothing more (a
    503 says why, and keeps its ``Retry-After``)."""
    code = error.code or 500
    if code >= 500 and code != 503:
        message = "Something went wrong on our side. The error has been logged."
    else:
        message = error.description or ""
    headers = {k: v for k, v in error.get_headers() if k == "Retry-After"}
    page = render_template("web/error.html", code=code, title=error.name, message=message)
    return page, code, headers


@bp.errorhandler(Exception)
def _failed(error: Exception) -> tuple[str, int, dict[str, str]]:
    """Every error of a page view becomes a page (handled here, so an app-wide JSON handler
    for the API never answers a browser with problem+json)."""
    if isinstance(error, HTTPException):
        return error_page(error)
    if isinstance(error, NotFoundError):
        return error_page(NotFound(f"There is no {error.resource} {error.key}."))
    if isinstance(error, DatabaseUnavailableError):
        return error_page(database_unavailable(error))
    log.error("page %s failed", request.path, exc_info=error)
    return error_page(InternalServerError())


def _int_arg(name: str) -> int | None:
    """An id filter of a page (empty means none: the pages' forms send empty fields)."""
    raw = request.args.get(name)
    if raw in (None, ""):
        return None
    if not (raw.isascii() and raw.lstrip("-").isdigit()):
        abort(400, description=f"{name} must be a whole number, not {raw!r}.")
    if raw.startswith("-") or int(raw) < 1:
        abort(400, description=f"{name} must be positive.")
    if len(raw) > 12 or int(raw) > MAX_ID:
        abort(400, description=f"{name} must be at most {MAX_ID}, not {raw}.")
    return int(raw)


# --- leaderboard ----------------------------------------------------------------------------


@bp.get("/")
def leaderboard() -> str:
    db = database()
    everyone = request.args.get("all") == "1"
    rows, unrated = bot_queries.ratings_board(db, include_inactive=everyone)
    recent, _ = match_queries.list_matches(db, limit=10)
    return render_template(
        "web/leaderboard.html",
        rows=rows,
        unrated=unrated,
        scale=rating_scale(rows),
        everyone=everyone,
        matches=recent,
        tournaments=tournament_queries.tournament_list(db, limit=6),
        live_events=api_path("ladder/events"),
    )


# --- bots -----------------------------------------------------------------------------------


def _viewer() -> Principal:
    """Who is looking: anonymous for a browser, or whoever a bearer token names (the API's
    rules: a bearer token that is not valid is a 401 page, never a silent anonymous). Other
    schemes (a proxy's Basic authentication in front of the site) are not the arena's."""
    scheme = request.headers.get("Authorization", "").strip().partition(" ")[0]
    if scheme.lower() != "bearer":
        return ANONYMOUS
    try:
        return current_principal()
    except ProblemError as exc:
        abort(401, description=exc.detail)


@bp.get("/bots/<id('bot'):bot_id>")
def bot(bot_id: int) -> Response:
    db = database()
    detail = bot_queries.bot_detail(db, bot_id, history=100)
    shown = with_owner_view(detail, _viewer())
    recent, more = match_queries.list_matches(db, bot_id=bot_id, limit=20)
    response = make_response(
        render_template(
            "web/bot.html",
            bot=shown,
            stats=detail["statistics"],
            matches=recent,
            more=more,
            versions=versions_panel(db, bot_id),
            health=health_panel(db, bot_id),
            ladder=ladder_panel(db, bot_id),
        )
    )
    response.vary.add("Authorization")
    return response


# --- matches --------------------------------------------------------------------------------


@bp.get("/matches")
def matches() -> str:
    db = database()
    bot_id = _int_arg("bot")
    tournament_id = _int_arg("tournament")
    before = _int_arg("before")
    status = request.args.get("status") or None
    if status is not None and status not in {s.value for s in MatchStatus}:
        allowed = ", ".join(s.value for s in MatchStatus)
        abort(400, description=f"status must be one of {allowed}.")
    page, cursor = match_queries.list_matches(
        db, bot_id=bot_id, tournament_id=tournament_id, status=status, before=before, limit=50
    )
    filters = {"bot": bot_id, "tournament": tournament_id, "status": status}
    return render_template(
        "web/matches.html",
        matches=page,
        cursor=cursor,
        filters={k: v for k, v in filters.items() if v is not None},
        bot_name=_bot_name(bot_id),
        first_page=before is None,
    )


def _bot_name(bot_id: int | None) -> str | None:
    if bot_id is None:
        return None
    return bot_queries.bot_names(database(), [bot_id]).get(bot_id)


@bp.get("/matches/<id('match'):match_id>")
def match(match_id: int) -> str:
    db = database()
    detail = match_queries.match_detail(db, match_id)
    names = {seat: detail["bots"][seat]["name"] for seat in ("a", "b")}
    record: dict[str, Any] | None = None
    replay: dict[str, Any] | None = None
    # The deals (seed, replay, anything naming a card) stay secret while a match on the same
    # deals, its duplicate twin, is still to be played: they would help a bot in it.
    embargoed = not match_deals_public(db, detail)
    if embargoed:
        detail["seed"] = None
        detail["faults"] = [{**f, "detail": "", "fallback": None} for f in detail["faults"]]
    elif detail["status"] == MatchStatus.FINISHED.value:
        try:
            stored = load_record(db, match_id)
        except RecordNotReadyError:
            pass
        except RecordFormatError as exc:
            replay = {"error": str(exc)}
        else:
            record, replay = stored.to_dict(), build_replay(stored, names)
            replay["versions"] = {s: _version_text(v) for s, v in detail["versions"].items()}
            replay["seats"] = {s: api_path(f"matches/{match_id}/replay?seat={s}") for s in "ab"}
    live = detail["status"] in (MatchStatus.PENDING.value, MatchStatus.RUNNING.value)
    return render_template(
        "web/match.html",
        m=detail,
        games=_games(detail, record),
        unfinished=None if record is None else record.get("unfinished_game"),
        faults=_faults(detail["faults"], replay),
        misknocks=[] if record is None else record.get("misknocks", []),
        replay=replay,
        embargoed=embargoed and detail["status"] == MatchStatus.FINISHED.value,
        refresh=REFRESH_SECONDS if live else None,
        live=live_viewer(
            match_id, names, {s: _version_text(v) for s, v in detail["versions"].items()}
        )
        if live
        else None,
    )


def _version_text(version: Mapping[str, Any] | None) -> str | None:
    """How the replay viewer names the version a seat played (``v3 · 2.1.0``), or None."""
    if version is None:
        return None
    label = version["label"]
    return f"v{version['number']}" + ("" if label is None else f" · {label}")


def _games(detail: Mapping[str, Any], record: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The stored games with the record's bonuses (game, box) and hands won merged in."""
    extra = {g["index"]: g for g in (record or {}).get("games", [])}
    out = []
    for game in detail["games"]:
        more = extra.get(game["index"], {})
        out.append(
            {
                **game,
                "game_bonus": more.get("game_bonus"),
                "box_bonus": more.get("box_bonus"),
                "hands_won": more.get("hands_won"),
            }
        )
    return out


def _faults(faults: list[dict[str, Any]], replay: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Faults with the replay position where each happened (when the viewer has it)."""
    links = (replay or {}).get("fault_steps", {})
    return [{**f, "anchor": links.get(i)} for i, f in enumerate(faults)]


# --- tournaments ----------------------------------------------------------------------------


@bp.get("/tournaments")
def tournaments() -> str:
    db = database()
    status = request.args.get("status") or None
    allowed = ("created", "running", "finished", "cancelled")
    if status is not None and status not in allowed:
        abort(400, description=f"status must be one of {', '.join(allowed)}.")
    return render_template(
        "web/tournaments.html",
        tournaments=tournament_queries.tournament_list(db, status=status, limit=200),
        status=status,
    )


@bp.get("/tournaments/<id('tournament'):tournament_id>")
def tournament(tournament_id: int) -> str:
    db = database()
    detail = tournament_queries.tournament_detail(db, tournament_id)
    # Match seeds decide deals: never on a page while any of them could still be played.
    bracket = redact_bracket(tournament_queries.tournament_bracket(db, tournament_id))
    standings = tournament_queries.tournament_standings(db, tournament_id)
    page, _ = match_queries.list_matches(db, tournament_id=tournament_id, limit=500)
    statuses = {m["id"]: m["status"] for m in page}
    tiebreaks = list(standings[0]["tiebreaks"]) if standings else []
    total = sum(detail["matches"].values())
    return render_template(
        "web/tournament.html",
        t=detail,
        bracket=bracket,
        standings=standings,
        tiebreaks=tiebreaks,
        statuses=statuses,
        done=detail["matches"].get("finished", 0),
        total=total,
        refresh=REFRESH_SECONDS if detail["status"] == "running" else None,
        live_events=api_path(f"tournaments/{tournament_id}/events")
        if detail["status"] in ("created", "running")
        else None,
    )


# --- rules ----------------------------------------------------------------------------------


@bp.get("/rules")
def rules() -> str:
    try:
        document = load_rules()
    except FileNotFoundError:
        # A package built without docs/RULES.md (its symlink left behind): say so, no 500.
        abort(404, description="The rules document is not installed with this package.")
    return render_template("web/rules.html", document=document)
