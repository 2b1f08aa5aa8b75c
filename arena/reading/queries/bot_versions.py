"""Bot versions: every version of a bot with its ratings and matches, each version's live Elo
over its recent rated matches, and the version each side of a match played.

(The fingerprint that versions a tournament's computed views is another thing, in
:mod:`arena.reading.queries.versions`.)

A version's live Elo moves by the same amount as its bot's in each rated match it plays
(:mod:`arena.services.versions`), so walking a bot's rating history back from a version's
current Elo gives that version's Elo before and after each of its matches exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.db.models import BotRow, BotVersionRow, MatchRow, RatingHistoryRow, VersionRatingFitRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries._rows import iso
from arena.reading.queries.bots import fit_summary, version_ref
from arena.states import MatchStatus

__all__ = ["bot_versions", "replay_versions", "seat_versions", "version_elo_history"]


def bot_versions(db: Database, bot_id: int) -> list[dict[str, Any]]:
    """Every version of a bot, newest first: number, label, why it was made, when, whether it
    is current, its live Elo, its whole-history fit (None until it is fitted) and the finished
    matches it played. :class:`~arena.errors.NotFoundError` if there is no such bot."""
    with db.session() as session:
        current = _current_version_id(session, bot_id)
        rows = session.execute(
            select(BotVersionRow, VersionRatingFitRow)
            .outerjoin(VersionRatingFitRow, VersionRatingFitRow.version_id == BotVersionRow.id)
            .where(BotVersionRow.bot_id == bot_id)
            .order_by(BotVersionRow.number.desc())
        ).all()
        played = _matches_played(session, bot_id)
    return [
        {
            "id": version.id,
            "number": version.number,
            "label": version.label,
            "reason": version.reason,
            "created_at": iso(version.created_at),
            "current": version.id == current,
            "elo": round(version.elo, 1),
            "rating": fit_summary(fit),
            "matches": played.get(version.id, 0),
        }
        for version, fit in rows
    ]


def version_elo_history(db: Database, bot_id: int, *, limit: int = 100) -> list[dict[str, Any]]:
    """The version's own live Elo before and after each of the bot's last ``limit`` rated
    matches, newest first (``version_id``, ``number``, ``match_id``, ``before``, ``after``,
    ``at``); matches recorded before the bot had versions are left out.
    :class:`~arena.errors.NotFoundError` if there is no such bot."""
    with db.session() as session:
        _current_version_id(session, bot_id)
        rows = session.execute(
            select(
                RatingHistoryRow.match_id,
                RatingHistoryRow.version_id,
                RatingHistoryRow.before,
                RatingHistoryRow.after,
                RatingHistoryRow.recorded_at,
            )
            .where(RatingHistoryRow.bot_id == bot_id)
            .order_by(RatingHistoryRow.id.desc())
            .limit(limit)
        ).all()
        versions = {
            v.id: v
            for v in session.scalars(select(BotVersionRow).where(BotVersionRow.bot_id == bot_id))
        }
    # Newest first: a version's newest row ends at its current Elo; each row before it ends
    # where the next one began (every row of a version newer than one fetched is fetched).
    elo = {version_id: v.elo for version_id, v in versions.items()}
    points = []
    for row in rows:
        version = versions.get(row.version_id) if row.version_id is not None else None
        if version is None:
            continue
        after = elo[version.id]
        before = after - (row.after - row.before)
        elo[version.id] = before
        points.append(
            {
                "match_id": row.match_id,
                "version_id": version.id,
                "number": version.number,
                "before": round(before, 2),
                "after": round(after, 2),
                "at": iso(row.recorded_at),
            }
        )
    return points


def seat_versions(session: Session, match: MatchRow) -> dict[str, dict[str, Any] | None]:
    """The version each seat of ``match`` played (``{"a": ..., "b": ...}``, each ``{"id",
    "number", "label"}``, or None for a match not started, or recorded before versions)."""
    ids = [i for i in (match.version_a_id, match.version_b_id) if i is not None]
    found: dict[int, BotVersionRow] = {}
    if ids:
        found = {
            v.id: v for v in session.scalars(select(BotVersionRow).where(BotVersionRow.id.in_(ids)))
        }
    return {
        seat: None
        if version_id is None or version_id not in found
        else version_ref(version_id, found[version_id].number, found[version_id].label)
        for seat, version_id in (("a", match.version_a_id), ("b", match.version_b_id))
    }


def replay_versions(db: Database, match_id: int) -> dict[str, dict[str, Any] | None]:
    """The version each seat of a match played as its replay names it: ``{"id", "number"}``
    (what never changes once the match is recorded; a version's label may still be learnt),
    or None. :class:`~arena.errors.NotFoundError` if there is no such match."""
    with db.session() as session:
        match = session.get(MatchRow, match_id)
        if match is None:
            raise NotFoundError("match", match_id)
        seats = seat_versions(session, match)
    return {
        seat: None if v is None else {"id": v["id"], "number": v["number"]}
        for seat, v in seats.items()
    }


def _current_version_id(session: Session, bot_id: int) -> int | None:
    """The bot's current version id (:class:`~arena.errors.NotFoundError` if no such bot)."""
    row = session.execute(select(BotRow.current_version_id).where(BotRow.id == bot_id)).first()
    if row is None:
        raise NotFoundError("bot", bot_id)
    current: int | None = row[0]
    return current


def _matches_played(session: Session, bot_id: int) -> dict[int, int]:
    """Finished matches per version of the bot, from either seat."""
    counts: dict[int, int] = {}
    seats: Sequence[tuple[Any, Any]] = (
        (MatchRow.bot_a_id, MatchRow.version_a_id),
        (MatchRow.bot_b_id, MatchRow.version_b_id),
    )
    for bot_column, version_column in seats:
        rows = session.execute(
            select(version_column, func.count())
            .where(
                bot_column == bot_id,
                MatchRow.status == MatchStatus.FINISHED,
                version_column.is_not(None),
            )
            .group_by(version_column)
        )
        for version_id, played in rows:
            counts[version_id] = counts.get(version_id, 0) + played
    return counts
