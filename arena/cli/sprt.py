"""``gin-arena test start | status | cancel``: SPRT tests from the shell (see ``docs/TESTS.md``).

``test start CANDIDATE BASELINE`` creates a test between two registered bots (names or ids; the
same bot twice is the null test) and, with the local executor, plays it here to its verdict,
showing the pairs played and the LLR against its bounds as it goes, then the report. With
Celery it prints the test's id and returns (``--wait`` watches it too). A test that does not
exist is the one not-found line of :func:`arena.cli.main` (``no test 7``). ``--seed`` makes a
test replayable: the same seed gives the same deals pair by pair; the report shows the seed
once the test is over.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

from arena.cli.console import progress_console
from arena.cli.database import created_database, existing_database, settings_from_environment
from arena.cli.options import UsageError, add_rules_options, rule_set
from arena.errors import NotFoundError

if TYPE_CHECKING:
    from rich.console import Console

    from arena.cli.options import Subcommands
    from arena.db.session import Database

__all__ = ["register", "report_lines"]


def _bot_id(db: Database, name: str) -> int:
    from arena.reading.queries.lookup import bot_ids

    try:
        return bot_ids(db, [name])[0]
    except NotFoundError as exc:
        raise UsageError(f"no bot named {exc.key!r} (and no bot with that id)") from None


def _number(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{round(value, digits) + 0.0:+.{digits}f}"


def report_lines(report: dict[str, Any]) -> list[str]:
    """A test's report as lines of text (what ``test status`` and ``test start`` print)."""
    bounds = report["bounds"]
    verdict = {
        "h0": "H0 accepted (not better by elo1)",
        "h1": "H1 accepted (better)",
        "capped": "capped (no decision within the cap)",
        "cancelled": "cancelled",
        None: "running",
    }[report["verdict"]]
    elo = report["elo"]
    lines = [
        f"test {report['id']}: {report['candidate']['name']} vs {report['baseline']['name']}:"
        f" {verdict}" + (f" ({report['reason']})" if report["reason"] else ""),
        f"  LLR {report['llr']:+.2f} in [{bounds['lower']:+.2f}, {bounds['upper']:+.2f}]"
        f" (elo0 {report['elo0']:g}, elo1 {report['elo1']:g},"
        f" alpha {report['alpha']:g}, beta {report['beta']:g})",
        f"  pairs {report['pairs']} of at most {report['max_pairs']};"
        f" pentanomial {' '.join(str(c) for c in report['pentanomial'])} (pair scores 0..2)",
        "  seed "
        + ("secret until the test is over" if report["seed"] is None else str(report["seed"])),
    ]
    if elo is not None:
        lines.append(
            f"  Elo {_number(elo['estimate'])} [{_number(elo['ci_low'])},"
            f" {_number(elo['ci_high'])}] (95%), LOS {100 * report['los']:.1f}%"
        )
    return lines


def _progress(report: dict[str, Any], elapsed: float) -> str:
    bounds = report["bounds"]
    return (
        f"test {report['id']}: {report['pairs']} pair(s), LLR {report['llr']:+.2f}"
        f" in [{bounds['lower']:+.2f}, {bounds['upper']:+.2f}], {elapsed:.0f} s"
    )


def _watch(db: Database, test_id: int, console: Console, poll_s: float = 0.5) -> None:
    from rich.live import Live

    from arena.reading.queries.sprt_tests import sprt_test_detail

    started = time.monotonic()
    report = sprt_test_detail(db, test_id)
    try:
        with Live(_progress(report, 0), console=console, refresh_per_second=4) as live:
            while report["status"] == "running":
                time.sleep(poll_s)
                report = sprt_test_detail(db, test_id)
                live.update(_progress(report, time.monotonic() - started))
    except KeyboardInterrupt:
        console.line()
        raise
    if not console.is_terminal:
        console.line()


def cmd_test_start(args: argparse.Namespace) -> int:
    """Create a test; with the local executor, play it to its verdict here."""
    from arena.measures.sprt import SprtParams
    from arena.playing.executors import LocalExecutor, make_executor
    from arena.reading.embargo import redact_sprt_test
    from arena.reading.queries.sprt_tests import sprt_test_detail
    from arena.services.challenges import BotInactiveError
    from arena.services.sprt_tests import SEED_BITS, VersionNotPlayableError, create_test

    settings = settings_from_environment()
    db = created_database(settings)
    candidate, baseline = _bot_id(db, args.candidate), _bot_id(db, args.baseline)
    try:
        params = SprtParams(args.elo0, args.elo1, args.alpha, args.beta)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not 1 <= args.max_pairs <= 5000 or not 1 <= args.concurrency <= 8:
        raise UsageError("--max-pairs must be 1 to 5000 and --concurrency 1 to 8")
    if args.seed is not None and not 0 <= args.seed < 1 << SEED_BITS:
        raise UsageError(f"--seed must be 0 to 2**{SEED_BITS} - 1")
    console = progress_console()
    executor = make_executor(settings, periodic=("sweep", "webhooks"))
    try:
        try:
            test_id = create_test(
                db,
                candidate_id=candidate,
                baseline_id=baseline,
                params=params,
                max_pairs=args.max_pairs,
                concurrency=args.concurrency,
                rules=rule_set(args),
                seed=args.seed,
                created_by="organiser",
                submit=executor.submit,
            )
        except (BotInactiveError, VersionNotPlayableError) as exc:
            raise UsageError(str(exc)) from None
        console.print(f"test {test_id}: started")
        if settings.executor_kind != "local" and not args.wait:
            print(test_id)
            return 0
        try:
            _watch(db, test_id, console)
        except KeyboardInterrupt:
            if isinstance(executor, LocalExecutor):
                executor.terminate()
            raise
    finally:
        executor.close()
    print("\n".join(report_lines(redact_sprt_test(sprt_test_detail(db, test_id)))))
    return 0


def cmd_test_status(args: argparse.Namespace) -> int:
    """A test's report now (``--json``: the API's form)."""
    from arena.reading.embargo import redact_sprt_test
    from arena.reading.queries.sprt_tests import sprt_test_detail

    db = existing_database(settings_from_environment())
    report = redact_sprt_test(sprt_test_detail(db, args.test_id))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("\n".join(report_lines(report)))
    return 0


def cmd_test_cancel(args: argparse.Namespace) -> int:
    """Cancel a running test: no new pairs; finished matches stay."""
    from arena.services.sprt_tests import TestStateError, cancel_test

    db = existing_database(settings_from_environment())
    try:
        cancelled = cancel_test(db, args.test_id)
    except TestStateError as exc:
        raise UsageError(str(exc)) from None
    print(f"test {args.test_id} cancelled; {len(cancelled)} queued match(es) cancelled")
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena test start | status | cancel``."""
    test = sub.add_parser("test", help="SPRT tests: is one bot (version) better than another?")
    tsub = test.add_subparsers(dest="test_command", required=True, metavar="TEST_COMMAND")
    p = tsub.add_parser("start", help="start a test (local executor: play it to its verdict)")
    p.add_argument("candidate", metavar="CANDIDATE", help="bot name or id (the new version)")
    p.add_argument("baseline", metavar="BASELINE", help="bot name or id to compare against")
    p.add_argument("--elo0", type=float, default=0.0, help="H0's Elo difference (default 0)")
    p.add_argument("--elo1", type=float, default=40.0, help="H1's Elo difference (default 40)")
    p.add_argument("--alpha", type=float, default=0.05, help="false H1 rate (default 0.05)")
    p.add_argument("--beta", type=float, default=0.05, help="false H0 rate (default 0.05)")
    p.add_argument("--max-pairs", type=int, default=1000, help="cap on pairs (default 1000)")
    p.add_argument("--concurrency", type=int, default=2, help="pairs in flight (default 2)")
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help="decides every pair's deals, for a test that can be replayed (default: drawn)",
    )
    p.add_argument("--wait", action="store_true", help="with Celery too, wait and show progress")
    add_rules_options(p)
    p.set_defaults(func=cmd_test_start)
    p = tsub.add_parser("status", help="the test's LLR, Elo estimate, pairs and verdict")
    p.add_argument("test_id", type=int, metavar="ID")
    p.add_argument("--json", action="store_true", help="the report as the API's JSON")
    p.set_defaults(func=cmd_test_status)
    p = tsub.add_parser("cancel", help="cancel: no new pairs, finished matches stay")
    p.add_argument("test_id", type=int, metavar="ID")
    p.set_defaults(func=cmd_test_cancel)
