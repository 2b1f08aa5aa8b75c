"""``gin-arena worker`` and ``gin-arena sweep``: the processes that keep matches moving when
they are played elsewhere than ``serve`` (a Celery worker; the resubmission of stuck ones)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from arena.cli.database import existing_database, settings_from_environment
from arena.cli.options import UsageError

if TYPE_CHECKING:
    from arena.cli.options import Subcommands

__all__ = ["register"]


def cmd_worker(args: argparse.Namespace) -> int:
    """Run a Celery worker (threads pool) for ARENA_BROKER_URL."""
    settings = settings_from_environment()
    if not settings.broker_url:
        raise UsageError("gin-arena worker needs ARENA_BROKER_URL (e.g. redis://127.0.0.1:6379/0)")
    from workers.celery_app import create_app

    app = create_app(settings)
    argv = [
        "worker",
        "--pool",
        "threads",
        "--concurrency",
        str(args.concurrency or settings.worker_threads),
    ]
    argv += ["--loglevel", args.loglevel, "--without-gossip", "--without-mingle"]
    argv += ["--queues", args.queues]
    if args.beat:
        argv.append("--beat")
    if args.hostname:
        argv += ["--hostname", args.hostname]
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
