"""``gin-arena demo``: the main job. Eight house bots play a tournament on this machine.

The bots run as real HTTP services in a child process (their CPU is not the arena's), are
registered (or, on a second run, re-pointed to their new ports), and play the tournament
through the local executor on the embedded SQLite database, with live progress. The final
standings show live Elo, the whole-history rating with its 95% interval, and each record.
Then the pages are served (``--no-serve``: not), and while they are, the ladder keeps the
house bots playing rated matches (:data:`DEMO_LADDER`: a round every 20 s, so a visitor sees
matches arrive within a minute; the tournament itself runs with the ladder off, so its
standings are the tournament's alone).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console

from arena.cli.console import progress_console
from arena.cli.database import created_database, settings_from_environment
from arena.cli.ladder import ladder_line
from arena.cli.options import (
    UsageError,
    add_format_options,
    add_rules_options,
    format_options,
    port_option,
    rule_set,
)
from arena.cli.serve import check_listen, serve_pages
from arena.rules.ruleset import RuleSet
from arena.settings import Settings

if TYPE_CHECKING:
    from arena.cli.options import Subcommands

__all__ = ["DEMO_BOTS", "DEMO_LADDER", "demo_ladder_settings", "register", "run_demo"]

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


#: The demo's ladder numbers, where the environment does not set them (the production defaults,
#: a round every 300 s and 100 matches a bot a day spread over the day, would leave the pages
#: still for minutes): a round every 20 s, and a budget the pace never holds back.
DEMO_LADDER: dict[str, float | int] = {
    "ladder_interval_seconds": 20.0,
    "ladder_matches_per_day": 10_000,
}


def demo_ladder_settings(settings: Settings) -> Settings:
    """``settings`` with :data:`DEMO_LADDER`'s numbers for those no ``ARENA_*`` variable sets."""
    unset = {k: v for k, v in DEMO_LADDER.items() if f"ARENA_{k.upper()}" not in os.environ}
    return settings.replace(**unset)


def _serve_bots(specs: Sequence[tuple[int, str, str, str]], ports: Any, ready: Any) -> None:
    """Child process: serve every (slot, name, kind, secret) on a free loopback port, forever.

    Ctrl-C reaches every process of the terminal's group; the parent stops this one."""
    from arena.bots.house import house_bot  # the child's own import

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
    import multiprocessing

    from arena.playing.executors import LocalExecutor
    from arena.reading.progress import standings_table, watch_tournament
    from arena.services.bots import set_status, update_bot
    from arena.services.house_entries import enter_house_bots
    from arena.services.ratings import refit_ratings
    from arena.services.tournaments import (
        TournamentStateError,
        cancel_tournament,
        create_tournament,
        start_tournament,
    )
    from arena.states import BotStatus

    # The ladder waits for the serving that follows: the tournament's standings are its own.
    settings = settings.replace(allow_loopback=True, ladder_presets="")
    db = created_database(settings)
    names = [name for name, _ in bots]
    known = enter_house_bots(db, names)
    context = multiprocessing.get_context("spawn")
    ports = context.Array("i", len(bots))
    specs = [(i, name, kind, known[name].secret) for i, (name, kind) in enumerate(bots)]
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
            update_bot(db, known[name].bot_id, url=f"http://127.0.0.1:{ports[i]}")
            set_status(db, known[name].bot_id, BotStatus.ACTIVE)
        where = settings.database_url
        console.print(f"[bold]{len(bots)} house bots[/] serving on 127.0.0.1, database {where}")
        tournament_id = create_tournament(
            db,
            name=f"gin-arena demo ({format_name})",
            format_name=format_name,
            options=options,
            bot_ids=[known[n].bot_id for n in names],
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


def cmd_demo(args: argparse.Namespace) -> int:
    """Eight house bots play a tournament on this machine; then the pages are served."""
    from arena.tournaments import FormatError

    settings = settings_from_environment()
    port_option(args.port)
    if not args.no_serve:
        check_listen(args.host, args.port)
    console = progress_console()

    def serve(tournament_id: int) -> int:
        # While the house bots still run: challenges made through the API can be played, and
        # the ladder keeps them playing.
        live = demo_ladder_settings(settings.replace(allow_loopback=True))
        console.print(ladder_line(live))
        return serve_pages(live, args.host, args.port, console, tournament_id)

    try:
        run_demo(
            settings,
            console,
            format_name=args.format,
            options=format_options(args.option),
            rules=rule_set(args),
            seed=args.seed,
            then=None if args.no_serve else serve,
        )
    except FormatError as exc:
        raise UsageError(str(exc)) from None
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena demo``."""
    p = sub.add_parser(
        "demo", help="the main job: eight house bots play a tournament, then the pages are served"
    )
    add_format_options(p, "double_round_robin")
    p.add_argument("--no-serve", action="store_true", help="exit after the standings")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    add_rules_options(p)
    p.set_defaults(func=cmd_demo)
