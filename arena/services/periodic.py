"""The arena's periodic jobs, one list for every executor.

Each job is a function of ``(db, settings, submit)`` run every so many seconds: the sweep
(stuck and lost matches, running tournaments), the ladder's rounds, the health sweep of the
bots, and the delivery of due webhooks. The local executor runs each on a timer thread of its
own (``gin-arena serve``, ``gin-arena demo``, ``tournament start``); with Celery, beat sends
each as the task ``workers.tasks.<name>`` on the ``control`` queue, so no job waits behind a
backlog of matches. Every job is safe to run twice, at once or late: what it does is decided by
guarded writes and unique keys, never by the timer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.db.session import Database
from arena.services.health import health_sweep
from arena.services.ladder import run_ladder
from arena.services.matches import Submit
from arena.services.sweeper import sweep
from arena.services.webhooks import deliver_due
from arena.settings import Settings

__all__ = ["CONTROL_QUEUE", "PERIODIC_JOBS", "PeriodicJob"]

#: The Celery queue of the periodic jobs (matches go to Celery's default queue, ``celery``).
CONTROL_QUEUE = "control"


@dataclass(frozen=True, slots=True)
class PeriodicJob:
    """A job, how often it runs, and whether these settings turn it on."""

    #: The Celery task is ``workers.tasks.<name>``.
    name: str
    run: Callable[[Database, Settings, Submit], object]
    interval: Callable[[Settings], float]
    enabled: Callable[[Settings], bool] = lambda _settings: True


PERIODIC_JOBS: tuple[PeriodicJob, ...] = (
    PeriodicJob("sweep", sweep, lambda s: s.sweep_interval_seconds),
    PeriodicJob(
        "ladder",
        run_ladder,
        lambda s: s.ladder_interval_seconds,
        lambda s: bool(s.ladder_preset_names),
    ),
    PeriodicJob("health", health_sweep, lambda s: s.health_interval_seconds),
    PeriodicJob("webhooks", deliver_due, lambda s: s.webhook_interval_seconds),
)
