"""``gin-arena replay MATCH_ID``: a stored match as text (or its raw record), verified by
replaying every deal to the recorded result; exit status 1 if it does not reproduce."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from arena.cli.database import existing_database, settings_from_environment
from arena.cli.options import UsageError

if TYPE_CHECKING:
    from arena.cli.options import Subcommands

__all__ = ["register"]


def cmd_replay(args: argparse.Namespace) -> int:
    """Print a stored match and verify it replays to its recorded result."""
    from arena.playing.stored import RecordFormatError
    from arena.reading.queries.records import RecordNotReadyError
    from arena.reading.replay import load_record, verify_record
    from arena.reading.transcript import transcript

    settings = settings_from_environment()
    try:
        record = load_record(existing_database(settings), args.match_id)
    except RecordNotReadyError as exc:
        raise UsageError(str(exc)) from None
    except RecordFormatError as exc:  # edited into something that is no record: no replay
        print(f"gin-arena: error: the stored record cannot be read: {exc}", file=sys.stderr)
        return 1
    problems = verify_record(record)
    if args.json:
        print(json.dumps(record.to_dict(), indent=2))
    else:
        print(transcript(record))
    if problems:
        print(f"REPLAY MISMATCH ({len(problems)} problem(s)):", file=sys.stderr)
        for problem in problems[:20]:
            print(f"  {problem}", file=sys.stderr)
        if len(problems) > 20:
            print(f"  ... and {len(problems) - 20} more", file=sys.stderr)
        return 1
    hands = sum(len(g.hands) for g in record.games)
    print(f"replay verified: {hands} deals reproduce the recorded result", file=sys.stderr)
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena replay MATCH_ID [--json]``."""
    p = sub.add_parser("replay", help="print a stored match and verify its replay")
    p.add_argument("match_id", type=int, metavar="MATCH_ID")
    p.add_argument("--json", action="store_true", help="print the raw record as JSON")
    p.set_defaults(func=cmd_replay)
