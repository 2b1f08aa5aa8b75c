"""``/api/v1/challenges``: a bot's owner asks for one match against another bot.

The challenger sits in seat ``a``. The seed is always drawn by the arena (a chosen seed would
let the challenger know the deals). A rated challenge plays the standard rules; an unrated one
may pick a preset and fields, within bounds that keep a match from tying up a worker.
"""

from __future__ import annotations

import random

from flask import Blueprint, Response, url_for
from sqlalchemy import select

from arena import queries
from arena.api.auth import require_owner
from arena.api.context import arena_context
from arena.api.http import json_response
from arena.api.models import ChallengeCreate, decode_body
from arena.api.problems import FieldError, unprocessable
from arena.api.views.rules import CHALLENGE_BOUNDS, rules_from
from arena.db.models import Bot, BotStatus
from arena.rules.ruleset import RuleSet
from arena.services.matches import schedule_match

__all__ = ["bp"]

bp = Blueprint("challenges", __name__, url_prefix="/api/v1/challenges")


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
    seed = random.SystemRandom().randrange(1 << 62)
    with context.db.session() as session:
        status = dict(
            session.execute(
                select(Bot.id, Bot.status).where(Bot.id.in_([body.bot_id, body.opponent_id]))
            ).all()
        )
        for field, bot_id in (("bot_id", body.bot_id), ("opponent_id", body.opponent_id)):
            if bot_id not in status:
                raise unprocessable(f"no bot {bot_id}", [FieldError(field, "no such bot")])
            if status[bot_id] is not BotStatus.ACTIVE:
                raise unprocessable(
                    f"bot {bot_id} is inactive", [FieldError(field, "the bot is inactive")]
                )
        match = schedule_match(
            session, body.bot_id, body.opponent_id, rules=rules, seed=seed, rated=body.rated
        )
        match_id = match.id
    context.enqueue([match_id])
    detail = queries.match_detail(context.db, match_id)
    assert detail is not None
    detail["seed"] = None
    return json_response(
        detail, 201, headers={"Location": url_for("matches.read", match_id=match_id)}
    )
