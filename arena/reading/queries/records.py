"""The stored record of one match as the database holds it: result row, games and deal logs.

:func:`stored_record` returns plain data (JSON as stored, no typed record):
:func:`arena.reading.replay.load_record` turns it into the typed record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from arena.db.models import GameRow, HandRow, MatchResultRow, MatchRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.states import MatchStatus

__all__ = ["RecordNotReadyError", "StoredGameLogs", "StoredRows", "stored_record"]


class RecordNotReadyError(LookupError):
    """The match exists but has no recorded result yet (pending, running, failed...)."""


@dataclass(frozen=True, slots=True)
class StoredGameLogs:
    """One game row: whether it was finished, and its deals' logs in order."""

    complete: bool
    hands: list[Any]


@dataclass(frozen=True, slots=True)
class StoredRows:
    """What the database keeps of a finished match's record."""

    status: MatchStatus
    #: The record without the deal logs (``match_results.summary``).
    summary: Any
    digest: str
    schema_version: int
    #: Every game row, in game order.
    games: list[StoredGameLogs]


def stored_record(db: Database, match_id: int) -> StoredRows:
    """The stored record of match ``match_id``: NotFoundError if there is no such match,
    :class:`RecordNotReadyError` if it has no result yet."""
    with db.session() as session:
        match = session.get(MatchRow, match_id)
        if match is None:
            raise NotFoundError("match", match_id)
        result = session.get(MatchResultRow, match_id)
        if result is None:
            raise RecordNotReadyError(f"match {match_id} has no result yet (status {match.status})")
        games = session.scalars(
            select(GameRow).where(GameRow.match_id == match_id).order_by(GameRow.index)
        ).all()
        hands: dict[int, list[Any]] = {}
        for row in session.scalars(
            select(HandRow)
            .where(HandRow.match_id == match_id)
            .order_by(HandRow.game_id, HandRow.index)
        ):
            hands.setdefault(row.game_id, []).append(row.log)
        return StoredRows(
            status=match.status,
            summary=result.summary,
            digest=result.digest,
            schema_version=result.schema_version,
            games=[StoredGameLogs(g.complete, hands.get(g.id, [])) for g in games],
        )
