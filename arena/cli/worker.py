"""``gin-arena worker`` and ``gin-arena sweep``: the processes that keep matches moving when
they are played elsewhere than ``serve`` (a Celery worker; the resubmission of stuck ones).

A worker plays ``--concurrency`` matches at once (default ``ARENA_WORKER_THREADS``) and its
database pool is sized for that many (:meth:`arena.db.session.Database.for_settings`); it says
so at start, and warns when PostgreSQL would not accept that many more connections. With
``--beat`` it keeps Celery beat's schedule in ``ARENA_STATE_DIR``, never in the working
directory.

``--pool`` is Celery's pool for those matches: ``threads`` (the default), or ``gevent``, one OS
thread whose greenlets switch at each wait on a socket. A match is all waiting, and 200 threads of
one process spend CPU handing the interpreter lock to each other (a quarter of the worker's CPU was
system time, a tenth under gevent) and outweigh the machine's other processes in its scheduler. At
200 matches at once ``benchmarks/bench_load.py`` measured (``docs/RELIABILITY.md``): with the API
nearly idle, so that the worker's one core is the limit, 14 to 23% more matches under gevent at 18
to 30% less CPU per bot call; on a machine the API (200 requests a second) and the bots kept busy,
the API's p99 0.2 to 2.7 s under gevent against 6.5 to 38 s, and the matches as fast under gevent
or, when the machine was short, a quarter to a third slower (threads took the CPU from the API).
The gevent pool patches the standard library (``gevent.monkey.patch_all``) before Celery, psycopg
or redis-py are imported; psycopg and redis-py then wait cooperatively. Celery runs no beat in a
gevent worker, so ``--beat`` needs the threads pool, and a gevent worker does not put a dead
worker's unacknowledged tasks back in their queue (kombu does that from an event loop's timer,
which it does not run): run a threads worker for the periodic jobs beside it (``gin-arena worker
--beat --queues control``), which does both.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from arena.cli.database import existing_database, settings_from_environment
from arena.cli.options import UsageError

if TYPE_CHECKING:
    from celery import Celery

    from arena.cli.options import Subcommands
    from arena.settings import Settings

__all__ = ["POOLS", "beat_schedule_path", "pool_report", "register", "worker_app"]

#: The Celery pools ``gin-arena worker --pool`` takes; the first is the default.
POOLS = ("threads", "gevent")


def beat_schedule_path(settings: Settings, node: str) -> Path:
    """Where beat on worker ``node`` keeps its schedule: ``celerybeat-schedule-<node>`` in the
    state directory (one file per node, so two beats on one machine never share one)."""
    safe = re.sub(r"[^A-Za-z0-9@._-]", "_", node)
    return settings.state_path / f"celerybeat-schedule-{safe}"


def worker_app(args: argparse.Namespace, settings: Settings) -> tuple[Celery, list[str]]:
    """The Celery app of ``gin-arena worker`` and the argv of its worker (its ``--pool``); the
    app knows the concurrency, so its tasks' database pool follows it."""
    if not settings.broker_url:
        raise UsageError("gin-arena worker needs ARENA_BROKER_URL (e.g. redis://127.0.0.1:6379/0)")
    from celery.utils.nodenames import default_nodename, host_format

    from workers.celery_app import create_app

    concurrency = settings.worker_threads if args.concurrency is None else args.concurrency
    if concurrency < 1:
        raise UsageError("gin-arena worker: --concurrency must be at least 1")
    pool = args.pool
    if pool == "gevent" and args.beat:
        raise UsageError(
            "gin-arena worker: --beat needs the threads pool (Celery runs no beat in a gevent"
            " worker); run the periodic jobs beside it: gin-arena worker --beat --queues control"
        )
    app = create_app(settings)
    app.conf.worker_concurrency = concurrency
    argv = ["worker", "--pool", pool, "--concurrency", str(concurrency)]
    argv += ["--loglevel", args.loglevel, "--without-gossip", "--without-mingle"]
    argv += ["--queues", args.queues]
    if args.beat:
        node = host_format(default_nodename(args.hostname))
        argv += ["--beat", "--schedule", str(beat_schedule_path(settings, node))]
    if args.hostname:
        argv += ["--hostname", args.hostname]
    return app, argv


def pool_report(app: Celery, settings: Settings) -> str:
    """One line on the worker's database pool, with a warning if PostgreSQL would not accept
    that many more connections now (the pool then meets refusals, which are retried)."""
    from arena.db.errors import TRANSIENT_ERRORS
    from arena.db.session import Database, connection_room, worker_pool_size

    concurrency = int(app.conf.worker_concurrency)
    matches = f"{concurrency} match{'es' if concurrency > 1 else ''} at once"
    limit = worker_pool_size(settings, concurrency)
    if limit is None:
        return f"database pool: SQLite's default, for {matches}"
    line = f"database pool: up to {limit} connections, for {matches}"
    probe = Database(settings.database_url, pool_size=1)
    try:
        room = connection_room(probe)
    except TRANSIENT_ERRORS:  # not reachable now: the tasks retry until it is
        room = None
    finally:
        probe.dispose()
    if room is not None and limit > room:
        line += (
            f"; warning: PostgreSQL accepts only {room} more now (max_connections): past that,"
            " connections are refused and the work retried; raise max_connections, lower"
            " --concurrency or set ARENA_DB_POOL_SIZE"
        )
    return line


def cmd_worker(args: argparse.Namespace) -> int:
    """Run a Celery worker (threads or gevent pool) for ARENA_BROKER_URL."""
    if args.pool == "gevent" and not args.beat:
        # First, before Celery, psycopg, redis-py or SQLAlchemy are imported (``gin-arena``
        # imports nothing of theirs before a command runs): their sockets, locks and waits
        # are then gevent's. (With --beat, worker_app refuses the pool below.)
        from gevent import monkey

        monkey.patch_all()
    settings = settings_from_environment()
    app, argv = worker_app(args, settings)
    if args.beat:
        schedule = Path(argv[argv.index("--schedule") + 1])
        try:
            schedule.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"ARENA_STATE_DIR: cannot create {schedule.parent}: {exc}") from None
    print(f"gin-arena worker: {pool_report(app, settings)}", file=sys.stderr)
    app.worker_main(argv)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    """Put stuck matches back to pending and resubmit them."""
    from arena.playing.executors import make_executor
    from arena.services.matches import sweep_stuck

    settings = settings_from_environment()
    grace = settings.pending_grace_seconds if args.pending_grace is None else args.pending_grace
    ids = sweep_stuck(existing_database(settings), pending_grace_s=grace)
    if ids:
        executor = make_executor(settings, periodic=False)
        executor.submit(ids)
        executor.close()
    print(f"resubmitted {len(ids)} match(es)" + (f": {', '.join(map(str, ids))}" if ids else ""))
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena worker`` and ``gin-arena sweep``."""
    p = sub.add_parser("worker", help="run a Celery worker (ARENA_BROKER_URL)")
    p.add_argument("--concurrency", type=int, help="matches at once (default ARENA_WORKER_THREADS)")
    p.add_argument("--loglevel", default="INFO")
    p.add_argument(
        "--beat", action="store_true", help="also run the periodic sweeper (one worker only)"
    )
    p.add_argument(
        "--pool",
        choices=POOLS,
        default=POOLS[0],
        help="Celery pool for the matches: threads (default), or gevent (one thread of"
        " greenlets: less CPU per match at high concurrency; no --beat)",
    )
    p.add_argument("--hostname", help="worker node name")
    p.add_argument(
        "--queues",
        default="celery,control",
        help="queues to take tasks from: celery (matches), control (the periodic jobs);"
        " default both",
    )
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("sweep", help="resubmit matches stuck in running past their lease")
    p.add_argument(
        "--pending-grace",
        type=int,
        help="also resubmit pending matches older than this (s; default"
        " ARENA_PENDING_GRACE_SECONDS)",
    )
    p.set_defaults(func=cmd_sweep)
