"""What must stay secret while it could still help a bot: seeds and deals of unplayed matches.

A match's seed decides every deal, and a tournament's seed decides every match seed; a
duplicate pairing plays two matches on the same seed. So:

* a match's seed and its replay (decks, hands) are public once it is settled and no match on
  the same seed in its tournament is still pending or running;
* a tournament's seed (and the match seeds in its bracket) once it is finished or cancelled
  and none of its matches is pending or running.

Until then the seeds read as ``null`` and the replay is a 409 problem.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import exists, select

from arena.db.models import Match, MatchStatus, Tournament, TournamentStatus
from arena.db.session import Database

__all__ = [
    "OPEN",
    "match_deals_public",
    "match_state",
    "redact_bracket",
    "tournament_seed_public",
    "tournament_seed_public_by_id",
]

OPEN = (MatchStatus.PENDING, MatchStatus.RUNNING)
SETTLED = frozenset(s.value for s in MatchStatus) - {s.value for s in OPEN}


def match_state(db: Database, match_id: int) -> dict[str, Any] | None:
    """What :func:`match_deals_public` needs of a match, in one cheap query."""
    with db.session() as session:
        row = session.execute(
            select(Match.id, Match.status, Match.tournament_id, Match.seed).where(
                Match.id == match_id
            )
        ).first()
    if row is None:
        return None
    return {
        "id": row.id,
        "status": row.status.value,
        "tournament_id": row.tournament_id,
        "seed": row.seed,
    }


def match_deals_public(db: Database, match: dict[str, Any]) -> bool:
    """Whether the deals of a match (a :func:`arena.queries.match_detail` dict) may be shown."""
    if match["status"] not in SETTLED:
        return False
    tournament_id = match["tournament_id"]
    if tournament_id is None:
        return True
    with db.session() as session:
        twin_open = session.scalar(
            select(
                exists().where(
                    Match.tournament_id == tournament_id,
                    Match.seed == match["seed"],
                    Match.id != match["id"],
                    Match.status.in_(OPEN),
                )
            )
        )
    return not twin_open


def tournament_seed_public(detail: dict[str, Any]) -> bool:
    """Whether a tournament's seed (a :func:`arena.queries.tournament_detail` dict) may be
    shown."""
    done = detail["status"] in (TournamentStatus.FINISHED.value, TournamentStatus.CANCELLED.value)
    counts = detail["matches"]
    return done and not any(counts.get(s.value, 0) for s in OPEN)


def tournament_seed_public_by_id(db: Database, tournament_id: int) -> bool | None:
    """As :func:`tournament_seed_public`, by id in one query (None: no such tournament)."""
    with db.session() as session:
        row = session.execute(
            select(
                Tournament.status,
                exists().where(Match.tournament_id == tournament_id, Match.status.in_(OPEN)),
            ).where(Tournament.id == tournament_id)
        ).first()
    if row is None:
        return None
    status, any_open = row
    return status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED) and not any_open


def redact_bracket(bracket: dict[str, Any]) -> dict[str, Any]:
    """The bracket with every match seed replaced by null (in place, and returned)."""
    for section in bracket["sections"]:
        for r in section["rounds"]:
            for pairing in r["pairings"]:
                for m in pairing["matches"]:
                    m["seed"] = None
    return bracket
