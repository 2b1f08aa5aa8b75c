"""``/api/v1/bots``: register (after a probe of the bot), list, read, update, rotate
credentials, deactivate and reactivate, the conformance check on demand, and the bot's
versions.

Only a bot's owner may change it or see its credentials; its owner contact and URL are for
its owner and the organiser (everyone else sees the owner's public name, ``owner_name``); the
organiser may also deactivate, reactivate and check it, but never reads or rotates its token
or secret.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, url_for
from msgspec import UNSET

from arena.api.auth import (
    Access,
    Principal,
    current_principal,
    require_authenticated,
    require_owner,
)
from arena.api.context import arena_context
from arena.api.http import json_response, query_choice, query_int, query_text
from arena.api.models import BotCreate, BotUpdate, decode_body
from arena.api.owners import with_owner_view
from arena.api.problems import (
    FieldError,
    ProblemError,
    conflict,
    forbidden,
    unprocessable,
)
from arena.api.read_cache import public_read
from arena.bots.probe import ProbeReport
from arena.protocol.signing import SecretError
from arena.reading.queries import bot_versions as version_queries
from arena.reading.queries import bots as bot_queries
from arena.services.bots import (
    BotNameTakenError,
    BotRefusedError,
    activate_bot,
    change_bot,
    check_registered_bot,
    check_secret,
    end_secret_rotation,
    enroll_bot,
    find_bot,
    rotate_secret,
    rotate_token,
    set_status,
)
from arena.states import BotStatus

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


def _refused(exc: BotRefusedError) -> ProblemError:
    """422 for a bot that failed its (signed) registration check, item by item."""
    return unprocessable(
        str(exc),
        [FieldError("url", f"{i.name}: {i.detail}") for i in exc.report.failures()],
        extra={"check": probe_dict(exc.report)},
    )


def _detail(bot_id: int) -> dict[str, Any]:
    """A bot's detail as this caller may see it (owner contact and URL only for its owner and
    the organiser, see :mod:`arena.api.owners`)."""
    detail = bot_queries.bot_detail(arena_context().db, bot_id)
    return with_owner_view(detail, current_principal())


def _may_filter_by_owner(contact: str) -> None:
    """Filtering by owner contact would tell anyone which bots an e-mail address owns: only
    the organiser, or the owner of a bot with that very contact, may (401 or 403 otherwise)."""
    principal = require_authenticated()
    if principal.is_organiser:
        return
    db = arena_context().db
    if principal.bot_id is not None and find_bot(db, principal.bot_id).owner == contact:
        return
    raise forbidden(
        "filtering by owner contact is for the organiser, or the owner of a bot with that"
        " contact (owner contacts are not public)"
    )


def _exists(bot_id: int) -> None:
    """404 before any check of the caller's rights (:class:`~arena.errors.NotFoundError`)."""
    find_bot(arena_context().db, bot_id)


@bp.post("")
def register() -> Response:
    body = decode_body(BotCreate)
    secret = None if body.secret is UNSET else body.secret
    if secret is not None:
        try:
            check_secret(secret)
        except SecretError as exc:
            raise ProblemError(
                400, f"secret: {exc}", kind="bad-secret", errors=[FieldError("secret", str(exc))]
            ) from None
    context = arena_context()
    db = context.db
    try:
        registered = enroll_bot(
            db,
            context.settings,
            name=body.name,
            url=body.url,
            owner=body.owner,
            secret=secret,
            resolver=context.resolver,
        )
    except BotNameTakenError as exc:
        raise conflict(str(exc), "name-taken") from None
    except BotRefusedError as exc:
        raise _refused(exc) from None
    report = registered.check
    detail = bot_queries.bot_detail(db, registered.bot_id)
    return json_response(
        {
            "id": registered.bot_id,
            "token": registered.token,
            "secret": registered.secret,
            "bot": with_owner_view(detail, Principal(Access.OWNER, registered.bot_id)),
            "check": probe_dict(report),
        },
        201,
        headers={"Location": url_for("bots.read", bot_id=registered.bot_id)},
    )


@bp.get("")
@public_read
def index() -> Response:
    status = query_choice("status", [s.value for s in BotStatus])
    owner = query_text("owner")
    if owner is not None:
        _may_filter_by_owner(owner)
    sort = query_choice("sort", SORTS, "rating") or "rating"
    limit = query_int("limit", 50, low=1, high=200) or 50
    offset = query_int("offset", 0, low=0, high=1_000_000) or 0
    rows = bot_queries.list_bots(
        arena_context().db, status=status, owner=owner, sort=sort, limit=limit + 1, offset=offset
    )
    more = len(rows) > limit
    return json_response({"items": rows[:limit], "next_offset": offset + limit if more else None})


@bp.get("/<id('bot'):bot_id>")
@public_read
def read(bot_id: int) -> Response:
    response = json_response(_detail(bot_id))
    response.headers["Vary"] = "Authorization"
    return response


@bp.get("/<id('bot'):bot_id>/versions")
@public_read
def versions(bot_id: int) -> Response:
    """Every version of the bot, newest first, and each version's live Elo over the bot's
    last ``history`` rated matches."""
    db = arena_context().db
    history = query_int("history", 50, low=0, high=1000) or 0
    items = version_queries.bot_versions(db, bot_id)
    points = version_queries.version_elo_history(db, bot_id, limit=history)
    return json_response({"bot_id": bot_id, "items": items, "elo_history": points})


@bp.patch("/<id('bot'):bot_id>")
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
    context = arena_context()
    try:
        change_bot(
            context.db, context.settings, bot_id, name=name, url=url, resolver=context.resolver
        )
    except BotNameTakenError as exc:
        raise conflict(str(exc), "name-taken") from None
    except BotRefusedError as exc:
        raise _refused(exc) from None
    return json_response(_detail(bot_id))


@bp.post("/<id('bot'):bot_id>/token")
def new_token(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id)
    token = rotate_token(arena_context().db, bot_id)
    return json_response({"id": bot_id, "token": token})


@bp.post("/<id('bot'):bot_id>/secret")
def new_secret(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id)
    context = arena_context()
    rotation = rotate_secret(
        context.db, bot_id, window_hours=context.settings.secret_rotation_hours
    )
    until = rotation.previous_valid_until
    return json_response(
        {
            "id": bot_id,
            "secret": rotation.secret,
            "previous_valid_until": None if until is None else until.isoformat(),
        }
    )


@bp.delete("/<id('bot'):bot_id>/secret/previous")
def end_rotation(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id)
    end_secret_rotation(arena_context().db, bot_id)
    return json_response({"id": bot_id, "previous_valid_until": None})


@bp.post("/<id('bot'):bot_id>/deactivate")
def deactivate(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id, or_organiser=True)
    set_status(arena_context().db, bot_id, BotStatus.INACTIVE)
    return json_response(_detail(bot_id))


@bp.post("/<id('bot'):bot_id>/activate")
def activate(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id, or_organiser=True)
    context = arena_context()
    try:
        activate_bot(context.db, context.settings, bot_id, resolver=context.resolver)
    except BotRefusedError as exc:
        raise _refused(exc) from None
    return json_response(_detail(bot_id))


@bp.post("/<id('bot'):bot_id>/check")
def check(bot_id: int) -> Response:
    _exists(bot_id)
    require_owner(bot_id, or_organiser=True)
    context = arena_context()
    report = check_registered_bot(context.db, context.settings, bot_id, repeats=10)
    p50, p99 = report.percentile(0.5), report.percentile(0.99)
    return json_response(
        {
            "url": report.url,
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
