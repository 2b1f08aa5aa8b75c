"""Executors: where stored matches get played, and the one way a match reaches them.

* :class:`LocalExecutor` (the embedded default): worker processes on this machine, each
  playing many matches at once in threads (a match spends nearly all its time waiting for bots,
  so threads, not processes, set the throughput; processes only spread the arena's own CPU).
* :class:`CeleryExecutor`: tasks on a Redis broker for any number of ``gin-arena worker``
  processes (see ``workers/``).

Both run :func:`arena.playing.jobs.run_match_job` for a match id and nothing else, so the embedded
default and the distributed deployment play matches with the same code.

**How a match reaches a worker.** The service that schedules matches (a challenge, a tournament
starting or advancing after a result) commits them and then hands their ids to the executor's
:meth:`~MatchExecutor.submit`; views, commands and tasks pass the executor along and never submit
themselves. The API gets its executor from whoever starts it: ``gin-arena serve`` passes its
:class:`LocalExecutor`, and with Celery the app makes a :class:`CeleryExecutor`. Polling is only
the safety net, the sweep (:mod:`arena.services.sweeper`, every ``ARENA_SWEEP_INTERVAL_SECONDS``:
Celery beat, or the local executor's timer): expired leases, every pending match when the
broker lost its queue, pending matches once per ``ARENA_PENDING_GRACE_SECONDS`` of age,
running tournaments; with Celery its resubmissions jump the queue. The local executor also
picks up, every ``ARENA_PICKUP_INTERVAL_SECONDS`` (default 1 s; 0 turns it off), pending
matches that no executor in this process was handed: those another process created
(``gin-arena tournament start`` in another shell while ``serve`` runs, an API process with no
executor of its own, :class:`LeftPending`).

**Periodic jobs.** The sweep is one of :data:`arena.services.periodic.PERIODIC_JOBS` (with the
ladder's rounds, the health sweep and the webhook deliveries): the local executor runs each on a
timer thread of its own, the first run at its first tick; Celery runs them on beat.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Collection, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

from arena.db.session import Database
from arena.live.publish import QueueSink
from arena.playing.jobs import run_match_job
from arena.services.matches import pending_match_ids
from arena.services.periodic import PERIODIC_JOBS, PeriodicJob
from arena.services.tournaments import advance_for_match
from arena.settings import Settings

__all__ = ["CeleryExecutor", "LeftPending", "LocalExecutor", "MatchExecutor", "make_executor"]

log = logging.getLogger(__name__)

#: Live events waiting for the serving process, at most (beyond: dropped).
LIVE_QUEUE_SIZE = 100_000


class MatchExecutor(Protocol):
    """What matches are handed to (see the module docstring)."""

    def submit(self, match_ids: Iterable[int]) -> None:
        """Have these committed matches played (safe to repeat: the claim decides)."""

    def close(self) -> None:
        """Release what the executor holds (local: after the matches already handed over)."""


def _local_worker(
    settings: Settings, work: Any, index: int, threads: int, live_events: Any = None
) -> None:
    """A worker process: pulls match ids and plays up to ``threads`` of them at once
    (publishing their steps to ``live_events``, a queue, if given)."""
    # Ctrl-C reaches every process of the terminal's group: the parent stops us (close()).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING)
    db = Database.for_settings(settings, concurrency=threads)  # a pool for ``threads`` matches
    slots = threading.BoundedSemaphore(threads)
    name = f"local-{os.getpid()}-{index}"
    live = None if live_events is None else QueueSink(live_events)

    def submit(ids: Iterable[int]) -> None:
        for match_id in ids:
            work.put(match_id)

    def play(match_id: int) -> None:
        try:
            run_match_job(
                db,
                settings,
                match_id,
                name,
                after_record=lambda m: advance_for_match(
                    db, m, submit, min_matches=settings.provisional_matches
                ),
                live=live,
            )
        except Exception:  # infrastructure: the sweeper puts the match back later
            log.exception("match %s: job failed", match_id)
        finally:
            slots.release()

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name) as pool:
        while True:
            slots.acquire()
            match_id = work.get()
            if match_id is None:
                slots.release()
                break
            pool.submit(play, match_id)
    if live is not None:
        live.flush()  # the last matches' last events
    db.dispose()


class LocalExecutor:
    """Worker processes on this machine.

    Timer threads in this process run each enabled periodic job (the sweep every
    ``ARENA_SWEEP_INTERVAL_SECONDS``, the ladder, health sweeps, webhook deliveries; each first
    at its first tick) and, every ``ARENA_PICKUP_INTERVAL_SECONDS``, submit the pending matches
    nobody handed to this executor (see the module docstring). ``periodic=False`` runs none of
    the jobs (the pickup still runs); a collection of job names runs only those. With
    ``live_events`` the workers publish every step of their matches to :attr:`live_events`, a
    queue the serving process drains (:mod:`arena.live`); without, nothing is published.
    """

    #: Live events of the workers' matches (``live_events=True`` only), bounded: when nobody
    #: drains it, events are dropped, never the match slowed.
    live_events: Any = None

    def __init__(
        self,
        settings: Settings,
        *,
        processes: int | None = None,
        threads: int | None = None,
        periodic: bool | Collection[str] = True,
        live_events: bool = False,
    ) -> None:
        self.settings = settings
        self.processes = processes or settings.worker_processes
        self.threads = threads or settings.worker_threads
        context = multiprocessing.get_context("spawn")
        self._work: Any = context.Queue()
        if live_events:
            self.live_events = context.Queue(maxsize=LIVE_QUEUE_SIZE)
        self._procs = [
            context.Process(
                target=_local_worker,
                args=(settings, self._work, i, self.threads, self.live_events),
                name=f"gin-arena-worker-{i}",
                daemon=True,
            )
            for i in range(self.processes)
        ]
        # Started with Ctrl-C ignored, which they keep: a terminal's SIGINT reaches the whole
        # process group, and a child still importing would print a traceback; we stop them.
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            for proc in self._procs:
                proc.start()
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        self._db = Database(settings.database_url)
        self._stop = threading.Event()
        self._closed = False
        self._submitted: set[int] = set()
        self._lock = threading.Lock()
        self._timers = [
            threading.Thread(target=self._every, args=(job,), name=job.name, daemon=True)
            for job in PERIODIC_JOBS
            if (periodic is True or (periodic is not False and job.name in periodic))
            if job.enabled(settings)
        ]
        if settings.pickup_interval_seconds > 0:
            self._timers.append(
                threading.Thread(target=self._pickup_loop, name="pickup", daemon=True)
            )
        for timer in self._timers:
            timer.start()

    def submit(self, match_ids: Iterable[int]) -> None:
        """Queue the matches for the worker processes."""
        with self._lock:
            for match_id in match_ids:
                self._submitted.add(int(match_id))
                self._work.put(int(match_id))

    def _every(self, job: PeriodicJob) -> None:
        """Run ``job`` every its interval, the first run at the first tick."""
        interval = job.interval(self.settings)
        while not self._stop.wait(interval):
            try:
                job.run(self._db, self.settings, self.submit)
            except Exception:
                log.exception("%s failed", job.name)

    def _pickup_loop(self) -> None:
        while not self._stop.wait(self.settings.pickup_interval_seconds):
            try:
                self._pick_up()
            except Exception:
                log.exception("pickup failed")

    def _pick_up(self) -> None:
        """Submit the pending matches nobody submitted here (another process created them)."""
        pending = pending_match_ids(self._db)
        with self._lock:
            new = pending - self._submitted
        self.submit(sorted(new))

    def close(self) -> None:
        """Stop once the matches already queued are played (at most 30 s per process)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for _ in self._procs:
            self._work.put(None)
        for proc in self._procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
        self._work.close()
        self._work.join_thread()
        self._close_live()
        self._db.dispose()

    def _close_live(self) -> None:
        if self.live_events is not None:
            self.live_events.cancel_join_thread()
            self.live_events.close()

    def terminate(self) -> None:
        """Stop now (Ctrl-C): the worker processes are killed. A match one was playing keeps
        its lease until it runs out; then a sweep puts it back and it is played from the start."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        for proc in self._procs:
            proc.terminate()
        for proc in self._procs:
            proc.join(timeout=10)
        self._work.cancel_join_thread()
        self._work.close()
        self._close_live()
        self._db.dispose()

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CeleryExecutor:
    """Submits ``run_match`` tasks to a Celery app of ``workers/`` for these settings (built
    on the first submission: nothing is imported or connected before)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._app: Any = None
        self._lock = threading.Lock()

    @property
    def app(self) -> Any:
        """The Celery app (built when first asked for)."""
        with self._lock:
            if self._app is None:
                from workers.celery_app import create_app  # noqa: PLC0415 - Celery only when used

                self._app = create_app(self.settings)
            return self._app

    def submit(self, match_ids: Iterable[int]) -> None:
        """Send one ``run_match`` task per match (:func:`workers.tasks.send_matches`)."""
        ids = [int(match_id) for match_id in match_ids]
        if not ids:
            return
        from workers.tasks import send_matches  # noqa: PLC0415 - Celery only when used

        app = self.app
        # A connection of our own, closed on return (kombu's shared pools keep sockets open
        # for the life of the process).
        with app.connection_for_write() as connection:
            send_matches(app, ids, connection=connection)

    def close(self) -> None:
        """Close the Celery app's connections (if a submission made it)."""
        with self._lock:
            if self._app is not None:
                self._app.close()
                self._app = None


class LeftPending:
    """The executor of a process that plays no matches under local settings (an API run by
    gunicorn, or with ``with_executor=False``): a match handed to it stays pending for the pickup
    of a :class:`LocalExecutor` in another process (``gin-arena serve``, ``tournament start``)."""

    def submit(self, match_ids: Iterable[int]) -> None:
        """Nothing to send: the matches are committed, pending, and found by that pickup."""

    def close(self) -> None:
        """Nothing held."""


def make_executor(
    settings: Settings, *, periodic: bool | Collection[str] = True
) -> LocalExecutor | CeleryExecutor:
    """The executor the settings ask for (``periodic``: which periodic jobs a local one runs,
    see :class:`LocalExecutor`; Celery's run on beat)."""
    if settings.executor_kind == "celery":
        return CeleryExecutor(settings)
    return LocalExecutor(settings, periodic=periodic)
