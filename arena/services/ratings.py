"""The whole-history rating fit, written to ``rating_fits`` (a rewrite, never an increment).

Refits run from any worker at any time (after a tournament round closes, by the sweeper, at
the end of ``tournament start``), so two may overlap. Each fit is versioned by the number of
rated results it covers, kept in the one row of ``rating_fit_state``: the fit is written only
by a conditional update of that row that succeeds while the stored fit covers no more results
than the new one. The update also takes the row's write lock, so overlapping writes are
serialised (never a unique violation on ``rating_fits``), and a slow refit over older results
finds a newer fit in place and writes nothing (never a stale leaderboard). Results only grow
(a match is recorded once), so more results means a newer fit.

Bots without a rated, decided match are not fitted at all: they would add nothing but the
prior's pull to everyone's interval, and the leaderboard lists them apart as unrated.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from arena.db.models import MatchRow, RatingFitRow, RatingFitStateRow, utcnow
from arena.db.session import Database
from arena.measures.ratings import fit_ratings
from arena.states import MatchStatus

__all__ = ["refit_ratings"]

_STATE_ID = 1


def refit_ratings(db: Database, *, min_matches: int) -> int:
    """Fit the rating of every bot with rated, decided matches over all of them.

    Returns the number of bots fitted and stored, or 0 if a fit over more results was stored
    meanwhile by another refit (this one is then older and is dropped).
    """
    with db.session() as session:
        rows = session.execute(
            select(MatchRow.bot_a_id, MatchRow.bot_b_id, MatchRow.winner).where(
                MatchRow.status == MatchStatus.FINISHED,
                MatchRow.rated.is_(True),
                MatchRow.winner.is_not(None),
            )
        ).all()
    results = [(a, b, 1.0 if winner == "a" else 0.0) for a, b, winner in rows]
    fitted = fit_ratings(results, min_matches=min_matches) if results else {}
    now = utcnow()
    with db.session() as session:
        if not _take_version(session, len(results), now):
            return 0
        session.execute(delete(RatingFitRow))
        session.add_all(
            RatingFitRow(
                bot_id=int(bot_id),
                rating=fit.rating,
                ci_low=fit.ci_low,
                ci_high=fit.ci_high,
                stderr=fit.stderr,
                matches=fit.matches,
                provisional=fit.is_provisional,
                fitted_at=now,
            )
            for bot_id, fit in fitted.items()
        )
    return len(fitted)


def _take_version(session: Session, results: int, now: datetime) -> bool:
    """Move the stored fit's version to ``results`` if it is not newer; True if moved.

    The conditional update locks the state row until the transaction ends. Without a row yet
    (a fresh database) it is inserted, once: a concurrent insert waits on the key and does
    nothing, and then the update is tried again against the row the other one committed.
    """
    move = (
        update(RatingFitStateRow)
        .where(RatingFitStateRow.id == _STATE_ID, RatingFitStateRow.results <= results)
        .values(results=results, fitted_at=now)
        .returning(RatingFitStateRow.id)
    )
    if session.execute(move).first() is not None:
        return True
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    inserted = session.execute(
        dialect.insert(RatingFitStateRow)
        .values(id=_STATE_ID, results=results, fitted_at=now)
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(RatingFitStateRow.id)
    )
    if inserted.first() is not None:
        return True
    return session.execute(move).first() is not None
