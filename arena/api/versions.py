"""Cheap fingerprints of derived resources, so their encoded bodies can be reused.

A tournament's detail, bracket and standings are computed by replanning the whole event from
its results, which costs more the bigger the event. They change only when one of its matches
changes state, an entry withdraws, a participant is renamed or the tournament itself changes
status, so one statement of indexed aggregates gives a fingerprint, and a body computed for a
fingerprint is served again (with an ETag) until it changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from flask import Response
from sqlalchemy import Integer, Select, bindparam, case, func, select

from arena.api.context import CachedBody, arena_context
from arena.api.http import cached, encode, gzipped
from arena.db.models import Bot, Match, MatchStatus, Tournament, TournamentEntry
from arena.db.session import Database

__all__ = ["cached_tournament_view", "tournament_version"]


#: Match statuses in the order their parts appear in a fingerprint.
_STATUSES = sorted(MatchStatus, key=lambda s: s.value)


def _version_query() -> Select[*tuple[Any, ...]]:
    """Everything the fingerprint reads, in one statement (one round trip): the tournament's
    status, its withdrawals and latest participant rename, and per match status the count, the
    latest id and the latest finish of its matches (built once: ``tournament_id`` is bound)."""
    tournament_id = bindparam("tournament_id", type_=Integer)
    entries = TournamentEntry.tournament_id == tournament_id
    per_status: list[Any] = []
    for status in _STATUSES:
        this = Match.status == status
        per_status += [
            func.count(case((this, 1))),
            func.max(case((this, Match.id))),
            func.max(case((this, Match.finished_at))),
        ]
    return select(
        select(Tournament.status).where(Tournament.id == tournament_id).scalar_subquery(),
        select(func.count(TournamentEntry.withdrawn_order)).where(entries).scalar_subquery(),
        select(func.max(Bot.updated_at))
        .join(TournamentEntry, TournamentEntry.bot_id == Bot.id)
        .where(entries)
        .scalar_subquery(),
        *per_status,
    ).where(Match.tournament_id == tournament_id)


_VERSION_QUERY = _version_query()


def tournament_version(db: Database, tournament_id: int) -> str | None:
    """A fingerprint that changes whenever the tournament's plan can (None: no tournament)."""
    with db.session() as session:
        row = session.execute(_VERSION_QUERY, {"tournament_id": tournament_id}).one()
    status, withdrawn, renamed, *cells = row
    if status is None:
        return None
    parts = [status.value, str(withdrawn), str(renamed)]
    for i, s in enumerate(_STATUSES):
        n, last, at = cells[3 * i : 3 * i + 3]
        if n:
            parts.append(f"{s.value}:{n}:{last}:{at.isoformat() if at else ''}")
    return "|".join(parts)


def cached_tournament_view(
    kind: str, tournament_id: int, build: Callable[[], Any]
) -> Response | None:
    """The body ``build()`` makes for this tournament, reused while its fingerprint holds
    (None when there is no such tournament)."""
    context = arena_context()
    version = tournament_version(context.db, tournament_id)
    if version is None:
        return None
    key = (kind, tournament_id, version)
    hit = context.tournaments.get(key)
    if hit is None:
        body = encode(build())
        digest = hashlib.sha256(version.encode()).hexdigest()[:16]
        hit = CachedBody(f"{kind}-{tournament_id}-{digest}", body, gzipped(body))
        context.tournaments.put(key, hit)
    return cached(hit.body, hit.etag, immutable=False, gzipped_body=hit.gzipped)
