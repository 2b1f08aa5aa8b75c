"""Cheap fingerprints of derived resources, so their encoded bodies can be reused.

A tournament's detail, bracket and standings are computed by replanning the whole event from
its results, which costs more the bigger the event. They change only when one of its matches
changes state, an entry withdraws, a participant is renamed or the tournament itself changes
status, so two indexed aggregate queries give a fingerprint, and a body computed for a
fingerprint is served again (with an ETag) until it changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from flask import Response
from sqlalchemy import func, select

from arena.api.context import CachedBody, arena_context
from arena.api.http import cached, encode, gzipped
from arena.db.models import Bot, Match, Tournament, TournamentEntry
from arena.db.session import Database

__all__ = ["cached_tournament_view", "tournament_version"]


def tournament_version(db: Database, tournament_id: int) -> str | None:
    """A fingerprint that changes whenever the tournament's plan can (None: no tournament)."""
    with db.session() as session:
        status = session.scalar(select(Tournament.status).where(Tournament.id == tournament_id))
        if status is None:
            return None
        rows = session.execute(
            select(Match.status, func.count(), func.max(Match.id), func.max(Match.finished_at))
            .where(Match.tournament_id == tournament_id)
            .group_by(Match.status)
            .order_by(Match.status)
        ).all()
        withdrawn, renamed = session.execute(
            select(func.count(TournamentEntry.withdrawn_order), func.max(Bot.updated_at))
            .join(Bot, Bot.id == TournamentEntry.bot_id)
            .where(TournamentEntry.tournament_id == tournament_id)
        ).one()
    parts = [status.value, str(withdrawn), str(renamed)] + [
        f"{s.value}:{n}:{last}:{at.isoformat() if at else ''}" for s, n, last, at in rows
    ]
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
