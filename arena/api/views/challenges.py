"""``/api/v1/challenges``: a bot's owner asks for one match against another bot.

The challenger sits in seat ``a``. The seed is always drawn by the arena (a chosen seed would
let the challenger know the deals). A rated challenge plays the standard rules; an unrated one
may pick a preset and fields, within bounds that keep a match from tying up a worker. The
match is made and submitted by :func:`arena.services.challenges.create_challenge`.
"""

from __future__ import annotations

from flask import Blueprint, Response, url_for

from arena.api.auth import require_owner
from arena.api.context import arena_context
from arena.api.http import json_response
from arena.api.models import ChallengeCreate, decode_body
from arena.api.problems import FieldError, unprocessable
from arena.api.views.rules import CHALLENGE_BOUNDS, rules_from
from arena.errors import NotFoundError
from arena.reading.queries import matches as match_queries
from arena.rules.ruleset import RuleSet
from arena.services.challenges import BotInactiveError, create_challenge

__all__ = ["bp"]

bp = Blueprint("challenges", __name__, url_prefix="/api/v1/challenges")


def _field(body: ChallengeCreate, bot_id: object) -> str:
    """The body field that named ``bot_id`` (a 422 names the field, not the resource)."""
    return "bot_id" if bot_id == body.bot_id else "opponent_id"


@bp.post("")
def create() -> Response:
    body = decode_body(ChallengeCreate)
    require_owner(body.bot_id)
    if body.opponent_id == body.bot_id:
        raise unprocessable(
            "a bot cannot challenge itself", [FieldError("opponent_id", "same as bot_id")]
        )
    if body.rated and body.rules is not None:
        raise unprocessable(
            "a rated challenge plays the standard rules; omit rules or set rated to false",
            [FieldError("rules", "not allowed when rated is true")],
        )
    rules = rules_from(body.rules, bounds=CHALLENGE_BOUNDS) if body.rules else RuleSet()
    context = arena_context()
    try:
        match_id = create_challenge(
            context.db,
            body.bot_id,
            body.opponent_id,
            rules=rules,
            rated=body.rated,
            submit=context.executor.submit,
        )
    except NotFoundError as exc:  # a bot named in the body: the body is at fault, not the URL
        raise unprocessable(str(exc), [FieldError(_field(body, exc.key), "no such bot")]) from None
    except BotInactiveError as exc:
        field = FieldError(_field(body, exc.bot_id), f"the bot is {exc.status}")
        raise unprocessable(str(exc), [field]) from None
    detail = match_queries.match_detail(context.db, match_id)
    detail["seed"] = None
    return json_response(
        detail, 201, headers={"Location": url_for("matches.read", match_id=match_id)}
    )
