"""Challenges: a bot's owner asks for one match against another bot.

:func:`create_challenge` checks both bots (each must exist and be active, neither inactive nor
suspended), schedules the match in one transaction with the challenger in seat ``a`` and a seed
drawn by the arena (a chosen seed would let the challenger know the deals), and hands it to the
executor after the commit.
"""

from __future__ import annotations

import random

from sqlalchemy import select

from arena.db.models import BotRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.rules.ruleset import RuleSet
from arena.services.matches import Submit, schedule_match
from arena.states import BotStatus

__all__ = ["BotInactiveError", "create_challenge"]


class BotInactiveError(ValueError):
    """A bot named in a challenge is not active: ``status`` says whether it is inactive
    (retired by its owner or the organiser) or suspended (its health probes failed)."""

    def __init__(self, bot_id: int, status: BotStatus = BotStatus.INACTIVE) -> None:
        why = (
            "is suspended: its health probes failed, and it plays again once they pass"
            if status is BotStatus.SUSPENDED
            else "is inactive"
        )
        super().__init__(f"bot {bot_id} {why}")
        self.bot_id = bot_id
        self.status = status


def create_challenge(
    db: Database, bot_id: int, opponent_id: int, *, rules: RuleSet, rated: bool, submit: Submit
) -> int:
    """Schedule ``bot_id`` (seat ``a``) against ``opponent_id`` and submit the match: its id.

    Raises :class:`~arena.errors.NotFoundError` for a bot that does not exist and
    :class:`BotInactiveError` for one that is inactive or suspended, the challenger checked
    first; ``ValueError`` if a bot would play itself.
    """
    seed = random.SystemRandom().randrange(1 << 62)
    with db.session() as session:
        status = dict(
            session.execute(
                select(BotRow.id, BotRow.status).where(BotRow.id.in_([bot_id, opponent_id]))
            ).all()
        )
        for bot in (bot_id, opponent_id):
            if bot not in status:
                raise NotFoundError("bot", bot)
            if status[bot] is not BotStatus.ACTIVE:
                raise BotInactiveError(bot, status[bot])
        match = schedule_match(session, bot_id, opponent_id, rules=rules, seed=seed, rated=rated)
        match_id = match.id
    submit([match_id])
    return match_id
