"""The ``gin-arena`` command line: one module per command group, each a thin call into the
package, and here the parser they register into and the one mapping of errors to exit statuses.

Errors a user can cause (a bad option value, a port that cannot be listened on, a malformed
secret, an unsupported database URL, an unreachable bot URL, a tournament or match that does not
exist) end with a one-line message and exit status 2, never a traceback; a database that cannot
be reached or used is one line and exit status 1. Ctrl-C ends a long-running command quietly.

Each command group imports what its commands need when they run, so ``gin-arena --help`` starts
fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import NoReturn

from arena.cli import (
    bots,
    database,
    demo,
    ladder,
    match,
    replay,
    rerun,
    selfplay,
    serve,
    sprt,
    tournaments,
    worker,
)
from arena.cli.options import UsageError
from arena.errors import NotFoundError

__all__ = ["build_parser", "main"]

#: The command groups, in the order ``gin-arena --help`` lists their commands.
GROUPS = (
    selfplay,
    demo,
    serve,
    tournaments,
    sprt,
    ladder,
    match,
    bots,
    database,
    worker,
    replay,
    rerun,
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistyped command line is one line (what is wrong, where to read more),
    not a usage block followed by the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``gin-arena`` parser: every command group registers its commands."""
    parser = _Parser(prog="gin-arena", description="Gin Rummy bot arena")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gin-arena`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
        return result
    except (UsageError, NotFoundError) as exc:
        print(f"gin-arena: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gin-arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error of ours.
        sys.stderr.close()
        return 0
    except Exception as exc:
        # A database that cannot be reached or used: one line, not a stack trace.
        from arena.db.errors import database_error_reason

        reason = database_error_reason(exc)
        if reason is None:
            raise
        print(f"gin-arena: error: database: {reason}", file=sys.stderr)
        return 1
