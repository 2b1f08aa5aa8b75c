"""``gin-arena bot serve | register | list | check``: house bots, the registry, the checker."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import TYPE_CHECKING

from arena.bots.strategies import STRATEGIES
from arena.cli.database import created_database, existing_database, settings_from_environment
from arena.cli.options import (
    UsageError,
    add_wait_option,
    port_option,
    secret_option,
    wait_option,
)
from arena.cli.reach import wait_until_listening

if TYPE_CHECKING:
    from arena.cli.options import Subcommands

__all__ = ["register"]


def cmd_bot_serve(args: argparse.Namespace) -> int:
    """Serve a house bot on 127.0.0.1 until interrupted."""
    from arena.bots.house import house_bot

    port_option(args.port)
    secret = secret_option(args.secret)
    try:
        server = house_bot(args.kind, port=args.port, host=args.host, secret=secret)
    except (OSError, OverflowError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    with contextlib.suppress(KeyboardInterrupt):
        print(f"house bot {args.kind!r} listening on {server.url}", file=sys.stderr)
        server.serve_forever()
    return 0


def cmd_bot_register(args: argparse.Namespace) -> int:
    """Check the bot at URL and register it (what ``POST /api/v1/bots`` does)."""
    from arena.services.bots import enroll_bot

    settings = settings_from_environment()
    secret = secret_option(args.secret)
    db = created_database(settings)
    try:
        enrolled = enroll_bot(
            db, settings, name=args.name, url=args.url, owner=args.owner, secret=secret
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    finally:
        db.dispose()
    print(f"bot {enrolled.bot_id} {args.name!r} registered at {args.url}")
    print(f"owner token:    {enrolled.token}  (shown once: the owner's API key)")
    if secret is None:
        print(f"signing secret: {enrolled.secret}  (shown once: the bot verifies requests with it)")
    else:
        print("signing secret: the one given with --secret")
    return 0


def cmd_bot_list(args: argparse.Namespace) -> int:
    """Every registered bot: id, name, status, Elo, owner, URL."""
    from arena.services.bots import list_registered_bots

    db = existing_database(settings_from_environment())
    try:
        bots = list_registered_bots(db)
    finally:
        db.dispose()
    if args.json:
        rows = [
            {
                "id": b.id,
                "name": b.name,
                "status": b.status.value,
                "elo": round(b.elo, 1),
                "owner": b.owner,
                "url": b.url,
            }
            for b in bots
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not bots:
        print("no bots registered (gin-arena bot register NAME URL)")
        return 0
    table = [("id", "name", "status", "elo", "owner", "url")]
    table += [(str(b.id), b.name, b.status.value, f"{b.elo:.0f}", b.owner, b.url) for b in bots]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    return 0


def cmd_bot_check(args: argparse.Namespace) -> int:
    """Check a bot's conformance; exit 0 on pass, 1 on fail."""
    from arena.bots.check import check_bot

    secret = secret_option(args.secret)
    wait_s = wait_option(args.wait)
    wait_until_listening(args.url, allow_loopback=not args.production, wait_s=wait_s)
    report = check_bot(
        args.url,
        secret=secret,
        allow_loopback=not args.production,
        repeats=args.repeats,
        deadline_ms=args.deadline_ms,
    )
    print(report.render())
    return 0 if report.passed else 1


def register(sub: Subcommands) -> None:
    """``gin-arena bot serve | register | list | check``."""
    bot = sub.add_parser("bot", help="register, list, serve or check bots").add_subparsers(
        dest="bot_command", required=True, metavar="BOT_COMMAND"
    )
    p = bot.add_parser("serve", help="serve a house bot on 127.0.0.1")
    p.add_argument("--kind", required=True, choices=tuple(STRATEGIES))
    p.add_argument("--port", type=int, default=8101)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--secret", help="verify the arena's signatures with this secret")
    p.set_defaults(func=cmd_bot_serve)
    p = bot.add_parser(
        "register", help="check the bot at URL and register it (prints its token and secret)"
    )
    p.add_argument("name", metavar="NAME", help="the bot's unique name")
    p.add_argument("url", metavar="URL", help="where the bot serves the protocol")
    p.add_argument(
        "--owner",
        default="organiser",
        help="the owner's contact, e.g. an e-mail address (default 'organiser')",
    )
    p.add_argument(
        "--secret",
        help="the bot's signing secret (whsec_...), if the owner brings one (default: a new one)",
    )
    p.set_defaults(func=cmd_bot_register)
    p = bot.add_parser("list", help="every registered bot: id, name, status, Elo, owner, URL")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=cmd_bot_list)
    p = bot.add_parser("check", help="check that a bot speaks the protocol correctly")
    p.add_argument("url", metavar="URL")
    p.add_argument(
        "--secret",
        help="the bot's signing secret (also checks that unsigned, forged, stale, future and"
        " replayed requests are refused, and a rotation's two signatures accepted)",
    )
    p.add_argument(
        "--repeats", type=int, default=30, help="extra requests for latency (default 30)"
    )
    p.add_argument(
        "--deadline-ms", type=int, default=1000, help="deadline to check against (default 1000)"
    )
    add_wait_option(p)
    p.add_argument(
        "--production", action="store_true", help="refuse loopback URLs, as the service does"
    )
    p.set_defaults(func=cmd_bot_check)
