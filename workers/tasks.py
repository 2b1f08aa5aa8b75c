"""Celery tasks: ids in, a call into the arena package, nothing else.

``play_match`` is safe to run twice (at once or later): the claim and the guarded record in
:mod:`arena.services.matches` decide. Only infrastructure errors are retried (with backoff);
a bot's faults are part of the match, never a reason to retry.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from functools import cache

from celery import Task
from sqlalchemy.exc import DBAPIError, OperationalError

from arena.db.session import Database
from arena.executors import after_record, sweep_tournaments
from arena.jobs import JobStatus, run_match_job
from arena.services.matches import sweep_stuck
from arena.settings import Settings
from workers.celery_app import app

__all__ = ["play_match", "sweep"]


def _settings(task: Task) -> Settings:
    """The settings of the app running the task (the one ``gin-arena worker`` built)."""
    settings: Settings = task.app.conf.arena_settings
    return settings


@cache
def _db(url: str) -> Database:
    return Database(url)


def _enqueue(match_ids: Iterable[int]) -> None:
    for match_id in match_ids:
        play_match.delay(int(match_id))


@app.task(
    bind=True,
    name="workers.tasks.play_match",
    autoretry_for=(OperationalError, DBAPIError, ConnectionError),
    retry_backoff=True,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=10,
)
def play_match(self: Task, match_id: int) -> str:
    """Play and record one stored match.

    If another attempt holds a live lease on it (a redelivery while the first worker still
    plays), keep the message alive and look again after a lease: should that worker die, this
    task takes over as soon as its lease runs out.
    """
    settings = _settings(self)
    db = _db(settings.database_url)
    worker = f"celery-{socket.gethostname()}-{os.getpid()}-{self.request.id}"
    outcome = run_match_job(
        db,
        settings,
        int(match_id),
        worker,
        after_record=lambda m: after_record(
            db, m, _enqueue, min_matches=settings.provisional_matches
        ),
    )
    if outcome.status is JobStatus.BUSY:
        raise self.retry(countdown=settings.lease_seconds, max_retries=None)
    return outcome.status.value


@app.task(bind=True, name="workers.tasks.sweep")
def sweep(self: Task) -> list[int]:
    """Put matches stuck in ``running`` back to ``pending`` and resubmit them, and advance
    every running tournament (Celery beat)."""
    settings = _settings(self)
    db = _db(settings.database_url)
    ids = sweep_stuck(db)
    _enqueue(ids)
    sweep_tournaments(db, _enqueue, min_matches=settings.provisional_matches)
    return ids
