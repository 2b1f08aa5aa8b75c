"""``gin-arena match``: one match between two bot URLs; the record as JSON on stdout, progress
on stderr."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING

from arena.cli.console import progress_console
from arena.cli.options import (
    UsageError,
    add_rules_options,
    add_wait_option,
    port_option,
    rule_set,
    secret_option,
    wait_option,
)
from arena.cli.reach import bot_name

if TYPE_CHECKING:
    from arena.cli.options import Subcommands
    from arena.playing.match import MatchProgress
    from arena.playing.players import Player

__all__ = ["register"]


def cmd_match(args: argparse.Namespace) -> int:
    """Play one match between two bot URLs; the record as JSON on stdout."""
    from arena.playing.match import NeitherStartedError, play_match
    from arena.protocol.http_player import HttpPlayer
    from arena.reading.transcript import transcript

    rules = rule_set(args)
    if args.view:
        port_option(args.view_port, "--view-port")  # a bad port is said before the match
    console = progress_console()
    secrets = [
        secret_option(args.secret_a, "--secret-a") or secret_option(args.secret),
        secret_option(args.secret_b, "--secret-b") or secret_option(args.secret),
    ]
    urls = (args.url_a, args.url_b)
    # A mistyped or dead URL is the user's error, not a forfeit: ask each bot who it is first.
    wait_s = wait_option(args.wait)
    names = [bot_name(url, allow_loopback=not args.production, wait_s=wait_s) for url in urls]
    if names[0] == names[1]:
        names = [f"{names[0]} (a)", f"{names[1]} (b)"]
    players: list[Player] = [
        HttpPlayer(url, name=names[i], secret=secrets[i], allow_loopback=not args.production)
        for i, url in enumerate(urls)
    ]
    if not args.quiet:
        for seat, url in zip("ab", urls, strict=True):
            console.print(f"{seat}: {names['ab'.index(seat)]} at {url}", highlight=False)

    def progress(p: MatchProgress) -> None:
        # Numbered as in the record: games[i].index and games[i].hands[j].index, from 0.
        console.print(
            f"game {p.game} deal {p.deal}: {p.last.outcome.value:<8} "
            f"points a {p.game_points[0]:>3} b {p.game_points[1]:>3}  "
            f"games won a {p.games_won[0]} b {p.games_won[1]}",
            highlight=False,
        )

    started = time.monotonic()
    try:
        record = play_match(
            players,
            rules,
            seed=args.seed,
            match_id=args.match_id or f"match-{args.seed}",
            on_progress=None if args.quiet else progress,
        )
    except NeitherStartedError as exc:  # both answered GET / a moment ago, then failed /start
        raise UsageError(f"{urls[0]} and {urls[1]}: {exc}") from None
    stored = record.to_stored()
    console.print(transcript(stored, deals=False), highlight=False)
    print(json.dumps(stored.to_dict(), indent=None if args.compact else 2), flush=args.view)
    if args.view:
        from arena.cli.match_view import serve_view

        duration_ms = round((time.monotonic() - started) * 1000)
        serve_view(record, urls, port=args.view_port, duration_ms=duration_ms)
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena match URL_A URL_B --seed N``."""
    p = sub.add_parser(
        "match", help="play one match between two bot URLs; record as JSON on stdout"
    )
    p.add_argument("url_a", metavar="URL_A")
    p.add_argument("url_b", metavar="URL_B")
    p.add_argument("--seed", type=int, required=True, help="match seed (decides every deal)")
    p.add_argument("--secret", help="signing secret for both bots (whsec_...)")
    p.add_argument("--secret-a", help="signing secret for URL_A")
    p.add_argument("--secret-b", help="signing secret for URL_B")
    p.add_argument("--match-id", help="match id sent to the bots (default match-SEED)")
    p.add_argument(
        "--production", action="store_true", help="refuse loopback URLs, as the service does"
    )
    add_wait_option(p)
    p.add_argument("--quiet", action="store_true", help="no per-deal progress on stderr")
    p.add_argument("--compact", action="store_true", help="print the JSON on one line")
    p.add_argument(
        "--view",
        action="store_true",
        help="then serve the replay viewer for this match on 127.0.0.1 until Ctrl-C",
    )
    p.add_argument(
        "--view-port",
        type=int,
        default=0,
        metavar="N",
        help="the viewer's port (default 0: any free port; the URL is printed)",
    )
    add_rules_options(p)
    p.set_defaults(func=cmd_match)
