"""A tournament's fingerprint: one cheap statement that changes whenever its plan can.

A tournament's detail, bracket and standings are computed by replanning the whole event from
its results, which costs more the bigger the event. They change only when one of its matches
changes state, an entry withdraws, a participant is renamed or the tournament itself changes
status, so one statement of indexed aggregates gives a fingerprint, and what was computed for a
fingerprint can be reused until it changes (:mod:`arena.api.versions`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Integer, Select, bindparam, case, func, select

from arena.db.models import BotRow, MatchRow, TournamentEntryRow, TournamentRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.states import MatchStatus

__all__ = ["tournament_version"]


#: Match statuses in the order their parts appear in a fingerprint.
_STATUSES = sorted(MatchStatus, key=lambda s: s.value)


def _version_query() -> Select[*tuple[Any, ...]]:
    """Everything the fingerprint reads, in one statement (one round trip): the tournament's
    status, its withdrawals and latest participant rename, and per match status the count, the
    latest id and the latest finish of its matches (built once: ``tournament_id`` is bound)."""
    tournament_id = bindparam("tournament_id", type_=Integer)
    entries = TournamentEntryRow.tournament_id == tournament_id
    per_status: list[Any] = []
    for status in _STATUSES:
        this = MatchRow.status == status
        per_status += [
            func.count(case((this, 1))),
            func.max(case((this, MatchRow.id))),
            func.max(case((this, MatchRow.finished_at))),
        ]
    return select(
        select(TournamentRow.status).where(TournamentRow.id == tournament_id).scalar_subquery(),
        select(func.count(TournamentEntryRow.withdrawn_order)).where(entries).scalar_subquery(),
        select(func.max(BotRow.updated_at))
        .join(TournamentEntryRow, TournamentEntryRow.bot_id == BotRow.id)
        .where(entries)
        .scalar_subquery(),
        *per_status,
    ).where(MatchRow.tournament_id == tournament_id)


_VERSION_QUERY = _version_query()


def tournament_version(db: Database, tournament_id: int) -> str:
    """A fingerprint that changes whenever the tournament's plan can
    (:class:`~arena.errors.NotFoundError` if there is no such tournament)."""
    with db.session() as session:
        row = session.execute(_VERSION_QUERY, {"tournament_id": tournament_id}).one()
    status, withdrawn, renamed, *cells = row
    if status is None:
        raise NotFoundError("tournament", tournament_id)
    parts = [status.value, str(withdrawn), str(renamed)]
    for i, s in enumerate(_STATUSES):
        n, last, at = cells[3 * i : 3 * i + 3]
        if n:
            parts.append(f"{s.value}:{n}:{last}:{at.isoformat() if at else ''}")
    return "|".join(parts)
