"""``/api/v1/bots``: register (after a probe of the bot), list, read, update, rotate
credentials, deactivate and reactivate, and the conformance check on demand.

Only a bot's owner may change it or see its URL and credentials; the organiser may also
deactivate, reactivate and check it, but never reads or rotates its token or secret.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, url_for
from msgspec import UNSET
from sqlalchemy import select

from arena import queries
from arena.api.auth import current_principal, require_owner
from arena.api.context import arena_context
from arena.api.http import json_response, query_choice, query_int, query_text
from arena.api.models import BotCreate, BotUpdate, decode_body
from arena.api.problems import FieldError, conflict, not_found, unprocessable
from arena.bots.check import check_bot
from arena.bots.probe import ProbeReport, probe_bot
from arena.db.models import Bot, BotStatus
from arena.services.bots import (
    BotNameTakenError,
    register_bot,
    rotate_secret,
    rotate_token,
    set_status,
    update_bot,
)

__all__ = ["bp"]

bp = Blueprint("bots", __name__, url_prefix="/api/v1/bots")

SORTS = ("rating", "elo", "name", "id")


def probe_dict(report: ProbeReport) -> dict[str, Any]:
    info = report.info
    return {
        "url": report.url,
        "passed": report.passed,
        "signatures_required": report.signatures_required,
        "bot_info": None
        if info is None
        else {
            "protocol": info.protocol,
            "name": info.name,
            "author": info.author,
            "version": info.version,
        },
        "items": [
            {"name": i.name, "passed": i.passed, "detail": i.detail, "warning": i.warning}
            for i in report.items
        ],
    }


def _probe_or_422(url: str) -> ProbeReport:
    context = arena_context()
    report = probe_bot(
        url, allow_loopback=context.settings.allow_loopback, resolver=context.resolver
    )
    if not report.passed:
        failures = report.failures()
        raise unprocessable(
            f"the bot at {url} did not pass the registration check: {failures[0].detail}",
            [FieldError("url", f"{i.name}: {i.detail}") for i in failures],
            extra={"check": probe_dict(report)},
        )
    return report


def _detail(bot_id: int) -> dict[str, Any]:
    """A bot's detail as this caller may see it (the URL only for owner and organiser)."""
    detail = queries.bot_detail(arena_context().db, bot_id)
    if detail is None:
        raise not_found(f"bot {bot_id}")
    principal = current_principal()
    if not (principal.owns(bot_id) or principal.is_organiser):
        detail["url"] = None
    return detail


def _exists(bot_id: int) -> None:
    with arena_context().db.session() as session:
        if session.scalar(select(Bot.id).where(Bot.id == bot_id)) is None:
            raise not_found(f"bot {bot_id}")


def _name_free(name: str, bot_id: int | None = None) -> None:
    with arena_context().db.session() as session:
        other = session.scalar(select(Bot.id).where(Bot.name == name))
    if other is not None and other != bot_id:
        raise conflict(f"a bot named {name!r} already exists", "name-taken")


@bp.post("")
def register() -> Response:
    body = decode_body(BotCreate)
    _name_free(body.name)
    report = _probe_or_422(body.url)
    db = arena_context().db
    try:
        registered = register_bot(db, name=body.name, owner=body.owner, url=body.url)
    except BotNameTakenError as exc:
        raise conflict(str(exc), "name-taken") from None
    detail = queries.bot_detail(db, registered.bot_id)
    return json_response(
        {
            "id": registered.bot_id,
            "token": registered.token,
            "secret": registered.secret,
            "bot": detail,
            "check": probe_dict(report),
        },
        201,
        headers={"Location": url_for("bots.read", bot_id=registered.bot_id)},
    )


@bp.get("")
def index() -> Response:
    status = query_choice("status", [s.value for s in BotStatus])
    owner = query_text("owner")
    sort = query_choice("sort", SORTS, "rating") or "rating"
    limit = query_int("limit", 50, low=1, high=200) or 50
    offset = query_int("offset", 0, low=0, high=1_000_000) or 0
    rows = queries.list_bots(
        arena_context().db, status=status, owner=owner, sort=sort, limit=limit + 1, offset=offset
    )
    more = len(rows) > limit
    return json_response({"items": rows[:limit], "next_offset": offset + limit if more else None})


@bp.get("/<id:bot_id>")
def read(bot_id: int) -> Response:
    response = json_response(_detail(bot_id))
    response.headers["Vary"] = "Authorization"
    return response


@bp.patch("/<id:bot_id>")
def update(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id)
    body = decode_body(BotUpdate)
    name = None if body.name is UNSET else body.name
    url = None if body.url is UNSET else body.url
    if name is None and url is None:
        raise unprocessable(
            "nothing to change: give a name, a url or both",
            [FieldError("(body)", "needs name or url")],
        )
    if name is not None:
        _name_free(name, bot_id)
    if url is not None:
        _probe_or_422(url)
    try:
        update_bot(arena_context().db, bot_id, name=name, url=url)
    except BotNameTakenError as exc:
        raise conflict(str(exc), "name-taken") from None
    return json_response(_detail(bot_id))


@bp.post("/<id:bot_id>/token")
def new_token(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id)
    token = rotate_token(arena_context().db, bot_id)
    return json_response({"id": bot_id, "token": token})


@bp.post("/<id:bot_id>/secret")
def new_secret(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id)
    secret = rotate_secret(arena_context().db, bot_id)
    return json_response({"id": bot_id, "secret": secret})


@bp.post("/<id:bot_id>/deactivate")
def deactivate(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id, or_organiser=True)
    set_status(arena_context().db, bot_id, BotStatus.INACTIVE)
    return json_response(_detail(bot_id))


@bp.post("/<id:bot_id>/activate")
def activate(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id, or_organiser=True)
    db = arena_context().db
    with db.session() as session:
        url = session.get_one(Bot, bot_id).url
    _probe_or_422(url)
    set_status(db, bot_id, BotStatus.ACTIVE)
    return json_response(_detail(bot_id))


@bp.post("/<id:bot_id>/check")
def check(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id, or_organiser=True)
    context = arena_context()
    with context.db.session() as session:
        bot = session.get_one(Bot, bot_id)
        url, secret = bot.url, bot.secret
    report = check_bot(
        url, secret=secret, allow_loopback=context.settings.allow_loopback, repeats=10
    )
    p50, p99 = report.percentile(0.5), report.percentile(0.99)
    return json_response(
        {
            "url": url,
            "passed": report.passed,
            "deadline_ms": report.deadline_ms,
            "latency_ms": {
                "requests": len(report.latencies_ms),
                "p50": None if p50 is None else round(p50, 3),
                "p99": None if p99 is None else round(p99, 3),
            },
            "items": [
                {"name": i.name, "passed": i.passed, "detail": i.detail, "warning": i.warning}
                for i in report.items
            ],
        }
    )
