"""The whole-history rating fit at 1,000 to 10,000 players, against the dense fit it replaced.

1. **Cost.** ``fit_ratings`` on synthetic ladder schedules (1k/100k, 2k/200k, 5k/500k and
   10k/1M players/results), end to end, and split into the fit (results summed per pair, then
   the sparse Newton solve) and the intervals. Target: 10,000 players and 1,000,000 results
   in under 10 s, intervals included. The growth exponent is the log-log slope of the time.
2. **Baseline.** The dense fit this module used before (kept below, verbatim, as
   :func:`dense_fit_ratings`) on the same 1k and 2k data in the same session: its time, and
   how far its ratings and standard errors are from the sparse fit's.
3. **Intervals.** Beyond 2,000 players the standard errors come from a spectral approximation
   (:func:`arena.measures.bradley_terry.spectral_variances`); here it is run at 1,000 and 2,000
   players on several schedules and compared with the exact dense answer, and (full run) at
   10,000 on the ladder and the narrow ladder (a 10,000 x 10,000 inverse each: one to two
   minutes and 2.5 GB).

The ladder schedule: true strengths ~ N(0, 250); each pairing is a random player against one
close in strength (rank distance ~ exponential, mean 30) or, one time in ten, anyone; every
pairing is played twice with the seats swapped (the arena's duplicate pairs); results from the
Elo curve with 10% draws. Each player meets tens to about a hundred distinct opponents.

    .venv/bin/python benchmarks/bench_ratings.py            # full run (~6 min), writes results
    .venv/bin/python benchmarks/bench_ratings.py --quick    # small sizes (~15 s), writes nothing

A full run writes ``benchmarks/results/ratings.json``; ``--quick`` writes nothing unless given
``--json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from statistics import NormalDist
from typing import Any, Final, TypeVar

import numpy as np
from numpy.typing import NDArray

from arena.measures import bradley_terry
from arena.measures.ratings import (
    DEFAULT_MIN_MATCHES,
    INITIAL_RATING,
    FittedRating,
    RatingError,
    fit_ratings,
)

RESULTS = Path(__file__).parent / "results" / "ratings.json"
TARGET_S: Final = 10.0

FULL_SIZES = [(1000, 100_000), (2000, 200_000), (5000, 500_000), (10_000, 1_000_000)]
QUICK_SIZES = [(500, 50_000), (2500, 100_000)]
FULL_BASELINE = [(1000, 100_000), (2000, 200_000)]
QUICK_BASELINE = [(500, 50_000)]
FULL_ACCURACY = [1000, 2000]
QUICK_ACCURACY = [500]

Schedule = tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]


# --------------------------------------------------------------------------- schedules


def outcomes(
    rng: np.random.Generator, truth: NDArray[np.float64], a: NDArray[np.intp], b: NDArray[np.intp]
) -> NDArray[np.float64]:
    """Scores of ``a`` against ``b`` from the Elo curve, 10% of the decisive mass drawn."""
    p = 1.0 / (1.0 + 10.0 ** ((truth[b] - truth[a]) / 400.0))
    draw = 0.2 * np.minimum(p, 1.0 - p)
    u = rng.random(a.size)
    return np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))


def ladder(
    rng: np.random.Generator, n: int, matches: int, *, band: float = 30.0, explore: float = 0.1
) -> Schedule:
    """Close-in-strength pairings with some exploration, each played twice (seats swapped)."""
    truth = np.sort(rng.normal(0.0, 250.0, n))
    pairings = matches // 2
    a = rng.integers(0, n, pairings)
    offset = np.maximum(1, np.round(rng.exponential(band, pairings))).astype(np.intp)
    offset *= rng.choice(np.array([-1, 1]), pairings)
    b = a + offset
    b = np.clip(np.where((b < 0) | (b >= n), a - offset, b), 0, n - 1)
    anyone = rng.random(pairings) < explore
    b = np.where(anyone, (a + rng.integers(1, n, pairings)) % n, b)
    b = np.where(b == a, (a + 1) % n, b)
    a, b = np.concatenate([a, b]), np.concatenate([b, a])
    hidden = rng.permutation(n)  # player ids say nothing about strength
    return hidden[a], hidden[b], outcomes(rng, truth, a, b)


def uniform(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """Every pairing uniformly at random."""
    truth = rng.normal(0.0, 250.0, n)
    a = rng.integers(0, n, matches)
    b = (a + rng.integers(1, n, matches)) % n
    return a, b, outcomes(rng, truth, a, b)


def star(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """One player against everyone else, who meet nobody else."""
    truth = rng.normal(0.0, 250.0, n)
    b = rng.integers(1, n, matches)
    a = np.zeros(matches, dtype=np.intp)
    return a, b, outcomes(rng, truth, a, b)


def chain(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """Player i meets only i - 1 and i + 1 (the approximation's known weak case)."""
    truth = np.cumsum(rng.normal(0.0, 20.0, n))
    a = rng.integers(0, n - 1, matches)
    b = a + 1
    return a, b, outcomes(rng, truth, a, b)


def pools(rng: np.random.Generator, n: int, matches: int, *, count: int = 5) -> Schedule:
    """``count`` ladders that never meet, plus ten players with no results at all."""
    size = (n - 10) // count
    parts = [ladder(rng, size, matches // count) for _ in range(count)]
    a = np.concatenate([part[0] + k * size for k, part in enumerate(parts)])
    b = np.concatenate([part[1] + k * size for k, part in enumerate(parts)])
    return a, b, np.concatenate([part[2] for part in parts])


def unbeaten(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """The ladder, with 2% of the players winning every match they play (but not each other)."""
    a, b, score = ladder(rng, n, matches)
    top = rng.choice(n, max(1, n // 50), replace=False)
    top_a, top_b = np.isin(a, top), np.isin(b, top)
    score = np.where(top_a & ~top_b, 1.0, np.where(top_b & ~top_a, 0.0, score))
    return a, b, score


def ladder_tight(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """The ladder without exploration and with a narrow band (rank distance mean 5)."""
    return ladder(rng, n, matches, band=5.0, explore=0.0)


def ladder_narrow(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """The narrow ladder with one pairing in 500 against anyone: the hardest case here (too
    few long-range pairings to mix, too many for a band)."""
    return ladder(rng, n, matches, band=5.0, explore=0.002)


def ladder_tight_pools(rng: np.random.Generator, n: int, matches: int) -> Schedule:
    """Five ladders without exploration that never meet (banded pools)."""
    size = n // 5
    parts = [ladder_tight(rng, size, matches // 5) for _ in range(5)]
    a = np.concatenate([part[0] + k * size for k, part in enumerate(parts)])
    b = np.concatenate([part[1] + k * size for k, part in enumerate(parts)])
    return a, b, np.concatenate([part[2] for part in parts])


SCHEDULES: dict[str, Callable[[np.random.Generator, int, int], Schedule]] = {
    "ladder": ladder,
    "ladder, no exploration": ladder_tight,
    "narrow ladder, rare exploration": ladder_narrow,
    "uniform": uniform,
    "unbeaten players": unbeaten,
    "disconnected pools": pools,
    "star": star,
    "chain": chain,
}
#: Results per player for the accuracy schedules (the star and the chain get fewer).
PER_PLAYER = {"star": 20, "chain": 50}


def as_results(schedule: Schedule) -> list[tuple[int, int, float]]:
    a, b, score = schedule
    return list(zip(a.tolist(), b.tolist(), score.tolist(), strict=True))


def distinct_opponents(schedule: Schedule, n: int) -> dict[str, float]:
    a, b, _ = schedule
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pairs = np.unique(lo.astype(np.int64) * n + hi)
    degree = np.bincount(pairs // n, minlength=n) + np.bincount(pairs % n, minlength=n)
    return {
        "median": float(np.median(degree)),
        "p5": float(np.percentile(degree, 5)),
        "p95": float(np.percentile(degree, 95)),
    }


# --------------------------------------------------------------------------- measurements


def time_fit(n: int, matches: int, seed: int, *, repeats: int = 3) -> dict[str, Any]:
    """fit_ratings end to end on a ladder, and its phases on the same data: medians of
    ``repeats`` runs (the machine is shared; every run is kept)."""
    rng = np.random.default_rng(seed)
    schedule = ladder(rng, n, matches)
    results = as_results(schedule)
    a, b, score = schedule
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        fitted = fit_ratings(results)
        total = time.perf_counter() - started
        started = time.perf_counter()
        pairs = bradley_terry.pair_totals(n, ia=a, ib=b, score=score, weight=np.ones(a.size))
        rating = bradley_terry.solve_ratings(pairs, 1.0)
        solve = time.perf_counter() - started
        started = time.perf_counter()
        info = bradley_terry.information(pairs, rating, 1.0)
        bradley_terry.constrained_variances(info)
        intervals = time.perf_counter() - started
        runs.append({"total_s": total, "fit_s": solve, "intervals_s": intervals})
        assert len(fitted) == n
    return {
        "players": n,
        "results": matches,
        "distinct_pairs": int(pairs.lo.size),
        "opponents_per_player": distinct_opponents(schedule, n),
        "interval_method": bradley_terry.variance_method(info),
        **{key: float(np.median([run[key] for run in runs])) for key in runs[0]},
        "runs": runs,
        "load_1min": os.getloadavg()[0],
    }


def growth(rows: list[dict[str, Any]], key: str) -> float | None:
    """The log-log slope of ``key`` against the players (the cost's exponent)."""
    if len(rows) < 2:
        return None
    x = np.log([row["players"] for row in rows])
    y = np.log([row[key] for row in rows])
    return float(np.polyfit(x, y, 1)[0])


def compare_baseline(
    name: str, n: int, matches: int, seed: int, *, repeats: int = 3
) -> dict[str, Any]:
    """The old dense fit against the sparse one, same data, same session (medians of
    ``repeats`` runs each, taken in turns)."""
    results = as_results(SCHEDULES[name](np.random.default_rng(seed), n, matches))
    dense_runs, sparse_runs = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        old = dense_fit_ratings(results)
        dense_runs.append(time.perf_counter() - started)
        started = time.perf_counter()
        new = fit_ratings(results)
        sparse_runs.append(time.perf_counter() - started)
    dense_s, sparse_s = float(np.median(dense_runs)), float(np.median(sparse_runs))
    return {
        "schedule": name,
        "players": n,
        "results": matches,
        "dense_s": dense_s,
        "sparse_s": sparse_s,
        "dense_runs": dense_runs,
        "sparse_runs": sparse_runs,
        "speedup": dense_s / sparse_s,
        "max_rating_difference": max(abs(old[p].rating - new[p].rating) for p in old),
        "max_stderr_difference": max(abs(old[p].stderr - new[p].stderr) for p in old),
        "same_order": list(old) == list(new),
    }


def interval_error(name: str, n: int, seed: int) -> dict[str, Any]:
    """Spectral against exact standard errors on one schedule."""
    matches = n * PER_PLAYER.get(name, 100)
    a, b, score = SCHEDULES[name](np.random.default_rng(seed), n, matches)
    return _error_row(name, n, matches, a, b, score)


def _error_row(
    name: str,
    n: int,
    matches: int,
    a: NDArray[np.intp],
    b: NDArray[np.intp],
    score: NDArray[np.float64],
) -> dict[str, Any]:
    pairs = bradley_terry.pair_totals(n, ia=a, ib=b, score=score, weight=np.ones(a.size))
    info = bradley_terry.information(pairs, bradley_terry.solve_ratings(pairs, 1.0), 1.0)
    started = time.perf_counter()
    exact = np.sqrt(bradley_terry.exact_variances(info))
    exact_s = time.perf_counter() - started
    started = time.perf_counter()
    approximate = np.sqrt(bradley_terry.spectral_variances(info))
    spectral_s = time.perf_counter() - started
    relative = approximate / exact - 1.0
    # What constrained_variances does with this structure beyond 2,000 players.
    used = np.sqrt(bradley_terry.pooled_variances(info, banded=True)) / exact - 1.0
    return {
        "schedule": name,
        "players": n,
        "results": matches,
        "large_pools": bradley_terry.pooled_method(info),
        "used_max_abs_error": float(np.max(np.abs(used))),
        "median_abs_error": float(np.median(np.abs(relative))),
        "p99_abs_error": float(np.percentile(np.abs(relative), 99)),
        "max_abs_error": float(np.max(np.abs(relative))),
        "most_negative": float(relative.min()),
        "most_positive": float(relative.max()),
        "exact_s": exact_s,
        "spectral_s": spectral_s,
    }


def machine_info() -> dict[str, Any]:
    """What the figures depend on."""
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": _version("scipy"),
        "cpu_count": os.cpu_count(),
        "load_1min_at_start": round(os.getloadavg()[0], 2),
        "gin_arena": _git_revision(),
        "date": time.strftime("%Y-%m-%d"),
    }


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _git_revision() -> str | None:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=Path(__file__).parent,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or None


# --------------------------------------------------------------------------- report


def format_report(results: dict[str, Any]) -> str:
    lines = ["1. The fit, end to end (ladder schedules)", ""]
    lines.append(
        f"{'players':>8} {'results':>10} {'pairs':>9} {'opponents':>10} {'intervals':>9} "
        f"{'total s':>8} {'fit s':>7} {'interv. s':>9} {'load':>5}"
    )
    for row in results["fit"]:
        lines.append(
            f"{row['players']:>8,} {row['results']:>10,} {row['distinct_pairs']:>9,} "
            f"{row['opponents_per_player']['median']:>10.0f} {row['interval_method']:>9} "
            f"{row['total_s']:>8.2f} {row['fit_s']:>7.2f} {row['intervals_s']:>9.2f} "
            f"{row['load_1min']:>5.1f}"
        )
    g = results["growth"]
    lines.append(
        f"growth exponent (log-log slope in the players): total {_fmt(g['total_s'])}, "
        f"fit {_fmt(g['fit_s'])}, intervals {_fmt(g['intervals_s'])}"
    )
    target = results["target"]
    verdict = {True: "met", False: "NOT met", None: "not measured (10,000 players: a full run)"}
    lines.append(
        f"target: 10,000 players, 1,000,000 results in under {TARGET_S:.0f} s with intervals; "
        f"largest here {target['players']:,} and {target['results']:,}: "
        f"{target['seconds']:.2f} s, {verdict[target['met']]}"
    )
    lines += ["", "2. The old dense fit, same data, same session", ""]
    lines.append(
        f"{'schedule':<8} {'players':>8} {'results':>10} {'dense s':>8} {'sparse s':>9} "
        f"{'speedup':>8} {'max |d rating|':>15} {'max |d stderr|':>15} {'same order':>10}"
    )
    for row in results["baseline"]:
        lines.append(
            f"{row['schedule']:<8} {row['players']:>8,} {row['results']:>10,} "
            f"{row['dense_s']:>8.2f} {row['sparse_s']:>9.2f} {row['speedup']:>7.1f}x "
            f"{row['max_rating_difference']:>15.2e} {row['max_stderr_difference']:>15.2e} "
            f"{row['same_order']!s:>10}"
        )
    lines += ["", "3. Spectral standard errors against the exact ones (relative error)", ""]
    lines.append(
        f"{'schedule':<32} {'players':>8} {'median':>8} {'p99':>8} {'max':>8} "
        f"{'range':>20} {'exact s':>8} {'spectral s':>10}  beyond 2,000 (its max error)"
    )
    for row in results["accuracy"]:
        lines.append(
            f"{row['schedule']:<32} {row['players']:>8,} {_pct(row['median_abs_error']):>8} "
            f"{_pct(row['p99_abs_error']):>8} {_pct(row['max_abs_error']):>8} "
            f"{_pct(row['most_negative']) + ' .. ' + _pct(row['most_positive']):>20} "
            f"{row['exact_s']:>8.2f} {row['spectral_s']:>10.2f}  {row['large_pools']} "
            f"({_pct(row['used_max_abs_error'])})"
        )
    return "\n".join(lines)


def readme_table(results: dict[str, Any]) -> str:
    """The README's tables, made from a full run's JSON."""
    rows = [
        "| players | results | distinct pairs | opponents (median) | intervals | "
        "total s | fit s | intervals s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["fit"]:
        rows.append(
            f"| {row['players']:,} | {row['results']:,} | {row['distinct_pairs']:,} | "
            f"{row['opponents_per_player']['median']:.0f} | {row['interval_method']} | "
            f"{row['total_s']:.2f} | {row['fit_s']:.2f} | {row['intervals_s']:.2f} |"
        )
    g = results["growth"]
    rows.append(
        f"| growth exponent | | | | | {_fmt(g['total_s'])} | {_fmt(g['fit_s'])} | "
        f"{_fmt(g['intervals_s'])} |"
    )
    rows += [
        "",
        "| schedule | players | results | old dense fit s | sparse fit s | speedup | "
        "max rating difference | max stderr difference |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["baseline"]:
        rows.append(
            f"| {row['schedule']} | {row['players']:,} | {row['results']:,} | "
            f"{row['dense_s']:.2f} | {row['sparse_s']:.2f} | {row['speedup']:.1f}x | "
            f"{row['max_rating_difference']:.1e} | {row['max_stderr_difference']:.1e} |"
        )
    rows += [
        "",
        "| schedule | players | median error | p99 | max | range | spectral s | "
        "beyond 2,000 players: method (its max error) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in results["accuracy"]:
        rows.append(
            f"| {row['schedule']} | {row['players']:,} | {_pct(row['median_abs_error'])} | "
            f"{_pct(row['p99_abs_error'])} | {_pct(row['max_abs_error'])} | "
            f"{_pct(row['most_negative'])} .. {_pct(row['most_positive'])} | "
            f"{row['spectral_s']:.2f} | {row['large_pools']} "
            f"({_pct(row['used_max_abs_error'])}) |"
        )
    return "\n".join(rows)


def _pct(value: float) -> str:
    return f"{100.0 * value:+.3f}%" if value < 0 else f"{100.0 * value:.3f}%"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


# --------------------------------------------------------------------------- main


def run(
    *, quick: bool, exact_check: int | None, exact_schedules: list[str], seed: int
) -> dict[str, Any]:
    sizes = QUICK_SIZES if quick else FULL_SIZES
    results: dict[str, Any] = {
        "schema": 1,
        "mode": "quick" if quick else "full",
        "machine": machine_info(),
    }
    print("timing the fit ...", flush=True)
    results["fit"] = [time_fit(n, m, seed + k) for k, (n, m) in enumerate(sizes)]
    results["growth"] = {
        key: growth(results["fit"], key) for key in ("total_s", "fit_s", "intervals_s")
    }
    largest = results["fit"][-1]
    results["target"] = {
        "players": largest["players"],
        "results": largest["results"],
        "seconds": largest["total_s"],
        "met": largest["total_s"] < TARGET_S if largest["players"] >= 10_000 else None,
    }
    print("the old dense fit ...", flush=True)
    baseline = QUICK_BASELINE if quick else FULL_BASELINE
    results["baseline"] = [
        compare_baseline(name, n, m, seed + k)
        for k, (n, m) in enumerate(baseline)
        for name in ("ladder", "uniform")
    ]
    print("interval accuracy ...", flush=True)
    accuracy = []
    for n in QUICK_ACCURACY if quick else FULL_ACCURACY:
        for k, name in enumerate(SCHEDULES):
            accuracy.append(interval_error(name, n, seed + 100 + k))
    for k, name in enumerate(exact_schedules if exact_check else []):
        print(f"{name} at {exact_check:,} players (a dense inverse) ...", flush=True)
        accuracy.append(interval_error(name, exact_check, seed + 200 + k))
    results["accuracy"] = accuracy
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes; writes no JSON")
    parser.add_argument(
        "--exact-check",
        type=int,
        default=None,
        metavar="PLAYERS",
        help="also compare the spectral intervals with the exact ones at this size "
        "(full run default 10000; 0 to skip)",
    )
    parser.add_argument(
        "--exact-check-schedule",
        action="append",
        choices=tuple(SCHEDULES),
        help="the schedule(s) of that comparison (default: the ladder and the narrow ladder)",
    )
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    args = parser.parse_args(argv)
    exact_check = args.exact_check
    if exact_check is None:
        exact_check = 0 if args.quick else 10_000
    results = run(
        quick=args.quick,
        exact_check=exact_check or None,
        exact_schedules=args.exact_check_schedule or ["ladder", "narrow ladder, rare exploration"],
        seed=args.seed,
    )
    print()
    print(format_report(results))
    path = args.json or (None if args.quick else RESULTS)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {path}")
    return 0


# --------------------------------------------------------------------------- the old dense fit
# arena/measures/ratings.py's fit before the sparse solver (its arithmetic verbatim, its input
# checks inlined): a damped Newton solve of the bordered n x n information matrix, and the
# intervals from its dense inverse. The baseline above, and the reference of
# tests/test_ratings_sparse.py.

P = TypeVar("P", bound=Hashable)
FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
_S: Final = 400.0 / math.log(10.0)
_SCORES: Final = frozenset({0.0, 0.5, 1.0})
_MAX_NEWTON_STEPS: Final = 200


def dense_fit_ratings(
    results: Iterable[tuple[P, P, float]],
    *,
    weights: Iterable[float] | None = None,
    players: Iterable[P] = (),
    min_matches: int = DEFAULT_MIN_MATCHES,
    level: float = 0.95,
    prior_draws: float = 1.0,
) -> dict[P, FittedRating[P]]:
    """The dense fit: same model, prior, anchor and intervals as ``fit_ratings``."""
    index: dict[P, int] = {}
    rows_a: list[int] = []
    rows_b: list[int] = []
    scores: list[float] = []
    for player_a, player_b, score_a in results:
        if player_a == player_b:
            raise RatingError(f"a player cannot be rated against itself: {player_a!r}")
        if score_a not in _SCORES:
            raise RatingError(f"score must be 0, 0.5 or 1, not {score_a!r}")
        scores.append(float(score_a))
        rows_a.append(index.setdefault(player_a, len(index)))
        rows_b.append(index.setdefault(player_b, len(index)))
    for player in players:
        index.setdefault(player, len(index))
    weight = np.ones(len(scores)) if weights is None else np.array(list(weights), dtype=np.float64)
    n = len(index)
    ia, ib = np.array(rows_a, dtype=np.intp), np.array(rows_b, dtype=np.intp)
    played = weight > 0
    matches = np.bincount(ia[played], minlength=n) + np.bincount(ib[played], minlength=n)
    rating, stderr = _dense_fit(
        n, ia=ia, ib=ib, score=np.array(scores, dtype=np.float64), weight=weight, prior=prior_draws
    )
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    fitted = [
        FittedRating(
            player=player,
            rating=float(rating[i]) + INITIAL_RATING,
            ci_low=float(rating[i] - z * stderr[i]) + INITIAL_RATING,
            ci_high=float(rating[i] + z * stderr[i]) + INITIAL_RATING,
            stderr=float(stderr[i]),
            matches=int(matches[i]),
            is_provisional=int(matches[i]) < min_matches,
        )
        for player, i in index.items()
    ]
    fitted.sort(key=lambda f: -f.rating)
    return {f.player: f for f in fitted}


def _dense_fit(
    n: int, *, ia: IntArray, ib: IntArray, score: FloatArray, weight: FloatArray, prior: float
) -> tuple[FloatArray, FloatArray]:
    if n <= 1:
        return np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.float64)
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    score_lo = np.where(ia < ib, score, 1.0 - score)
    pair_ids, pair_of = np.unique(lo * n + hi, return_inverse=True)
    total = _scatter(pair_of, weight, pair_ids.size)
    won = _scatter(pair_of, weight * score_lo, pair_ids.size)
    i, j = pair_ids // n, pair_ids % n

    def objective(r: FloatArray) -> float:
        d, x = (r[i] - r[j]) / _S, r / _S
        pairs = won * _log_sigmoid(d) + (total - won) * _log_sigmoid(-d)
        virtual = 0.5 * prior * (_log_sigmoid(x) + _log_sigmoid(-x))
        return float(pairs.sum() + virtual.sum())

    def gradient_and_bordered_information(r: FloatArray) -> tuple[FloatArray, FloatArray]:
        p, p0 = _sigmoid((r[i] - r[j]) / _S), _sigmoid(r / _S)
        residual = (won - total * p) / _S
        grad = _scatter(i, residual, n) - _scatter(j, residual, n)
        grad += prior * (0.5 - p0) / _S
        h = total * p * (1.0 - p) / _S**2
        bordered = np.zeros((n + 1, n + 1))
        bordered[i, j] = -h
        bordered[j, i] = -h
        diagonal = np.arange(n)
        bordered[diagonal, diagonal] = (
            _scatter(i, h, n) + _scatter(j, h, n) + prior * p0 * (1.0 - p0) / _S**2
        )
        bordered[n, :n] = 1.0
        bordered[:n, n] = 1.0
        return grad, bordered

    r = np.zeros(n)
    value = objective(r)
    for _ in range(_MAX_NEWTON_STEPS):
        grad, bordered = gradient_and_bordered_information(r)
        step = np.linalg.solve(bordered, np.append(grad, 0.0))[:n]
        decrement = float(grad @ step)
        if decrement < 1e-12:
            break
        t = 1.0
        while True:
            candidate = r + t * step
            new_value = objective(candidate)
            if new_value >= value + 1e-4 * t * decrement or t < 1e-12:
                break
            t /= 2.0
        if new_value <= value:
            break
        r, value = candidate, new_value
    r -= r.mean()
    _, bordered = gradient_and_bordered_information(r)
    variance = np.diag(np.linalg.inv(bordered))[:n]
    return r, np.sqrt(np.maximum(variance, 0.0))


def _scatter(index: IntArray, values: FloatArray, size: int) -> FloatArray:
    return np.bincount(index, weights=values, minlength=size).astype(np.float64, copy=False)


def _sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def _log_sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = -np.logaddexp(0.0, -x)
    return out


if __name__ == "__main__":
    sys.exit(main())
