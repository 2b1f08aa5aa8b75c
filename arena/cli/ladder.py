"""``gin-arena ladder run | status``: the ladder from the shell.

``ladder run`` runs, for each preset with a ladder (``ARENA_LADDER_PRESETS``, or ``--preset``),
the round of the current time slot (``--at TIME``: of the slot holding that time) and says what
it scheduled, or that the slot's round already ran (a slot's round runs once, whoever runs it:
the timer of ``gin-arena serve``, Celery beat or this command). With the local executor the
matches are played here and the command waits for them, then refits the whole-history fit
(``--no-wait``: they stay pending for a ``gin-arena serve`` to pick up); with Celery they go to
the workers, and ``--wait`` waits.
``ladder status`` shows the policy and, for each preset, its last round, its matches in flight,
today's matches and its standings (``--json``: what ``GET /api/v1/ladder`` answers).
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from arena.cli.console import progress_console
from arena.cli.database import existing_database, settings_from_environment
from arena.cli.options import UsageError
from arena.rules.ruleset import RuleSet

if TYPE_CHECKING:
    from arena.cli.options import Subcommands
    from arena.db.session import Database
    from arena.services.ladder import RoundOutcome
    from arena.settings import Settings

__all__ = ["ladder_line", "register"]

#: How often ``ladder run`` looks at its matches while it waits for them.
POLL_S = 0.5
#: Match ids a scheduled round names (the rest: ``ladder status``, the API, the pages).
MAX_IDS_SHOWN = 12


def ladder_line(settings: Settings) -> str:
    """What ``serve`` and ``demo`` say about the ladder they run (or that it is off)."""
    presets = settings.ladder_preset_names
    if not presets:
        return "ladder: off (ARENA_LADDER_PRESETS is empty)"
    interval = f"{settings.ladder_interval_seconds:g} s"
    if settings.executor_kind == "celery":
        return (
            f"ladder: {', '.join(presets)}, a round every {interval} from Celery beat"
            " (`gin-arena worker --beat`)"
        )
    return f"ladder: {', '.join(presets)}, a round every {interval} (the first in {interval})"


def _moment(text: str | None) -> datetime:
    """``--at``: an ISO 8601 time (no offset: UTC), or now."""
    if text is None:
        return datetime.now(UTC)
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"--at must be an ISO 8601 time (2026-12-01T12:00:00Z), not {text!r}"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _presets(settings: Settings, preset: str | None) -> tuple[str, ...]:
    if preset is not None:
        return (preset,)
    if not settings.ladder_preset_names:
        raise UsageError(
            "the ladder is off: ARENA_LADDER_PRESETS is empty (set it, e.g. to standard,"
            " or name one with --preset)"
        )
    return settings.ladder_preset_names


def _slot_time(outcome: RoundOutcome, interval: float) -> str:
    start = datetime.fromtimestamp(outcome.slot * interval, UTC)
    return start.strftime("%Y-%m-%d %H:%M:%S UTC")


def _describe(outcome: RoundOutcome, settings: Settings) -> str:
    interval = settings.ladder_interval_seconds
    where = f"ladder {outcome.preset}, slot {outcome.slot} ({_slot_time(outcome, interval)})"
    if outcome.already_ran:
        nxt = datetime.fromtimestamp((outcome.slot + 1) * interval, UTC)
        return (
            f"{where}: this slot's round already ran (round {outcome.round_id},"
            f" {outcome.scheduled} match(es)); nothing scheduled. The next slot starts at"
            f" {nxt.strftime('%H:%M:%S UTC')}"
        )
    legs = 2 if settings.ladder_duplicate_pairs else 1
    count = len(outcome.match_ids)
    if not count:
        return (
            f"{where}: round {outcome.round_id} scheduled no matches ({outcome.active_bots}"
            " active bot(s); none due: fewer than two active bots, or the others at their"
            " budget, their pace for the day or their matches in flight)"
        )
    kind = "duplicate pair(s)" if legs == 2 else "single match(es)"
    ids = ", ".join(str(i) for i in outcome.match_ids[:MAX_IDS_SHOWN])
    more = ", ..." if count > MAX_IDS_SHOWN else ""
    return (
        f"{where}: round {outcome.round_id} scheduled {count} match(es), {count // legs} {kind},"
        f" among {outcome.active_bots} active bot(s) (match ids {ids}{more})"
    )


def _wait(db: Database, round_ids: list[int], total: int, console: Console) -> dict[str, int]:
    from arena.reading.queries.ladder import round_statuses

    shown = -1
    while True:
        counts = round_statuses(db, round_ids)
        open_ = counts.get("pending", 0) + counts.get("running", 0)
        done = total - open_
        if done != shown:
            console.print(f"played {done} of {total} (running {counts.get('running', 0)})")
            shown = done
        if not open_:
            return dict(counts)
        time.sleep(POLL_S)


def cmd_ladder_run(args: argparse.Namespace) -> int:
    """Run this slot's round of each ladder; with the local executor, play it here."""
    from arena.playing.executors import CeleryExecutor, LeftPending, LocalExecutor, MatchExecutor
    from arena.services.ladder import run_ladder_rounds
    from arena.services.ratings import refit_ratings
    from arena.services.sweeper import fit_is_behind

    settings = settings_from_environment()
    presets = _presets(settings, args.preset)
    now = _moment(args.at)
    db = existing_database(settings)
    console = progress_console()
    local = settings.executor_kind == "local"
    play_here = local and not args.no_wait
    executor: MatchExecutor
    if play_here:
        executor = LocalExecutor(settings, periodic=False)
    elif local:
        executor = LeftPending()
    else:
        executor = CeleryExecutor(settings)
    try:
        outcomes = run_ladder_rounds(
            db, settings.replace(ladder_presets=",".join(presets)), executor.submit, now=now
        )
        for outcome in outcomes:
            print(_describe(outcome, settings))
        scheduled = [o for o in outcomes if o.match_ids]
        total = sum(len(o.match_ids) for o in scheduled)
        if total and (play_here or args.wait):
            try:
                counts = _wait(db, [o.round_id for o in scheduled], total, console)
            except KeyboardInterrupt:  # Ctrl-C: local workers stop now (queued matches wait)
                if isinstance(executor, LocalExecutor):
                    executor.terminate()
                raise
            summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
            print(f"played: {summary}")
            if fit_is_behind(db):  # as `tournament start` does at its end
                refit_ratings(db, min_matches=settings.provisional_matches)
        elif total and local:
            print("left pending: a running `gin-arena serve` picks them up")
    finally:
        executor.close()
        db.dispose()
    return 0


def _standings_table(ladder: dict[str, Any]) -> Table:
    table = Table(title=f"ladder {ladder['preset']}", title_justify="left")
    for column, justify in (("#", "right"), ("bot", "left"), ("Elo", "right")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    table.add_column("matches", justify="right")
    table.add_column("status")
    for row in ladder["standings"]:
        table.add_row(
            str(row["rank"]), row["name"], f"{row['elo']:.0f}", str(row["matches"]), row["status"]
        )
    return table


def cmd_ladder_status(args: argparse.Namespace) -> int:
    """The policy and, for each preset, its last round, in flight, today and standings."""
    from arena.ladder import DAY_SECONDS, RoundTime, slot_of
    from arena.reading.queries.ladder import ladder_overview
    from arena.services.ladder import policy_document

    settings = settings_from_environment()
    db = existing_database(settings)
    interval = settings.ladder_interval_seconds
    when = RoundTime(slot_of(datetime.now(UTC).timestamp(), interval), interval)
    enabled = settings.ladder_preset_names
    try:
        ladders = ladder_overview(
            db,
            (args.preset,) if args.preset else enabled,
            enabled=enabled,
            when=when,
            limit=args.limit,
        )
    finally:
        db.dispose()
    policy = policy_document(settings)
    if args.json:
        day = datetime.fromtimestamp(when.day * DAY_SECONDS, UTC).date().isoformat()
        document = {"policy": policy, "day": day, "slot": when.slot, "ladders": ladders}
        print(json.dumps(document, indent=2))
        return 0
    console = Console(soft_wrap=True)
    if not enabled:
        console.print("the ladder is off (ARENA_LADDER_PRESETS is empty)")
    else:
        pairs = "duplicate pairs" if policy["duplicate_pairs"] else "single matches"
        console.print(
            f"ladder: {', '.join(enabled)}, a round every {interval:g} s; per bot at most"
            f" {policy['matches_per_day']} matches a UTC day and"
            f" {policy['max_concurrent_per_bot']} at once; rating window"
            f" {policy['rating_window']:g}, exploration {policy['exploration']:g}, {pairs}"
        )
    for ladder in ladders:
        last = ladder["last_round"]
        ran = (
            "never ran"
            if last is None
            else f"last round {last['id']} (slot {last['slot']}, {last['created_at']}):"
            f" {last['scheduled']} match(es)"
        )
        state = "" if ladder["enabled"] else " (off)"
        console.print(
            f"[bold]{ladder['preset']}[/]{state}: {ran}; in flight {ladder['in_flight']};"
            f" today {ladder['today']['matches']} match(es)"
        )
        if ladder["standings"]:
            console.print(_standings_table(ladder))
        else:
            console.print("  no decided ladder matches yet")
    return 0


def _preset(value: str) -> str:
    if value not in RuleSet.PRESETS:
        raise argparse.ArgumentTypeError(
            f"no preset {value!r} (the presets are {', '.join(RuleSet.PRESETS)})"
        )
    return value


def _limit(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 10_000:
        raise argparse.ArgumentTypeError(f"must be 1 to 10000, not {number}")
    return number


def register(sub: Subcommands) -> None:
    """``gin-arena ladder run | status``."""
    ladder = sub.add_parser("ladder", help="run a ladder round now, or show the ladder")
    lsub = ladder.add_subparsers(dest="ladder_command", required=True, metavar="LADDER_COMMAND")
    p = lsub.add_parser(
        "run", help="run this time slot's round (once per slot); local executor: play it here"
    )
    p.add_argument("--preset", type=_preset, help="only this preset's ladder")
    p.add_argument("--at", metavar="TIME", help="the round of the slot holding TIME (ISO 8601)")
    wait = p.add_mutually_exclusive_group()
    wait.add_argument("--wait", action="store_true", help="with Celery too, wait for the matches")
    wait.add_argument(
        "--no-wait", action="store_true", help="local executor: leave them to `gin-arena serve`"
    )
    p.set_defaults(func=cmd_ladder_run)
    p = lsub.add_parser("status", help="the policy, each ladder's last round and standings")
    p.add_argument("--preset", type=_preset, help="only this preset (with a ladder now or not)")
    p.add_argument("--limit", type=_limit, default=20, help="standings rows (default 20)")
    p.add_argument("--json", action="store_true", help="as GET /api/v1/ladder answers")
    p.set_defaults(func=cmd_ladder_status)
