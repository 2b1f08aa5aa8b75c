"""``gin-arena tournament create | start | status | cancel``: tournaments from the shell.

A tournament that does not exist is the one not-found line of :func:`arena.cli.main`
(``no tournament 7``); a bot named on the command line that does not exist says it was looked
for both as a name and as an id.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Console

from arena.cli.console import progress_console
from arena.cli.database import created_database, existing_database, settings_from_environment
from arena.cli.options import (
    UsageError,
    add_format_options,
    add_rules_options,
    format_options,
    rule_set,
)
from arena.errors import NotFoundError

if TYPE_CHECKING:
    from arena.cli.options import Subcommands
    from arena.db.session import Database

__all__ = ["BOT_OPTIONS", "register"]

#: Format options naming a bot: given by name or id, stored as the bot's id.
BOT_OPTIONS = {"gauntlet": ("challenger",)}


def _bot_ids(db: Database, names: Sequence[str]) -> list[int]:
    """Bot ids for names or ids typed on the command line."""
    from arena.reading.queries.lookup import bot_ids

    try:
        return bot_ids(db, names)
    except NotFoundError as exc:
        raise UsageError(f"no bot named {exc.key!r} (and no bot with that id)") from None


def cmd_tournament_create(args: argparse.Namespace) -> int:
    """Create a tournament (not started); print its id."""
    from arena.services.tournaments import create_tournament

    settings = settings_from_environment()
    db = created_database(settings)
    options = format_options(args.option)
    for key in BOT_OPTIONS.get(args.format, ()):
        if key in options and not isinstance(options[key], bool):
            options[key] = str(_bot_ids(db, [str(options[key])])[0])
    try:
        tournament_id = create_tournament(
            db,
            name=args.name,
            format_name=args.format,
            options=options,
            bot_ids=_bot_ids(db, args.bots) if args.bots else None,
            rules=rule_set(args),
            seed=args.seed,
            rated=not args.unrated,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(tournament_id)
    return 0


def cmd_tournament_start(args: argparse.Namespace) -> int:
    """Start a tournament; with the local executor, play it to the end here."""
    from arena.playing.executors import LocalExecutor, make_executor
    from arena.reading.progress import standings_table, watch_tournament
    from arena.services.ratings import refit_ratings
    from arena.services.tournaments import TournamentStateError, start_tournament

    settings = settings_from_environment()
    db = existing_database(settings)
    console = progress_console()
    # The sweep and the webhook deliveries (its events): this command plays one tournament,
    # not the ladder or the health sweeps (those are `gin-arena serve`'s, or beat's).
    executor = make_executor(settings, periodic=("sweep", "webhooks"))
    try:
        report = start_tournament(db, args.tournament_id, executor.submit)
        console.print(
            f"tournament {args.tournament_id}: {len(report.scheduled)} match(es) scheduled"
        )
        if settings.executor_kind == "local" or args.wait:
            try:
                watch_tournament(db, args.tournament_id, console)
            except KeyboardInterrupt:  # Ctrl-C: local workers stop now (queued matches wait)
                if isinstance(executor, LocalExecutor):
                    executor.terminate()
                raise
            refit_ratings(db, min_matches=settings.provisional_matches)
            console.print(standings_table(db, args.tournament_id))
    except TournamentStateError as exc:
        raise UsageError(str(exc)) from None
    finally:
        executor.close()
    return 0


def cmd_tournament_status(args: argparse.Namespace) -> int:
    """Standings and match counts of a tournament, now."""
    from arena.reading.progress import snapshot, standings_table

    settings = settings_from_environment()
    db = existing_database(settings)
    console = Console(soft_wrap=True)
    snap = snapshot(db, args.tournament_id)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(snap.counts.items()))
    console.print(
        f"tournament {args.tournament_id}: {snap.status.value}; matches: {counts or 'none'}"
    )
    console.print(standings_table(db, args.tournament_id))
    return 0


def cmd_tournament_cancel(args: argparse.Namespace) -> int:
    """Cancel a tournament: no new matches; finished ones stay."""
    from arena.services.tournaments import TournamentStateError, cancel_tournament

    settings = settings_from_environment()
    db = existing_database(settings)
    try:
        cancelled = cancel_tournament(db, args.tournament_id)
    except TournamentStateError as exc:
        raise UsageError(str(exc)) from None
    print(f"tournament {args.tournament_id} cancelled; {len(cancelled)} queued match(es) cancelled")
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena tournament create | start | status | cancel``."""
    tour = sub.add_parser("tournament", help="create, start, inspect or cancel tournaments")
    tsub = tour.add_subparsers(
        dest="tournament_command", required=True, metavar="TOURNAMENT_COMMAND"
    )
    p = tsub.add_parser("create", help="create a tournament; prints its id")
    p.add_argument("--name", default="tournament")
    p.add_argument(
        "--bots", nargs="+", metavar="BOT", help="bot names or ids (default: all active)"
    )
    p.add_argument("--unrated", action="store_true", help="do not change ratings")
    add_format_options(p, "round_robin")
    add_rules_options(p)
    p.set_defaults(func=cmd_tournament_create)
    p = tsub.add_parser("start", help="start a tournament (local executor: play it here)")
    p.add_argument("tournament_id", type=int, metavar="ID")
    p.add_argument("--wait", action="store_true", help="with Celery too, wait and show progress")
    p.set_defaults(func=cmd_tournament_start)
    p = tsub.add_parser("status", help="standings and match counts")
    p.add_argument("tournament_id", type=int, metavar="ID")
    p.set_defaults(func=cmd_tournament_status)
    p = tsub.add_parser("cancel", help="cancel: no new matches, finished ones stay")
    p.add_argument("tournament_id", type=int, metavar="ID")
    p.set_defaults(func=cmd_tournament_cancel)
