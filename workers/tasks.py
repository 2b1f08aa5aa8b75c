"""Celery tasks: ids in, a call into the arena package, nothing else.

``run_match`` is safe to run twice (at once or later): the claim and the guarded record in
:mod:`arena.services.matches` decide. Each periodic job of :mod:`arena.services.periodic`
(the sweep, the ladder, health sweeps, webhook deliveries) is the task
``workers.tasks.<name>``, sent by beat on the ``control`` queue; each is safe to run twice
too, and is acknowledged when it starts (one lost is sent again by beat at its next
interval). Only infrastructure errors are retried, with backoff
(:data:`~arena.db.errors.TRANSIENT_ERRORS`: the database unreachable or this worker's
connection pool dry among them); a bot's faults are part of the match, never a reason to
retry. The tasks belong to no app
until :func:`register_tasks` adds them to one (:func:`workers.celery_app.create_app` does).

Every ``run_match`` is sent by :func:`send_matches`, at :data:`MATCH_PRIORITY`, or at
:data:`RESUBMIT_PRIORITY` for a dead worker's matches, which the sweep (an urgent periodic job)
resubmits: on Redis a lower number is served first, so a match whose worker died is played
before the backlog queued ahead of it.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from functools import cache
from typing import Any

from celery import Celery, Task

from arena.db.errors import TRANSIENT_ERRORS
from arena.db.session import Database
from arena.live.redis_bus import RedisSink, live_redis_url
from arena.playing.jobs import JobStatus, run_match_job
from arena.services.broker import RUN_MATCH
from arena.services.matches import Submit
from arena.services.periodic import PERIODIC_JOBS, PeriodicJob
from arena.services.tournaments import advance_for_match
from arena.settings import Settings

__all__ = [
    "MATCH_PRIORITY",
    "PRIORITY_STEPS",
    "RESUBMIT_PRIORITY",
    "RUN_MATCH",
    "periodic_task_name",
    "register_tasks",
    "run_match",
    "send_matches",
    "task_database",
]

#: Message priorities of ``run_match`` (kombu's Redis transport: lower is served first; one
#: list per step of :data:`PRIORITY_STEPS`, the broker option of the same name).
RESUBMIT_PRIORITY = 0
MATCH_PRIORITY = 5
PRIORITY_STEPS = [RESUBMIT_PRIORITY, MATCH_PRIORITY]


def periodic_task_name(job: PeriodicJob) -> str:
    """The task of a periodic job: ``workers.tasks.<name>``."""
    return f"workers.tasks.{job.name}"


def _settings(task: Task) -> Settings:
    """The settings of the app running the task (the one ``gin-arena worker`` built)."""
    settings: Settings = task.app.conf.arena_settings
    return settings


def task_database(app: Celery) -> Database:
    """The database of the worker process running ``app``'s tasks, one per process: its pool
    sized for the worker's concurrency (``app.conf.worker_concurrency``, which ``gin-arena
    worker`` sets; else ``ARENA_WORKER_THREADS``), see
    :meth:`~arena.db.session.Database.for_settings`."""
    settings: Settings = app.conf.arena_settings
    return _db(settings, int(app.conf.worker_concurrency or settings.worker_threads))


@cache
def _db(settings: Settings, concurrency: int) -> Database:
    return Database.for_settings(settings, concurrency=concurrency)


@cache
def _live(url: str) -> RedisSink:
    """The worker process's one live sink (its sending thread starts with the first event)."""
    return RedisSink(url)


def send_matches(
    app: Celery, match_ids: Iterable[int], *, urgent: bool = False, connection: Any = None
) -> None:
    """Send one ``run_match`` per id, ahead of the queue if ``urgent`` (a resubmission)."""
    priority = RESUBMIT_PRIORITY if urgent else MATCH_PRIORITY
    for match_id in match_ids:
        app.send_task(RUN_MATCH, args=[int(match_id)], priority=priority, connection=connection)


def _submitter(app: Celery, *, urgent: bool = False) -> Submit:
    """Submits matches the way :class:`~arena.playing.executors.CeleryExecutor` does, through
    the app running the task (ahead of the queue if ``urgent``)."""

    def submit(match_ids: Iterable[int]) -> None:
        send_matches(app, match_ids, urgent=urgent)

    return submit


def run_match(self: Task, match_id: int) -> str:
    """Play and record one stored match.

    If another attempt holds a live lease on it (a redelivery while the first worker still
    plays), keep the message alive and look again after a lease: should that worker die, this
    task takes over as soon as its lease runs out.
    """
    settings = _settings(self)
    db = task_database(self.app)
    worker = f"celery-{socket.gethostname()}-{os.getpid()}-{self.request.id}"
    submit = _submitter(self.app)
    outcome = run_match_job(
        db,
        settings,
        int(match_id),
        worker,
        after_record=lambda m: advance_for_match(
            db, m, submit, min_matches=settings.provisional_matches
        ),
        live=_live(live_redis_url(settings)),
    )
    if outcome.status is JobStatus.BUSY:
        raise self.retry(countdown=settings.lease_seconds, max_retries=None)
    return outcome.status.value


def _periodic(job: PeriodicJob) -> object:
    """The task body of a periodic job: one run, with the app's settings and submitter."""

    def run(self: Task) -> object:
        settings = _settings(self)
        db = task_database(self.app)
        if job.urgent:
            return job.run(db, settings, _submitter(self.app), _submitter(self.app, urgent=True))
        return job.run(db, settings, _submitter(self.app))

    run.__name__ = run.__qualname__ = job.name
    run.__doc__ = f"The periodic job {job.name!r} (:mod:`arena.services.periodic`), once."
    return run


def register_tasks(app: Celery) -> None:
    """Add ``run_match`` and every periodic job's task to ``app`` (to that app only)."""
    app.task(
        bind=True,
        name=RUN_MATCH,
        shared=False,
        autoretry_for=TRANSIENT_ERRORS,
        retry_backoff=True,
        retry_backoff_max=300,
        retry_jitter=True,
        max_retries=10,
    )(run_match)
    # A periodic job is acknowledged when it starts (beat sends it again next interval): a
    # worker holding an unacknowledged message when its connection to Redis is lost can stop
    # with "Unrecoverable error" (kombu's Redis channel, closed again after Celery's clean-up,
    # cannot restore the message), and the beat worker holding a running sweep was seen to:
    # no sweep after it, so nothing resubmitted what the broker lost.
    for job in PERIODIC_JOBS:
        app.task(bind=True, name=periodic_task_name(job), shared=False, acks_late=False)(
            _periodic(job)
        )
