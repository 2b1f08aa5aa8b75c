"""The arena's periodic jobs, one list for every executor.

Each job is a function of ``(db, settings, submit)`` run every so many seconds: the sweep
(stuck and lost matches, running tournaments), the ladder's rounds, the health sweep of the
bots, and the delivery of due webhooks. The local executor runs each on a timer thread of its
own (``gin-arena serve``, ``gin-arena demo``, ``tournament start``); with Celery, beat sends
each as the task ``workers.tasks.<name>`` on the ``control`` queue, so no job waits behind a
backlog of matches, and an ``urgent`` job (the sweep) can send what it resubmits ahead of the
matches already queued (:data:`workers.tasks.RESUBMIT_PRIORITY`). Every job is safe to run
twice, at once or late: what it does is decided by guarded writes and unique keys, never by
the timer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from arena.services.health import health_sweep
from arena.services.ladder import run_ladder
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
    #: ``run(db, settings, submit)``; an ``urgent`` job also takes a fourth argument, a submit
    #: that sends ahead of the queue.
    run: Callable[..., object]
    interval: Callable[[Settings], float]
    enabled: Callable[[Settings], bool] = lambda _settings: True
    #: The job resubmits recovery work (the sweep: a dead worker's matches): with Celery it is
    #: handed, as a fourth argument, a submit that sends ahead of the matches already queued.
    urgent: bool = False


PERIODIC_JOBS: tuple[PeriodicJob, ...] = (
    PeriodicJob("sweep", sweep, lambda s: s.sweep_interval_seconds, urgent=True),
    PeriodicJob(
        "ladder",
        run_ladder,
        lambda s: s.ladder_interval_seconds,
        lambda s: bool(s.ladder_preset_names),
    ),
    PeriodicJob("health", health_sweep, lambda s: s.health_interval_seconds),
    PeriodicJob("webhooks", deliver_due, lambda s: s.webhook_interval_seconds),
)
