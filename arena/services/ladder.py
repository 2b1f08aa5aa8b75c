"""The ladder's rounds, and each preset's ladder Elo.

Every ``ARENA_LADDER_INTERVAL_SECONDS`` (Celery beat's ``workers.tasks.ladder``, or the local
executor's timer), :func:`run_ladder` runs, for each preset in ``ARENA_LADDER_PRESETS``, the
round of the current time slot (``slot = floor(now / interval)``, :mod:`arena.ladder.clock`).

**A round runs once.** Its first statement inserts its ``ladder_rounds`` row, unique on preset
and slot, with ``INSERT ... ON CONFLICT DO NOTHING``: a second beat, a retried task or a
``gin-arena ladder run`` in the same slot inserts nothing and schedules nothing (on PostgreSQL a
concurrent insert waits on the key until the first commits; on SQLite the insert takes the write
lock). In the same transaction it reads the round's inputs, plans the round with the pure
matchmaker (:func:`arena.ladder.plan_round`) and schedules its matches (rated, the preset's
rules, ``ladder_round_id`` and a key per pair and leg, unique in the round); only after the
commit are they submitted. A crash anywhere before the commit leaves neither the round nor any
of its matches, and the next beat in the slot runs it afresh.

**Inputs**, read in the round's transaction: every active bot (suspended and inactive bots
never play), its live Elo and its rated matches in the stored whole-history fit (which the
sweep keeps fresh, see below), its ladder matches of this preset in today's rounds (UTC;
failed and cancelled ones do not count) with how many in seat ``a``, and its matches of any
kind pending or running. The round's seed comes from the system's
randomness: it decides every deal, so nobody may compute it from the slot.

**Results.** Ladder matches are rated matches: :mod:`arena.services.recording` moves the live
Elo of both bots (and versions) as for any rated match, and also their Elo on the preset's
ladder (``ladder_ratings``, :func:`rate_on_ladder`), which ranks the preset's leaderboard. A
ladder has no round that closes: the sweep (:mod:`arena.services.sweeper`) refits the
whole-history fit when rated results were recorded since the stored fit.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from arena.db.models import (
    BotRow,
    LadderRatingRow,
    LadderRoundRow,
    MatchRow,
    RatingFitRow,
    utcnow,
)
from arena.db.session import Database
from arena.ladder import Entrant, LadderPolicy, RoundTime, plan_round, slot_of
from arena.measures.ratings import elo_delta
from arena.rules.ruleset import RuleSet
from arena.services.matches import Submit, schedule_matches
from arena.settings import Settings
from arena.states import BotStatus, MatchStatus

__all__ = [
    "RoundOutcome",
    "ladder_policy",
    "ladder_preset",
    "policy_document",
    "rate_on_ladder",
    "run_ladder",
    "run_ladder_rounds",
    "run_round",
]

#: Matches that hold a place in a bot's budget (a void or cancelled match gave it nothing).
_COUNTED = (MatchStatus.PENDING, MatchStatus.RUNNING, MatchStatus.FINISHED)
_IN_FLIGHT = (MatchStatus.PENDING, MatchStatus.RUNNING)
_SEED_BITS = 62


@dataclass(frozen=True, slots=True)
class RoundOutcome:
    """What one preset's round of one slot did."""

    preset: str
    slot: int
    #: The round's id (this run's, or the one that ran earlier in the slot).
    round_id: int
    #: True if the slot's round had already run: this run scheduled nothing.
    already_ran: bool
    #: The matches this run scheduled (submitted after the commit).
    match_ids: tuple[int, ...]
    #: The matches the round scheduled (when it first ran, if ``already_ran``).
    scheduled: int
    #: Active bots considered (0 if ``already_ran``).
    active_bots: int = 0


def ladder_policy(settings: Settings) -> LadderPolicy:
    """The matchmaker's numbers from the settings."""
    return LadderPolicy(
        matches_per_day=settings.ladder_matches_per_day,
        max_concurrent_per_bot=settings.ladder_max_concurrent_per_bot,
        rating_window=settings.ladder_rating_window,
        exploration=settings.ladder_exploration,
        duplicate_pairs=settings.ladder_duplicate_pairs,
        provisional_matches=settings.provisional_matches,
    )


def policy_document(settings: Settings) -> dict[str, Any]:
    """The ladder's settings as the API and ``gin-arena ladder status`` show them: the presets,
    the interval and the matchmaker's numbers."""
    return {
        "presets": list(settings.ladder_preset_names),
        "interval_seconds": settings.ladder_interval_seconds,
        **ladder_policy(settings).to_dict(),
    }


def _insert_round(
    session: Session, preset: str, slot: int, policy: dict[str, object]
) -> int | None:
    """Insert the round's row; its id, or None if the slot's round exists already."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    inserted = session.execute(
        dialect.insert(LadderRoundRow)
        .values(preset=preset, slot=slot, created_at=utcnow(), scheduled=0, policy=policy)
        .on_conflict_do_nothing(index_elements=["preset", "slot"])
        .returning(LadderRoundRow.id)
    ).first()
    return None if inserted is None else int(inserted[0])


def _per_bot(
    session: Session, where: tuple[ColumnElement[bool], ...]
) -> tuple[Counter[int], Counter[int]]:
    """The matches ``where`` selects, counted by bot over both seats and in seat ``a`` only
    (one scan of the rows, counted here: half the cost of a grouped query per seat)."""
    rows = session.execute(select(MatchRow.bot_a_id, MatchRow.bot_b_id).where(*where)).all()
    seat_a = Counter(row[0] for row in rows)
    return seat_a + Counter(row[1] for row in rows), seat_a


def _entrants(session: Session, preset: str, when: RoundTime) -> list[Entrant]:
    """Every active bot as this round sees it (see the module docstring)."""
    bots = session.execute(
        select(BotRow.id, BotRow.elo, RatingFitRow.matches)
        .outerjoin(RatingFitRow, RatingFitRow.bot_id == BotRow.id)
        .where(BotRow.status == BotStatus.ACTIVE)
        .order_by(BotRow.id)
    ).all()
    if not bots:
        return []
    days = when.day_slots
    rounds = select(LadderRoundRow.id).where(
        LadderRoundRow.preset == preset,
        LadderRoundRow.slot >= days.start,
        LadderRoundRow.slot < days.stop,
    )
    today_total, today_a = _per_bot(
        session, (MatchRow.ladder_round_id.in_(rounds), MatchRow.status.in_(_COUNTED))
    )
    in_flight, _ = _per_bot(session, (MatchRow.status.in_(_IN_FLIGHT),))
    return [
        Entrant(
            bot_id,
            elo,
            rated_matches=fitted or 0,
            today=today_total[bot_id],
            seat_a_today=today_a[bot_id],
            in_flight=in_flight[bot_id],
        )
        for bot_id, elo, fitted in bots
    ]


def run_round(
    db: Database, settings: Settings, preset: str, *, now: datetime | None = None
) -> RoundOutcome:
    """Run ``preset``'s round of the slot holding ``now`` (default: the clock), in one
    transaction; its matches are committed but not submitted (the caller submits
    ``match_ids``). Safe to call any number of times: a slot's round runs once."""
    now = now or utcnow()
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware (the ladder's days are UTC days)")
    rules = RuleSet.preset(preset)
    policy = ladder_policy(settings)
    interval = settings.ladder_interval_seconds
    when = RoundTime(slot_of(now.timestamp(), interval), interval)
    recorded = {**policy.to_dict(), "interval_seconds": settings.ladder_interval_seconds}
    with db.session() as session:
        round_id = _insert_round(session, preset, when.slot, recorded)
        if round_id is None:
            existing = session.execute(
                select(LadderRoundRow.id, LadderRoundRow.scheduled).where(
                    LadderRoundRow.preset == preset, LadderRoundRow.slot == when.slot
                )
            ).one()
            return RoundOutcome(preset, when.slot, existing.id, True, (), existing.scheduled)
        entrants = _entrants(session, preset, when)
        seed = random.SystemRandom().getrandbits(_SEED_BITS)
        planned = plan_round(entrants, policy, day_elapsed=when.day_elapsed, seed=seed)
        ids = tuple(
            schedule_matches(
                session,
                ((m.seat_a, m.seat_b, m.seed, m.key) for m in planned),
                rules=rules,
                rated=True,
                ladder_round_id=round_id,
            )
        )
        session.execute(
            update(LadderRoundRow).where(LadderRoundRow.id == round_id).values(scheduled=len(ids))
        )
    return RoundOutcome(preset, when.slot, round_id, False, ids, len(ids), len(entrants))


def run_ladder_rounds(
    db: Database, settings: Settings, submit: Submit, *, now: datetime | None = None
) -> list[RoundOutcome]:
    """Each enabled preset's round of the current slot, each submitted after its commit."""
    now = now or utcnow()
    outcomes = []
    for preset in settings.ladder_preset_names:
        outcome = run_round(db, settings, preset, now=now)
        if outcome.match_ids:
            submit(outcome.match_ids)
        outcomes.append(outcome)
    return outcomes


def run_ladder(
    db: Database, settings: Settings, submit: Submit, *, now: datetime | None = None
) -> list[int]:
    """One run of the ladder (the periodic job): the ids of the matches it scheduled."""
    outcomes = run_ladder_rounds(db, settings, submit, now=now)
    return [match_id for o in outcomes for match_id in o.match_ids]


def ladder_preset(session: Session, match: MatchRow) -> str | None:
    """The preset of the ladder that scheduled ``match`` (None: not a ladder match)."""
    if match.ladder_round_id is None:
        return None
    return session.scalar(
        select(LadderRoundRow.preset).where(LadderRoundRow.id == match.ladder_round_id)
    )


def rate_on_ladder(
    session: Session, preset: str, bot_a: int, bot_b: int, winner: str, k: float
) -> None:
    """Move both bots' Elo on ``preset``'s ladder after a decided ladder match (in the
    recording transaction, which holds both bots' rows: no two of a bot's matches rate at
    once). A bot's first ladder match on a preset starts it at 1500."""
    ratings = []
    for bot_id in (bot_a, bot_b):
        row = session.get(LadderRatingRow, (preset, bot_id))
        if row is None:
            row = LadderRatingRow(preset=preset, bot_id=bot_id, elo=1500.0, matches=0)
            session.add(row)
        ratings.append(row)
    a, b = ratings
    delta = elo_delta(a.elo, b.elo, 1.0 if winner == "a" else 0.0, k=k)
    now = utcnow()
    for row, change in ((a, delta), (b, -delta)):
        row.elo = row.elo + change
        row.matches = row.matches + 1
        row.updated_at = now
