"""``gin-arena selfplay``: in-process players play each other; outcome counts on stdout."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from arena.cli.console import progress_console
from arena.cli.options import UsageError, add_rules_options, rule_set
from arena.playing.players import HeuristicPlayer, Player, RandomPlayer

if TYPE_CHECKING:
    from arena.cli.options import Subcommands

__all__ = ["IN_PROCESS_PLAYERS", "register"]

IN_PROCESS_PLAYERS: dict[str, Callable[[str, int], Player]] = {
    "random": lambda name, seed: RandomPlayer(seed=seed, name=name),
    "heuristic": lambda name, seed: HeuristicPlayer(name=name),
}


def cmd_selfplay(args: argparse.Namespace) -> int:
    """Play in-process players against each other and print outcome counts."""
    from arena.playing.match import play_match
    from arena.reading.transcript import outcome_counts

    if args.matches < 1:
        raise UsageError("--matches must be at least 1")
    kinds = args.players.split(",")
    if len(kinds) != 2 or any(k not in IN_PROCESS_PLAYERS for k in kinds):
        raise UsageError(f"--players takes two of {', '.join(IN_PROCESS_PLAYERS)}, comma-separated")
    rules = rule_set(args)
    console = progress_console()
    records = []
    wins = [0, 0]
    started = time.perf_counter()
    with console.status("playing") as status:
        for i in range(args.matches):
            seed = args.seed + i
            players = [IN_PROCESS_PLAYERS[k](f"{k}-a", seed) for k in kinds[:1]]
            players.append(IN_PROCESS_PLAYERS[kinds[1]](f"{kinds[1]}-b", seed + 10_000))
            record = play_match(players, rules, seed=seed, match_id=f"selfplay-{seed}")
            records.append(record.to_stored())
            if record.winner is not None:
                wins[record.winner] += 1
            status.update(f"match {i + 1}/{args.matches}")
    elapsed = time.perf_counter() - started
    counts = outcome_counts(records)
    hands = sum(counts[k] for k in ("knock", "undercut", "gin", "big_gin", "dead", "tie"))
    out = {
        "matches": args.matches,
        "seed": args.seed,
        "players": {"a": kinds[0], "b": kinds[1]},
        "wins": {"a": wins[0], "b": wins[1]},
        "hands": hands,
        "outcomes": {
            "knocks": counts["knock"],
            "undercuts": counts["undercut"],
            "gins": counts["gin"],
            "big_gins": counts["big_gin"],
            "dead_hands": counts["dead"],
            "ties": counts["tie"],
            "misknocks": counts["misknock"],
        },
        "seconds": round(elapsed, 3),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    last = args.seed + args.matches - 1
    print(f"{args.matches} matches, {kinds[0]} (a) v {kinds[1]} (b), seeds {args.seed}..{last}")
    print(f"match wins: a {wins[0]}, b {wins[1]}")
    print(f"hands: {hands}")
    for key, value in out["outcomes"].items():
        print(f"  {key:<11} {value:>6}")
    print(f"{elapsed:.2f} s ({elapsed / args.matches * 1000:.0f} ms per match)")
    return 0


def register(sub: Subcommands) -> None:
    """``gin-arena selfplay``."""
    p = sub.add_parser(
        "selfplay", help="play in-process players against each other, print a summary"
    )
    p.add_argument("--matches", type=int, default=10, help="number of matches (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first match (default 0)")
    p.add_argument(
        "--players",
        default="heuristic,random",
        help="two of random, heuristic (default heuristic,random)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_rules_options(p)
    p.set_defaults(func=cmd_selfplay)
