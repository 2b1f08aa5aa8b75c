"""The sweep: the safety net under submission, run every ``ARENA_SWEEP_INTERVAL_SECONDS``.

A match reaches a worker because the service that scheduled it submitted it after its commit
(:mod:`arena.services.matches`). What that cannot cover, the sweep (Celery beat's
``workers.tasks.sweep``, the local executor's timer) makes up:

* a match whose worker died (its lease, ``ARENA_LEASE_SECONDS``, expired; or at once, when the
  holder was a worker process of this host that no longer exists:
  :mod:`arena.services.liveness`) is resubmitted and goes back to pending, and so is every
  pending match (the dead worker may have taken their messages and not started them);
* when the broker lost its queue (a Redis restarted empty: :mod:`arena.services.queue_loss`),
  every pending match is resubmitted at once, and the queue is marked whole again only if the
  broker kept the token written before the resubmission (a restart while the matches were
  being sent leaves them to the next sweep, not to the grace);
* otherwise a pending match is resubmitted each time its age passes another multiple of
  ``ARENA_PENDING_GRACE_SECONDS`` (its submission may have been lost);
* every running tournament and SPRT test is advanced (a worker may have died between recording
  a match and advancing its event); and the whole-history fit is redone if rated results were
  recorded since it was made (ladder matches and challenges close no tournament round, so this
  is when they reach it).

A dead worker's matches are recovery, so with Celery they jump the queue (the sweep is an
``urgent`` job of :mod:`arena.services.periodic`: it is handed a second, urgent submit), and so
do, after a death, the pending matches whose message a worker took and has not started
(:func:`arena.services.broker.held_match_ids`: the dead one's among them, taken from the head of
the queue); the other pending matches, lost or stale, are the backlog itself and go back in
their order, at the normal priority. Resubmitting is always safe: the claim
decides who plays (a match already played or held by a live lease is skipped).
"""

from __future__ import annotations

import logging

from sqlalchemy import func, select

from arena.db.models import MatchRow, RatingFitStateRow, utcnow
from arena.db.session import Database
from arena.services.broker import held_match_ids
from arena.services.liveness import is_dead_here
from arena.services.matches import (
    Submit,
    end_leases,
    expired_lease_ids,
    pending_to_resend,
    release_expired,
    running_leases,
)
from arena.services.queue_loss import begin_resend, mark_queue, queue_was_lost
from arena.services.ratings import refit_ratings
from arena.services.sprt_tests import advance_running_tests
from arena.services.tournaments import advance_running_tournaments
from arena.settings import Settings
from arena.states import MatchStatus

__all__ = ["sweep"]

log = logging.getLogger(__name__)


def sweep(
    db: Database, settings: Settings, submit: Submit, resubmit: Submit | None = None
) -> list[int]:
    """One sweep (see the module docstring): the ids of the matches it resubmitted. A dead
    worker's matches, then the pending ones a worker took and has not started, go through
    ``resubmit`` (with Celery: ahead of the queue; default ``submit``), the other lost or stale
    pending ones through ``submit``; each in their order."""
    dead = [(m, owner) for m, owner in running_leases(db) if is_dead_here(owner)]
    now = utcnow()
    if dead:
        end_leases(db, dead, now=now)
    lost = queue_was_lost(settings)
    # Written before the pending matches are read: one committed after that read is sent by
    # its own submitter after this write, so into the broker holding the token (or a later one).
    token = begin_resend(settings) if lost else None
    expired = expired_lease_ids(db, now=now)
    pending = pending_to_resend(
        db,
        pending_grace_s=settings.pending_grace_seconds,
        now=now,
        # Twice the interval: a sweep that runs a little late leaves no match out.
        window_s=2 * settings.sweep_interval_seconds,
        # A worker died (a lease ended or ran out): the messages it had taken and not yet
        # started died with it (a worker that reconnected after a broker restart takes a whole
        # new prefetch while it still plays), and the broker gives them to another worker
        # only after its visibility timeout. So every pending match is sent again.
        all_pending=lost or bool(expired),
    )
    # A message the dead worker took and had not started is still in the broker's hash of
    # delivered messages: sent again at the normal priority, its match would go behind the
    # whole backlog it was taken from (a chaos run's match ran again 73 s after the kill).
    held = held_match_ids(settings, pending) if expired else []
    # Sent first, changed after: a sweep that dies in between leaves the next one the same
    # matches to send (a lease still expired, a queue marker still holding a token).
    if expired:
        (resubmit or submit)([*expired, *held])
        log.info(
            "sent ahead of the queue: %d matches of dead workers %s, %d taken and not started %s",
            len(expired),
            expired,
            len(held),
            held,
        )
    taken = set(held)
    backlog = [match_id for match_id in pending if match_id not in taken]
    if backlog:
        submit(backlog)
    release_expired(db, expired, now=now)
    if lost:
        mark_queue(settings, token)  # not if the broker lost the token meanwhile
    advance_running_tournaments(db, submit, min_matches=settings.provisional_matches)
    advance_running_tests(db, submit)
    if fit_is_behind(db):
        refit_ratings(db, min_matches=settings.provisional_matches)
    return sorted({*expired, *pending})


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
