"""Executors: where stored matches get played.

* :class:`LocalExecutor` (the embedded default): worker processes on this machine, each
  playing many matches at once in threads (a match spends nearly all its time waiting for bots,
  so threads, not processes, set the throughput; processes only spread the arena's own CPU).
* :class:`CeleryExecutor`: tasks on a Redis broker for any number of ``gin-arena worker``
  processes (see ``workers/``).

Both run :func:`arena.jobs.run_match_job` for a match id and nothing else, so the embedded
default and the distributed deployment play matches with the same code. Submitting is always
done after the transaction that created the matches has committed.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import select

from arena.db.models import Match, MatchStatus
from arena.db.session import Database
from arena.jobs import run_match_job
from arena.services.matches import sweep_stuck
from arena.settings import Settings

__all__ = ["CeleryExecutor", "LocalExecutor", "make_executor"]

log = logging.getLogger(__name__)

Enqueue = Callable[[Iterable[int]], None]


def after_record(db: Database, match_id: int, enqueue: Enqueue, *, min_matches: int = 10) -> None:
    """What follows a recorded match: its tournament advances and submits ready matches
    (ratings are refit, provisional under ``min_matches``, when a round closes)."""
    from arena.services.tournaments import advance_for_match  # noqa: PLC0415 - import cycle

    advance_for_match(db, match_id, enqueue, min_matches=min_matches)


def sweep_tournaments(db: Database, enqueue: Enqueue, *, min_matches: int = 10) -> None:
    """Advance every running tournament (an advance lost with its worker is made up)."""
    from arena.services.tournaments import advance_running_tournaments  # noqa: PLC0415

    advance_running_tournaments(db, enqueue, min_matches=min_matches)


def _local_worker(settings: Settings, work: Any, index: int, threads: int) -> None:
    """A worker process: pulls match ids and plays up to ``threads`` of them at once."""
    # Ctrl-C reaches every process of the terminal's group: the parent stops us (close()).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING)
    db = Database(settings.database_url)
    slots = threading.BoundedSemaphore(threads)
    name = f"local-{os.getpid()}-{index}"

    def enqueue(ids: Iterable[int]) -> None:
        for match_id in ids:
            work.put(match_id)

    def play(match_id: int) -> None:
        try:
            run_match_job(
                db,
                settings,
                match_id,
                name,
                after_record=lambda m: after_record(
                    db, m, enqueue, min_matches=settings.provisional_matches
                ),
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
    db.dispose()


class LocalExecutor:
    """Worker processes on this machine.

    A watcher thread in this process submits pending matches created elsewhere (the API, a
    ``tournament create`` in another shell) once a second, and every ``sweep_interval_s``
    resubmits matches whose lease expired (a worker process died) and advances every running
    tournament (in case a worker died between recording a match and advancing its event).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        processes: int | None = None,
        threads: int | None = None,
        sweep_interval_s: float = 30.0,
        poll_s: float = 1.0,
    ) -> None:
        self.settings = settings
        self.processes = processes or settings.worker_processes
        self.threads = threads or settings.worker_threads
        context = multiprocessing.get_context("spawn")
        self._work: Any = context.Queue()
        self._procs = [
            context.Process(
                target=_local_worker,
                args=(settings, self._work, i, self.threads),
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
        self._poll_s = poll_s
        self._sweeper = threading.Thread(
            target=self._sweep_loop, args=(sweep_interval_s,), name="sweeper", daemon=True
        )
        self._sweeper.start()

    def submit(self, match_ids: Iterable[int]) -> None:
        with self._lock:
            for match_id in match_ids:
                self._submitted.add(int(match_id))
                self._work.put(int(match_id))

    def _sweep_loop(self, interval: float) -> None:
        """Pick up pending matches nobody submitted here (created by another process, e.g. the
        API), and every ``interval`` put back matches whose lease expired."""
        last_sweep = 0.0
        while not self._stop.wait(self._poll_s):
            try:
                with self._db.session() as session:
                    pending = set(
                        session.scalars(select(Match.id).where(Match.status == MatchStatus.PENDING))
                    )
                with self._lock:
                    new = pending - self._submitted
                self.submit(sorted(new))
                if time.monotonic() - last_sweep >= interval:
                    last_sweep = time.monotonic()
                    self.submit(sweep_stuck(self._db, pending_grace_s=int(interval * 20)))
                    sweep_tournaments(
                        self._db, self.submit, min_matches=self.settings.provisional_matches
                    )
            except Exception:
                log.exception("sweep failed")

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
        self._db.dispose()

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
        self._db.dispose()

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CeleryExecutor:
    """Submits ``play_match`` tasks to the Celery app of ``workers/``."""

    def __init__(self, settings: Settings) -> None:
        from workers.celery_app import create_app  # noqa: PLC0415 - Celery only when used

        self.app = create_app(settings)

    def submit(self, match_ids: Iterable[int]) -> None:
        ids = [int(match_id) for match_id in match_ids]
        if not ids:
            return
        # A connection of our own, closed on return (kombu's shared pools keep sockets open
        # for the life of the process).
        with self.app.connection_for_write() as connection:
            for match_id in ids:
                self.app.send_task(
                    "workers.tasks.play_match", args=[match_id], connection=connection
                )

    def close(self) -> None:
        self.app.close()


def make_executor(settings: Settings) -> LocalExecutor | CeleryExecutor:
    """The executor the settings ask for."""
    if settings.executor_kind == "celery":
        return CeleryExecutor(settings)
    return LocalExecutor(settings)
