"""How much stronger is one house bot than another? Win rate over many matches, with a CI.

The bots' strategies run in process through the same wire types a remote bot receives (the
observation is encoded and decoded exactly as over HTTP), so the result is the bots' strength,
not the network's. Seeds are paired: each seed is played twice with the seats swapped, which
cancels most of the card luck.

    .venv/bin/python benchmarks/bench_strength.py --a strong --b greedy --pairs 100

A full run writes ``benchmarks/results/strength.json``; ``--quick`` (4 seeds) writes nothing
unless given ``--json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from arena.bots.strategies import STRATEGIES
from arena.playing.match import play_match
from arena.playing.players import Fault, MatchContext, Turn
from arena.protocol.wire import ActRequest, HistoryCache, act_request, decode_action
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet

RESULTS = Path(__file__).parent / "results" / "strength.json"

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ActRequest)


class WirePlayer:
    """A house strategy played in process through the wire format."""

    def __init__(self, kind: str, name: str) -> None:
        self.name = name
        self.strategy = STRATEGIES[kind](name)
        self.rules: dict[str, Any] = {}
        self.cache = HistoryCache()

    def start(self, context: MatchContext) -> Fault | None:
        self.rules = context.rules.to_dict()
        return None

    def act(self, turn: Turn) -> Action | Fault:
        request = _decoder.decode(_encoder.encode(act_request(turn, self.rules, self.cache)))
        return decode_action(_encoder.encode(self.strategy(request)))

    def end(self, summary: dict[str, object]) -> None:
        return None


def play_pair(args: tuple[str, str, int]) -> tuple[int, int]:
    """Both seatings of one seed: wins of bot ``a`` and of bot ``b``."""
    kind_a, kind_b, seed = args
    wins = [0, 0]
    for swap in (False, True):
        players = [WirePlayer(kind_a, "a"), WirePlayer(kind_b, "b")]
        if swap:
            players.reverse()
        record = play_match(players, RuleSet(), seed=seed, match_id=f"s{seed}{'s' if swap else ''}")
        if record.winner is not None:
            winner_is_a = (record.winner == 0) != swap
            wins[0 if winner_is_a else 1] += 1
    return wins[0], wins[1]


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--a", default="strong", choices=tuple(STRATEGIES))
    parser.add_argument("--b", default="greedy", choices=tuple(STRATEGIES))
    parser.add_argument(
        "--pairs", type=int, default=100, help="seeds; each is played twice (default 100)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--quick", action="store_true", help="4 seeds (a smoke test); writes no JSON"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    args = parser.parse_args(argv)
    if args.quick:
        args.pairs = min(args.pairs, 4)
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        results = list(pool.map(play_pair, [(args.a, args.b, seed) for seed in range(args.pairs)]))
    wins_a = sum(r[0] for r in results)
    wins_b = sum(r[1] for r in results)
    n = wins_a + wins_b
    low, high = wilson(wins_a, n)
    elapsed = time.perf_counter() - started
    out = {
        "a": args.a,
        "b": args.b,
        "matches": n,
        "wins_a": wins_a,
        "wins_b": wins_b,
        "win_rate_a": wins_a / n if n else None,
        "ci95": [low, high],
        "seconds": elapsed,
        "command": f"benchmarks/bench_strength.py --a {args.a} --b {args.b} --pairs {args.pairs}",
    }
    print(
        f"{args.a} v {args.b}: {wins_a}-{wins_b} over {n} matches "
        f"({args.pairs} seeds, both seatings); "
        f"{args.a} wins {wins_a / n:.1%} (95% CI {low:.1%}-{high:.1%}); {elapsed:.0f} s"
    )
    path = args.json or (None if args.quick else RESULTS)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
