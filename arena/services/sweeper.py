"""The sweep: the safety net under submission, run every ``ARENA_SWEEP_INTERVAL_SECONDS``.

A match reaches a worker because the service that scheduled it submitted it after its commit
(:mod:`arena.services.matches`). What that cannot cover, the sweep (Celery beat's
``workers.tasks.sweep``, the local executor's timer) makes up: a match whose worker
died (its lease expired) goes back to pending and is resubmitted; a pending match older than
``ARENA_PENDING_GRACE_SECONDS`` (its submission was lost) is resubmitted; every running
tournament and SPRT test is advanced (a worker may have died between recording a match and
advancing its event); and the whole-history fit is redone if rated results were recorded since
it was made (ladder matches and challenges close no tournament round, so this is when they
reach it). Resubmitting is always safe: the claim decides who plays (a match already played or
held by a live lease is skipped).
"""

from __future__ import annotations

from sqlalchemy import func, select

from arena.db.models import MatchRow, RatingFitStateRow
from arena.db.session import Database
from arena.services.matches import Submit, sweep_stuck
from arena.services.ratings import refit_ratings
from arena.services.sprt_tests import advance_running_tests
from arena.services.tournaments import advance_running_tournaments
from arena.settings import Settings
from arena.states import MatchStatus

__all__ = ["sweep"]


def sweep(db: Database, settings: Settings, submit: Submit) -> list[int]:
    """One sweep (see the module docstring): the ids of the matches it resubmitted."""
    ids = sweep_stuck(db, pending_grace_s=settings.pending_grace_seconds)
    if ids:
        submit(ids)
    advance_running_tournaments(db, submit, min_matches=settings.provisional_matches)
    advance_running_tests(db, submit)
    if fit_is_behind(db):
        refit_ratings(db, min_matches=settings.provisional_matches)
    return ids


def fit_is_behind(db: Database) -> bool:
    """Whether rated, decided results exist that the stored fit does not cover."""
    with db.session() as session:
        results = session.scalar(
            select(func.count()).where(
                MatchRow.status == MatchStatus.FINISHED,
                MatchRow.rated.is_(True),
                MatchRow.winner.is_not(None),
            )
        )
        covered = session.scalar(select(RatingFitStateRow.results).where(RatingFitStateRow.id == 1))
    return bool(results) and (covered is None or covered < (results or 0))
