"""The sweep: the safety net under submission, run every ``ARENA_SWEEP_INTERVAL_SECONDS``.

A match reaches a worker because the service that scheduled it submitted it after its commit
(:mod:`arena.services.matches`). What that cannot cover, the sweep (Celery beat's
``workers.tasks.sweep``, the local executor's sweeper thread) makes up: a match whose worker
died (its lease expired) goes back to pending and is resubmitted; a pending match older than
``ARENA_PENDING_GRACE_SECONDS`` (its submission was lost) is resubmitted; every running
tournament is advanced (a worker may have died between recording a match and advancing its
event). Resubmitting is always safe: the claim decides who plays (a match already played or
held by a live lease is skipped).
"""

from __future__ import annotations

from arena.db.session import Database
from arena.services.matches import Submit, sweep_stuck
from arena.services.tournaments import advance_running_tournaments
from arena.settings import Settings

__all__ = ["sweep"]


def sweep(db: Database, settings: Settings, submit: Submit) -> list[int]:
    """One sweep (see the module docstring): the ids of the matches it resubmitted."""
    ids = sweep_stuck(db, pending_grace_s=settings.pending_grace_seconds)
    if ids:
        submit(ids)
    advance_running_tournaments(db, submit, min_matches=settings.provisional_matches)
    return ids
