"""The whole-history rating fit, written to ``rating_fits`` (a rewrite, never an increment)."""

from __future__ import annotations

from sqlalchemy import delete, select

from arena.db.models import Bot, Match, MatchStatus, RatingFit, utcnow
from arena.db.session import Database
from arena.ratings import fit_ratings

__all__ = ["refit_ratings"]


def refit_ratings(db: Database, *, min_matches: int) -> int:
    """Fit every bot's rating over all rated, decided matches; returns the number of bots fitted."""
    with db.session() as session:
        rows = session.execute(
            select(Match.bot_a_id, Match.bot_b_id, Match.winner).where(
                Match.status == MatchStatus.FINISHED,
                Match.rated.is_(True),
                Match.winner.is_not(None),
            )
        ).all()
        bots = list(session.scalars(select(Bot.id)))
    results = [(a, b, 1.0 if winner == "a" else 0.0) for a, b, winner in rows]
    fitted = fit_ratings(results, players=bots, min_matches=min_matches) if bots else {}
    now = utcnow()
    with db.session() as session:
        session.execute(delete(RatingFit))
        session.add_all(
            RatingFit(
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
