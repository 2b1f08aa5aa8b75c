"""How strong is each house bot? Win rates against OpenSpiel's SimpleGinRummyBot, with a CI.

Every house bot (``random``, ``greedy``, ``strong``, ``expert``) plays standard matches (best of
five games to 250, the ``standard`` preset) against pyspiel's ``SimpleGinRummyBot`` (the
``bench`` extra; ``benchmarks/openspiel_bot.py`` puts it behind the protocol), and ``expert``
also plays ``strong``. Matches are duplicate pairs: each seed is played twice with the seats
swapped (the same deals, each bot holding each hand once), which cancels most of the card luck.

Every bot, the OpenSpiel one included, is called in process with the request exactly as a
remote bot receives it (the observation encoded to JSON and decoded as over HTTP) and answers
through the wire format, so the result is the bots' strength, not the network's. Each answer's
think time (the strategy call alone) is measured; the report gives its mean, p99 and maximum
per bot. Win rates carry a Wilson 95% interval.

    .venv/bin/python benchmarks/bench_strength.py               # full run, results/strength.json
    .venv/bin/python benchmarks/bench_strength.py --quick       # smoke test, writes nothing
    .venv/bin/python benchmarks/bench_strength.py --a expert --b strong --pairs 50

A full run (100 pairs, 200 matches, for each expert pairing; 25 pairs, 50 matches, for the
other bots against OpenSpiel's: ``--pairs``, ``--baseline-pairs``) writes
``benchmarks/results/strength.json``;
``--quick`` (one pair per pairing of one-game matches to 100) writes nothing unless given
``--json``.
One process, one match at a time (``--workers N`` spreads the pairs over N processes);
``--merge`` keeps the results file's other pairings, so a full run can be made one pairing at
a time (``--a expert --b openspiel --merge``, then the next).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from arena.bots.strategies import STRATEGIES
from arena.playing.match import play_match
from arena.playing.players import Fault, MatchContext, Turn
from arena.protocol.wire import ActRequest, HistoryCache, WireAction, act_request, decode_action
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet

RESULTS = Path(__file__).parent / "results" / "strength.json"
OPENSPIEL = "openspiel"
HOUSE = ("random", "greedy", "strong", "expert")
#: The full run's pairings: (a, b); win rates are a's.
PAIRINGS = (*((kind, OPENSPIEL) for kind in HOUSE), ("expert", "strong"))
#: The target of issue 13: expert wins at least this share against both.
TARGET = 0.60

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(ActRequest)
_openspiel: Any = None


def strategy(kind: str, name: str) -> Callable[[ActRequest], WireAction]:
    """A house strategy by kind, or the OpenSpiel bot (one per process: its setup costs ms)."""
    global _openspiel
    if kind != OPENSPIEL:
        return STRATEGIES[kind](name)
    if _openspiel is None:
        from openspiel_bot import OpenSpielSimpleBot  # noqa: PLC0415

        _openspiel = OpenSpielSimpleBot()
    return _openspiel  # type: ignore[no-any-return]


class WirePlayer:
    """A strategy played in process through the wire format, its think time measured."""

    def __init__(self, kind: str, name: str, times: list[float]) -> None:
        self.name = name
        self.strategy = strategy(kind, name)
        self.rules: dict[str, Any] = {}
        self.cache = HistoryCache()
        self.times = times

    def start(self, context: MatchContext) -> Fault | None:
        self.rules = context.rules.to_dict()
        return None

    def act(self, turn: Turn) -> Action | Fault:
        request = _decoder.decode(_encoder.encode(act_request(turn, self.rules, self.cache)))
        started = time.perf_counter()
        answer = self.strategy(request)
        self.times.append(time.perf_counter() - started)
        return decode_action(_encoder.encode(answer))

    def end(self, summary: dict[str, object]) -> None:
        return None


def play_pair(args: tuple[str, str, int, RuleSet]) -> dict[str, Any]:
    """Both seatings of one seed: wins and faults of ``a`` and ``b``, and their think times."""
    kind_a, kind_b, seed, rules = args
    wins = [0, 0]
    faults = [0, 0]
    times: tuple[list[float], list[float]] = ([], [])
    for swap in (False, True):
        players = [WirePlayer(kind_a, "a", times[0]), WirePlayer(kind_b, "b", times[1])]
        if swap:
            players.reverse()
        record = play_match(players, rules, seed=seed, match_id=f"s{seed}{'s' if swap else ''}")
        for fault in record.faults:
            faults[(fault.seat == 1) != swap] += 1
        if record.winner is not None:
            wins[(record.winner == 1) != swap] += 1
    return {"wins": wins, "faults": faults, "times": times}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion.

    >>> [round(x, 3) for x in wilson(120, 200)]
    [0.531, 0.665]
    """
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def think_times(times: list[float]) -> dict[str, float | int]:
    """Mean, p99 and maximum of one bot's think times, in milliseconds."""
    if not times:
        return {"decisions": 0}
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
    return {
        "decisions": len(ordered),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 4),
        "p99_ms": round(p99 * 1000, 4),
        "max_ms": round(ordered[-1] * 1000, 4),
    }


def run_pairing(a: str, b: str, pairs: int, rules: RuleSet, workers: int) -> dict[str, Any]:
    """``pairs`` duplicate pairs of ``a`` against ``b``: the figures of one pairing."""
    jobs = [(a, b, seed, rules) for seed in range(pairs)]
    started = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(play_pair, jobs))
    else:
        results = [play_pair(job) for job in jobs]
    wins_a = sum(r["wins"][0] for r in results)
    wins_b = sum(r["wins"][1] for r in results)
    matches = 2 * pairs
    low, high = wilson(wins_a, matches)
    return {
        "a": a,
        "b": b,
        "pairs": pairs,
        "matches": matches,
        "wins_a": wins_a,
        "wins_b": wins_b,
        "win_rate_a": wins_a / matches,
        "ci95": [round(low, 4), round(high, 4)],
        "faults": {
            a: sum(r["faults"][0] for r in results),
            b: sum(r["faults"][1] for r in results),
        },
        "think_time": {
            a: think_times([t for r in results for t in r["times"][0]]),
            b: think_times([t for r in results for t in r["times"][1]]),
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def openspiel_missing() -> str | None:
    """Why the OpenSpiel bot cannot play here, or None."""
    try:
        import pyspiel  # noqa: F401, PLC0415
    except ImportError:
        return "OpenSpiel not installed: pip install -e .[bench]"
    return None


def line(p: dict[str, Any]) -> str:
    a, b = p["a"], p["b"]
    low, high = p["ci95"]
    ta, tb = p["think_time"][a], p["think_time"][b]
    return (
        f"{a:>7} v {b:<9} {p['wins_a']:>4}-{p['wins_b']:<4} of {p['matches']:>4}  "
        f"{a} wins {p['win_rate_a']:6.1%} (95% CI {low:.1%}-{high:.1%})  "
        f"think ms mean/p99: {a} {ta.get('mean_ms', 0):.3f}/{ta.get('p99_ms', 0):.3f}, "
        f"{b} {tb.get('mean_ms', 0):.3f}/{tb.get('p99_ms', 0):.3f}  "
        f"faults {p['faults'][a]}/{p['faults'][b]}  {p['seconds']:.0f} s"
    )


def merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with the pairings of ``old`` it did not play, in the full run's order."""
    played = {(p["a"], p["b"]) for p in new["pairings"]}
    pairings = [p for p in old.get("pairings", []) if (p["a"], p["b"]) not in played]
    pairings += new["pairings"]
    order = {pair: i for i, pair in enumerate(PAIRINGS)}
    pairings.sort(key=lambda p: order.get((p["a"], p["b"]), len(order)))
    commands = [c for c in old.get("commands", [old.get("command")]) if c]
    return {
        **new,
        "pairings": pairings,
        "commands": [*commands, new["command"]],
        "seconds": round(old.get("seconds", 0) + new["seconds"], 1),
    }


def readme_table(results: dict[str, Any]) -> str:
    """The Markdown table of benchmarks/README.md, made from a results file."""
    rows = [
        "| pairing | matches | wins | win rate | Wilson 95% "
        "| think ms, mean / p99 / max | faults |",
        "|---|---|---|---|---|---|---|",
    ]
    for p in results["pairings"]:
        a, b = p["a"], p["b"]
        low, high = p["ci95"]
        think = "; ".join(
            f"{bot} {t['mean_ms']:.2f} / {t['p99_ms']:.2f} / {t['max_ms']:.1f}"
            for bot, t in p["think_time"].items()
        )
        rows.append(
            f"| `{a}` v `{b}` | {p['matches']} | {p['wins_a']}-{p['wins_b']} "
            f"| {p['win_rate_a']:.1%} | {low:.1%}-{high:.1%} | {think} "
            f"| {p['faults'][a]} / {p['faults'][b]} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    bots = (*STRATEGIES, OPENSPIEL)
    parser.add_argument("--a", choices=bots, help="one pairing: this bot ...")
    parser.add_argument("--b", choices=bots, help="... against this one (default: openspiel)")
    parser.add_argument(
        "--pairs",
        type=int,
        default=100,
        help="seeds of the expert pairings (and of --a/--b), each played twice (100)",
    )
    parser.add_argument(
        "--baseline-pairs",
        type=int,
        default=25,
        help="seeds of random, greedy and strong against the OpenSpiel bot (25)",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--quick", action="store_true", help="one pair of one-game matches to 100; writes no JSON"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="keep the other pairings of the results file, replacing only those played",
    )
    args = parser.parse_args(argv)
    rules = RuleSet.standard()
    if args.quick:
        args.pairs = args.baseline_pairs = 1
        rules = RuleSet.standard(best_of=1, target=100)
    pairings: tuple[tuple[str, str], ...] = PAIRINGS
    if args.a is not None:
        pairings = ((args.a, args.b or OPENSPIEL),)
    missing = openspiel_missing()
    skipped = [p for p in pairings if missing and OPENSPIEL in p]
    if skipped:
        print(f"{missing}: skipping {', '.join(f'{a} v {b}' for a, b in skipped)}")
    started = time.perf_counter()
    results = []
    for a, b in pairings:
        if (a, b) in skipped:
            continue
        pairs = args.pairs if "expert" in (a, b) or args.a else args.baseline_pairs
        results.append(run_pairing(a, b, pairs, rules, args.workers))
        print(line(results[-1]), flush=True)
    elapsed = time.perf_counter() - started
    command = "benchmarks/bench_strength.py" + (
        f" --a {args.a} --b {args.b or OPENSPIEL}" if args.a else ""
    )
    out = {
        "schema": 2,
        "date": datetime.now(UTC).date().isoformat(),
        "mode": "quick" if args.quick else "full",
        "command": command
        + ("" if args.a else f" --baseline-pairs {args.baseline_pairs}")
        + f" --pairs {args.pairs}"
        + (" --quick" if args.quick else ""),
        "rules": "standard" + (" (one game to 100)" if args.quick else ""),
        "machine": {
            "python": platform.python_version(),
            "arch": platform.machine(),
            "cpu_count": os.cpu_count(),
        },
        "target": TARGET,
        "pairings": results,
        "skipped": [f"{a} v {b}: {missing}" for a, b in skipped],
        "seconds": round(elapsed, 1),
    }
    print(readme_table(out))
    path = args.json or (None if args.quick else RESULTS)
    if path is not None and args.merge and path.exists():
        out = merged(json.loads(path.read_text()), out)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out, indent=2) + "\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
