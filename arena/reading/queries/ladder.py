"""The ladder: each preset's standings (its ladder Elo), its last round, the matches of today's
rounds per bot, its recent matches, and a bot's place on each ladder.

A preset's standings rank the bots with an Elo on its ladder (``ladder_ratings``: at least one
decided ladder match there) that are not inactive (a suspended bot keeps its place), by ladder
Elo descending, then ladder matches descending, then bot id. "Today" is the UTC day of the slot
holding the given time (:class:`arena.ladder.RoundTime`): the rounds whose slot starts in it;
failed and cancelled matches do not count, as in the matchmaker's budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session

from arena.db.models import BotRow, LadderRatingRow, LadderRoundRow, MatchRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.ladder import RoundTime
from arena.reading.queries._rows import iso, names_by_id
from arena.reading.queries.matches import _MATCH_SUMMARIES, _match_summary
from arena.states import BotStatus, MatchStatus

__all__ = [
    "bot_places",
    "ladder_in_flight",
    "ladder_overview",
    "last_round",
    "recent_ladder_matches",
    "round_statuses",
    "standings",
    "today_counts",
]

#: The matches that count toward a bot's day (the matchmaker's budget counts the same).
_COUNTED = (MatchStatus.PENDING, MatchStatus.RUNNING, MatchStatus.FINISHED)
_RANKING = (LadderRatingRow.elo.desc(), LadderRatingRow.matches.desc(), LadderRatingRow.bot_id)


def _round(row: LadderRoundRow | None) -> dict[str, Any] | None:
    if row is None:
        return None
    interval = float(row.policy.get("interval_seconds", 0.0)) if row.policy else 0.0
    return {
        "id": row.id,
        "slot": row.slot,
        "interval_seconds": interval or None,
        "created_at": iso(row.created_at),
        "scheduled": row.scheduled,
    }


def last_round(db: Database, preset: str) -> dict[str, Any] | None:
    """The newest round of ``preset``'s ladder (by slot), or None if it never ran."""
    with db.session() as session:
        row = session.scalars(
            select(LadderRoundRow)
            .where(LadderRoundRow.preset == preset)
            .order_by(LadderRoundRow.slot.desc())
            .limit(1)
        ).first()
        return _round(row)


def standings(db: Database, preset: str, *, limit: int = 100) -> list[dict[str, Any]]:
    """``preset``'s ladder, best first (see the module docstring), each with its rank."""
    with db.session() as session:
        rows = session.execute(
            select(
                LadderRatingRow.bot_id,
                LadderRatingRow.elo,
                LadderRatingRow.matches,
                BotRow.name,
                BotRow.status,
            )
            .join(BotRow, BotRow.id == LadderRatingRow.bot_id)
            .where(LadderRatingRow.preset == preset, BotRow.status != BotStatus.INACTIVE)
            .order_by(*_RANKING)
            .limit(limit)
        ).all()
    return [
        {
            "rank": rank,
            "bot_id": row.bot_id,
            "name": row.name,
            "status": row.status.value,
            "elo": round(row.elo, 1),
            "matches": row.matches,
        }
        for rank, row in enumerate(rows, start=1)
    ]


def _today_rounds(preset: str, when: RoundTime) -> Any:
    days = when.day_slots
    return select(LadderRoundRow.id).where(
        LadderRoundRow.preset == preset,
        LadderRoundRow.slot >= days.start,
        LadderRoundRow.slot < days.stop,
    )


def today_counts(
    db: Database, preset: str, when: RoundTime, *, limit: int = 100
) -> tuple[int, list[dict[str, Any]]]:
    """The matches of ``preset``'s rounds today, and per bot (most first, then by id; at most
    ``limit`` bots) how many it has: ``(matches, [{bot_id, name, matches}])``."""
    where = (
        MatchRow.ladder_round_id.in_(_today_rounds(preset, when)),
        MatchRow.status.in_(_COUNTED),
    )
    per_bot: Counter[int] = Counter()
    with db.session() as session:
        for column in (MatchRow.bot_a_id, MatchRow.bot_b_id):
            query = select(column, func.count()).where(*where).group_by(column)
            per_bot.update({row[0]: row[1] for row in session.execute(query)})
        top = sorted(per_bot.items(), key=lambda item: (-item[1], item[0]))[:limit]
        names = names_by_id(session, [bot_id for bot_id, _ in top])
    total = sum(per_bot.values()) // 2
    return total, [{"bot_id": b, "name": names.get(b), "matches": n} for b, n in top]


def ladder_in_flight(db: Database, preset: str) -> int:
    """``preset``'s ladder matches pending or running now."""
    with db.session() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(MatchRow)
                .join(LadderRoundRow, LadderRoundRow.id == MatchRow.ladder_round_id)
                .where(
                    LadderRoundRow.preset == preset,
                    MatchRow.status.in_((MatchStatus.PENDING, MatchStatus.RUNNING)),
                )
            )
            or 0
        )


def recent_ladder_matches(
    db: Database, presets: Sequence[str] | None = None, *, limit: int = 20
) -> list[dict[str, Any]]:
    """The newest ladder matches (of ``presets``, default all), each a match summary as the
    match list gives it plus ``ladder`` (its preset)."""
    query = _MATCH_SUMMARIES.add_columns(LadderRoundRow.preset).join(
        LadderRoundRow, LadderRoundRow.id == MatchRow.ladder_round_id
    )
    if presets is not None:
        query = query.where(LadderRoundRow.preset.in_(list(presets)))
    with db.session() as session:
        rows = session.execute(query.order_by(MatchRow.id.desc()).limit(limit)).all()
    return [
        {
            **_match_summary(m, {m.bot_a_id: m.name_a, m.bot_b_id: m.name_b}),
            "ladder": m.preset,
        }
        for m in rows
    ]


def _place(session: Session, mine: LadderRatingRow) -> dict[str, Any]:
    ranked = and_(
        LadderRatingRow.preset == mine.preset,
        BotRow.status != BotStatus.INACTIVE,
    )
    ahead = or_(
        LadderRatingRow.elo > mine.elo,
        and_(LadderRatingRow.elo == mine.elo, LadderRatingRow.matches > mine.matches),
        and_(
            LadderRatingRow.elo == mine.elo,
            LadderRatingRow.matches == mine.matches,
            LadderRatingRow.bot_id < mine.bot_id,
        ),
    )
    base = (
        select(func.count())
        .select_from(LadderRatingRow)
        .join(BotRow, BotRow.id == LadderRatingRow.bot_id)
        .where(ranked)
    )
    return {
        "preset": mine.preset,
        "rank": int(session.scalar(base.where(ahead)) or 0) + 1,
        "of": int(session.scalar(base) or 0),
        "elo": round(mine.elo, 1),
        "matches": mine.matches,
    }


def bot_places(db: Database, bot_id: int) -> list[dict[str, Any]]:
    """A bot's place on each preset's ladder it has played on, by preset: ``{preset, rank,
    of, elo, matches}``; ``rank`` is None while the bot is inactive (out of the standings).
    :class:`~arena.errors.NotFoundError` if there is no such bot."""
    with db.session() as session:
        status = session.scalar(select(BotRow.status).where(BotRow.id == bot_id))
        if status is None:
            raise NotFoundError("bot", bot_id)
        rows = session.scalars(
            select(LadderRatingRow)
            .where(LadderRatingRow.bot_id == bot_id)
            .order_by(LadderRatingRow.preset)
        ).all()
        places = [_place(session, row) for row in rows]
    if status is BotStatus.INACTIVE:
        for place in places:
            place["rank"] = None
    return places


def ladder_overview(
    db: Database, presets: Sequence[str], *, enabled: Sequence[str], when: RoundTime, limit: int
) -> list[dict[str, Any]]:
    """For each of ``presets``: whether it has a ladder now (is in ``enabled``), its last
    round, its matches in flight, today's matches in all and per bot, and its standings (at
    most ``limit`` rows in each list): what ``GET /api/v1/ladder`` and ``gin-arena ladder
    status`` show."""
    ladders = []
    for preset in presets:
        matches, bots = today_counts(db, preset, when, limit=limit)
        ladders.append(
            {
                "preset": preset,
                "enabled": preset in enabled,
                "last_round": last_round(db, preset),
                "in_flight": ladder_in_flight(db, preset),
                "today": {"matches": matches, "bots": bots},
                "standings": standings(db, preset, limit=limit),
            }
        )
    return ladders


def round_statuses(db: Database, round_ids: Sequence[int]) -> Counter[str]:
    """The matches of these ladder rounds, counted by status."""
    if not round_ids:
        return Counter()
    with db.session() as session:
        rows = session.execute(
            select(MatchRow.status, func.count())
            .where(MatchRow.ladder_round_id.in_(list(round_ids)))
            .group_by(MatchRow.status)
        ).all()
    return Counter({status.value: count for status, count in rows})
