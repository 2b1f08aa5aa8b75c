"""The Celery app, configured from :class:`arena.settings.Settings`.

Reliability settings, and why:

* ``task_acks_late`` + ``task_reject_on_worker_lost``: a task is acknowledged only when it
  ends, so a worker that dies mid-match leaves it to be delivered again.
* ``worker_prefetch_multiplier = 1``: a worker holds no more tasks than it has threads. Not
  across a reconnection: a worker whose connection to Redis was lost while it played (a Redis
  restart) takes a full prefetch again on the new connection while its old tasks still run,
  and a match delivered so waits, unclaimed, in its memory and in kombu's ``unacked`` hash; if
  the worker then dies, the sweep that finds it dead sends those matches again ahead of the
  queue, and every other pending match at the normal priority (:mod:`arena.services.sweeper`,
  :func:`arena.services.broker.held_match_ids`). Celery's ``worker_disable_prefetch`` would
  close it, but with it a worker of 200 threads stopped taking tasks with 183 of them free
  (``benchmarks/bench_load.py``, Celery 5.7.0), so it is off.
* hard time limit < broker visibility timeout (set in ``broker_transport_options`` *and*
  ``result_backend_transport_options``, the two places Celery's Redis transports read it): a
  task ends before the broker could hand it to a second worker while it still runs. Celery
  enforces no time limit in the ``threads`` pool, so the match job keeps its own clock and
  stops a match past the soft limit (``arena.playing.jobs``); the lease fences out any overlap.
* JSON only; tasks carry a match id, nothing else.
* ``priority_steps``: two lists per queue on Redis, so a resubmitted match (the sweep's) is
  served before the matches queued at :data:`~workers.tasks.MATCH_PRIORITY`
  (:func:`workers.tasks.send_matches`).

Workers use the ``threads`` pool: a match waits on bots almost all the time, so one process
plays many at once (``--concurrency``, default ``ARENA_WORKER_THREADS``). The app says so
(``worker_pool``); ``gin-arena worker --pool gevent`` plays them as greenlets instead, the pool
given on Celery's command line (``-P``), as Celery wants for gevent, never in ``worker_pool``
(:mod:`arena.cli.worker` says when that pays). A worker started by Celery's own command line
with ``-c N`` sizes its tasks' database pool for its N threads, as ``gin-arena worker`` does
(the worker's concurrency is copied into ``worker_concurrency`` as the worker is set up, before
its first task).

Nothing is built at import: :func:`create_app` makes an app for given settings (what
``gin-arena worker`` and :class:`~arena.playing.executors.CeleryExecutor` call), and
:func:`celery_app` the one app of this process's ``ARENA_*`` environment, when first asked for;
the module attribute ``app`` is that app, for Celery's own command line (``celery -A
workers.celery_app worker``). Started by ``gin-arena worker``.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from celery import Celery, signals

from arena.services.periodic import CONTROL_QUEUE, PERIODIC_JOBS
from arena.settings import Settings, load_settings
from workers.collector import tune_collector
from workers.tasks import PRIORITY_STEPS, periodic_task_name, register_tasks

__all__ = ["celery_app", "create_app"]  # and ``app`` (module __getattr__)


def create_app(settings: Settings) -> Celery:
    """A Celery app for these settings (the broker from ``ARENA_BROKER_URL``), with the tasks
    of :mod:`workers.tasks` and each enabled periodic job on beat, on the ``control`` queue
    (the sweep every ``ARENA_SWEEP_INTERVAL_SECONDS``, the ladder, health sweeps, webhooks)."""
    if not settings.broker_url:
        raise ValueError("Celery needs ARENA_BROKER_URL (e.g. redis://127.0.0.1:6379/0)")
    celery = Celery("gin_arena", broker=settings.broker_url)
    transport = {
        "visibility_timeout": settings.visibility_timeout,
        # How often a worker looks for messages whose visibility timeout ran out (a killed
        # worker's tasks). kombu's default scans every 10 s x 10 calls = 100 s; scan every
        # tenth of the timeout instead, at least once a second and at most every 10 s.
        "unacked_restore_interval": max(1, min(10, settings.visibility_timeout // 10)),
        "unacked_restore_throttle": 1,
        "priority_steps": PRIORITY_STEPS,
    }
    celery.conf.update(
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        task_ignore_result=True,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        task_time_limit=settings.task_time_limit,
        task_soft_time_limit=settings.task_soft_time_limit,
        broker_transport_options=transport,
        result_backend_transport_options=transport,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_pool="threads",
        beat_schedule={
            job.name: {
                "task": periodic_task_name(job),
                "schedule": job.interval(settings),
                "options": {"queue": CONTROL_QUEUE, "expires": job.interval(settings)},
            }
            for job in PERIODIC_JOBS
            if job.enabled(settings)
        },
    )
    celery.conf.arena_settings = settings
    register_tasks(celery)
    return celery


@signals.worker_ready.connect
def _collector_tuned(sender: Any = None, **_: object) -> None:
    """A worker (of any app) finished starting: tune its process's garbage collector for the
    many matches it holds (:mod:`workers.collector`)."""
    tune_collector()


@signals.worker_init.connect
def _concurrency_known(sender: Any = None, **_: object) -> None:
    """A worker of an app of :func:`create_app` being set up: its own concurrency (``-c``) in
    ``worker_concurrency``, for :func:`workers.tasks.task_database`. One receiver for every
    app (a receiver per app would keep each app alive for good)."""
    conf = getattr(getattr(sender, "app", None), "conf", None)
    if conf is not None and "arena_settings" in conf and isinstance(sender.concurrency, int):
        conf.worker_concurrency = sender.concurrency


@cache
def celery_app() -> Celery:
    """The app of this process's environment (``ARENA_*``), built on the first call."""
    return create_app(load_settings())


def __getattr__(name: str) -> Celery:
    """``app``: :func:`celery_app`, built when Celery's command line first looks it up."""
    if name == "app":
        return celery_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
