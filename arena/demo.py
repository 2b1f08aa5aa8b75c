"""``gin-arena demo``: the main job. Eight house bots play a tournament on this machine.

The bots run as real HTTP services in a child process (their CPU is not the arena's), are
registered (or, on a second run, re-pointed to their new ports), and play the tournament
through the local executor on the embedded SQLite database, with live progress. The final
standings show live Elo, the whole-history rating with its 95% interval, and each record.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from sqlalchemy import select

from arena.db.migrate import upgrade
from arena.db.models import Bot, BotStatus
from arena.db.session import Database
from arena.executors import LocalExecutor
from arena.progress import standings_table, watch_tournament
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot, set_status, update_bot
from arena.services.ratings import refit_ratings
from arena.services.tournaments import (
    TournamentStateError,
    cancel_tournament,
    create_tournament,
    start_tournament,
)
from arena.settings import Settings

__all__ = ["DEMO_BOTS", "run_demo"]

#: The demo's field: several strategies and strengths.
DEMO_BOTS: tuple[tuple[str, str], ...] = (
    ("house-strong", "strong"),
    ("house-balanced", "balanced"),
    ("house-cautious", "cautious"),
    ("house-aggressive", "aggressive"),
    ("house-gin-hunter", "gin-hunter"),
    ("house-greedy", "greedy"),
    ("house-lazy", "lazy"),
    ("house-random", "random"),
)


def _serve_bots(specs: Sequence[tuple[int, str, str, str]], ports: Any, ready: Any) -> None:
    """Child process: serve every (slot, name, kind, secret) on a free loopback port, forever.

    Ctrl-C reaches every process of the terminal's group; the parent stops this one."""
    from arena.bots.house import house_bot  # noqa: PLC0415 - the child's own import

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A match cut off by Ctrl-C resets the bots' connections: not the user's concern.
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the life of this process
    for slot, name, kind, secret in specs:
        ports[slot] = house_bot(kind, name=name, secret=secret, seed=name).start().port
    ready.set()
    while True:
        time.sleep(3600)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _bot_processes(bots: int) -> int:
    return max(1, min(bots, os.cpu_count() or 1))


def _ensure_bots(db: Database, names: Sequence[str]) -> dict[str, tuple[int, str]]:
    """Register missing demo bots; return name -> (id, signing secret)."""
    with db.session() as session:
        existing = {
            b.name: (b.id, b.secret)
            for b in session.scalars(select(Bot).where(Bot.name.in_(names)))
        }
    for name in names:
        if name not in existing:
            reg = register_bot(db, name=name, owner="gin-arena demo", url="http://127.0.0.1:9")
            existing[name] = (reg.bot_id, reg.secret)
    return existing


def run_demo(
    settings: Settings,
    console: Console,
    *,
    format_name: str = "double_round_robin",
    options: dict[str, Any] | None = None,
    rules: RuleSet | None = None,
    seed: int | None = None,
    bots: Sequence[tuple[str, str]] = DEMO_BOTS,
    timeout_s: float | None = None,
    then: Callable[[int], object] | None = None,
) -> int:
    """Run the demo tournament to the end and return its id.

    ``then(tournament_id)`` runs before the house bots stop (the command serves the pages
    there, so challenges made through the API can still be played against them).
    """
    settings = settings.replace(allow_loopback=True)
    db = Database(settings.database_url)
    upgrade(db)
    names = [name for name, _ in bots]
    known = _ensure_bots(db, names)
    context = multiprocessing.get_context("spawn")
    ports = context.Array("i", len(bots))
    specs = [(i, name, kind, known[name][1]) for i, (name, kind) in enumerate(bots)]
    # The bots run in as many processes as there are cores (at most one per bot): one Python
    # process serving all of them would be held to one core by its interpreter lock.
    groups = [specs[i :: _bot_processes(len(specs))] for i in range(_bot_processes(len(specs)))]
    children = []
    # Started with Ctrl-C ignored (they keep it): the terminal's SIGINT reaches every process of
    # the group, and this one stops them; a child still importing would print a traceback.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None
    try:
        for index, group in enumerate(groups):
            ready = context.Event()
            child = context.Process(
                target=_serve_bots,
                args=(group, ports, ready),
                daemon=True,
                name=f"house-bots-{index}",
            )
            child.start()
            children.append((child, ready))
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    try:
        if not all(ready.wait(60) for _, ready in children):
            raise RuntimeError("the house bots did not start within 60 s")
        for i, name in enumerate(names):
            update_bot(db, known[name][0], url=f"http://127.0.0.1:{ports[i]}")
            set_status(db, known[name][0], BotStatus.ACTIVE)
        where = settings.database_url
        console.print(f"[bold]{len(bots)} house bots[/] serving on 127.0.0.1, database {where}")
        tournament_id = create_tournament(
            db,
            name=f"gin-arena demo ({format_name})",
            format_name=format_name,
            options=options,
            bot_ids=[known[n][0] for n in names],
            rules=rules,
            seed=seed,
        )
        console.print(f"tournament {tournament_id}: {format_name}, {len(bots)} bots")
        # Instant bots: more matches at once than cores only adds contention.
        with LocalExecutor(settings, threads=min(settings.worker_threads, 4)) as executor:
            try:
                start_tournament(db, tournament_id, executor.submit)
                snap = watch_tournament(db, tournament_id, console, timeout_s=timeout_s)
            except KeyboardInterrupt:  # Ctrl-C: stop now, not after the queued matches
                executor.terminate()
                # A demo cut short is not resumed: its queued matches would only slow the next.
                with contextlib.suppress(TournamentStateError):
                    cancel_tournament(db, tournament_id)
                raise
        refit_ratings(db, min_matches=settings.provisional_matches)
        console.print(standings_table(db, tournament_id))
        if snap.counts["failed"]:
            console.print(f"[red]{snap.counts['failed']} match(es) failed[/]: see gin-arena replay")
        if then is not None:
            then(tournament_id)
        return tournament_id
    finally:
        for child, _ in children:
            child.terminate()
        for child, _ in children:
            child.join(10)
        db.dispose()
