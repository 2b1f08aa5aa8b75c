"""Engine benchmark: our pure-Python rules engine against OpenSpiel and RLCard, in one run.

Three figures, each measured for every installed engine in the same process, one after the
other, so the ratios compare like with like on this machine:

1. **Minimum deadwood** of distinct random 10-card hands, in microseconds per hand. The hands
   are generated once, converted to each engine's native form before timing, and every repeat
   uses a fresh chunk of hands, so no engine can be helped by a cache. Best of the repeats.
   Ours is timed three ways: ``deadwood_mask`` on a mask, and the public ``deadwood()`` on a
   ``list[Card]`` and on text. The engines' answers are compared hand by hand (a free
   conformance check).
2. **Uniformly random self-play**: deals (hands) per second and actions per second. Hands per
   second is the comparable figure: OpenSpiel also counts dealing as chance actions and meld
   laying as player actions, RLCard counts its two scoring steps as actions.
3. **A best-of-five match to 250** between two in-process :class:`HeuristicPlayer`s, through
   the real match runner (observations, validation, records): milliseconds per match.

Run it from the repository root::

    .venv/bin/python benchmarks/bench_engine.py            # full run, writes results/engine.json
    .venv/bin/python benchmarks/bench_engine.py --quick    # smoke test, writes nothing
    .venv/bin/python benchmarks/bench_engine.py --profile selfplay   # cProfile of our engine

OpenSpiel and RLCard are optional (``pip install -e '.[bench]'``); a missing one is reported
and skipped. Garbage collection stays on (as in real use) and is run before each timed region.
Times are this process's CPU time (``time.process_time``): on a quiet machine that is the wall
time of this single-threaded work, and on a shared one it leaves out the time spent waiting
for a CPU, so other load moves the figures less.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.metadata
import json
import math
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.cards import CARDS, SUITS
from arena.playing.match import play_match
from arena.playing.players import HeuristicPlayer
from arena.rules import RuleSet, apply, deadwood, legal_actions, new_deal
from arena.rules.melds import deadwood_mask

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_JSON = ROOT / "benchmarks" / "results" / "engine.json"
INSTALL_HINT = "pip install -e .[bench]"

OURS = "ours"
OPENSPIEL = "openspiel"
RLCARD = "rlcard"
ENGINES = (OURS, OPENSPIEL, RLCARD)

#: Targets from the issues: ours/OpenSpiel time per deadwood at most this (the mask path) ...
DEADWOOD_TARGET = 3.0
#: ... the public ``deadwood()`` on parsed Cards at most this (issue 10, part 5) ...
DEADWOOD_CARDS_TARGET = 1.5
#: ... and ours/OpenSpiel random self-play hands per second at least this.
SELFPLAY_TARGET = 0.5


@dataclass(frozen=True, slots=True)
class Sizes:
    """How much work each part does (full run or ``--quick``)."""

    deadwood_hands: int  # per repeat, for ours and OpenSpiel
    deadwood_hands_rlcard: int  # per repeat (the first hands of the same chunk)
    deadwood_repeats: int
    selfplay_deals: int  # per repeat, ours and OpenSpiel
    selfplay_deals_rlcard: int
    selfplay_repeats: int
    match_seeds: int


FULL = Sizes(200_000, 5_000, 5, 2_000, 500, 3, 20)
QUICK = Sizes(5_000, 200, 2, 40, 20, 2, 2)


# --- the external engines -------------------------------------------------------------------


class Unavailable:
    """An engine that could not be loaded, with the reason shown in the report."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def load_openspiel() -> Any:
    """The ``pyspiel`` module, or :class:`Unavailable`."""
    try:
        import pyspiel  # noqa: PLC0415
    except ImportError:
        return Unavailable(f"OpenSpiel not installed: {INSTALL_HINT}")
    return pyspiel


def load_rlcard() -> Any:
    """RLCard's gin rummy modules as a namespace, or :class:`Unavailable`."""
    try:
        import numpy  # noqa: PLC0415
        from rlcard.games.gin_rummy.game import GinRummyGame  # noqa: PLC0415
        from rlcard.games.gin_rummy.utils import melding  # noqa: PLC0415
        from rlcard.games.gin_rummy.utils import utils as rl_utils  # noqa: PLC0415
    except ImportError:
        return Unavailable(f"RLCard not installed: {INSTALL_HINT}")

    class RLCard:
        Game = GinRummyGame
        np = numpy

        @staticmethod
        def min_deadwood(hand: list[Any]) -> int:
            """RLCard's own way to score a 10-card hand (as in ``GinRummyRound.score_player_0``)."""
            clusters = melding.get_best_meld_clusters(hand=hand)
            best = clusters[0] if clusters else []
            return int(rl_utils.get_deadwood_count(hand=hand, meld_cluster=best))

        get_card = staticmethod(rl_utils.get_card)

    return RLCard


def load_engines(selected: Sequence[str]) -> dict[str, Any]:
    """Each selected external engine (module/namespace or :class:`Unavailable`)."""
    loaders = {OPENSPIEL: load_openspiel, RLCARD: load_rlcard}
    return {name: loaders[name]() for name in selected if name in loaders}


# Card conversions. Ours: suit*13+rank with suits "cdhs". OpenSpiel: suits "scdh".
# RLCard: suits "SHDC". Ranks are ace-low in all three.
_TO_OPENSPIEL = tuple("scdh".index(SUITS[c // 13]) * 13 + c % 13 for c in range(52))
_TO_RLCARD = tuple("shdc".index(SUITS[c // 13]) * 13 + c % 13 for c in range(52))


# --- timing helpers -------------------------------------------------------------------------


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """CPU seconds taken by one call, and its result (collect garbage first)."""
    gc.collect()
    start = time.process_time()
    result = fn()
    return time.process_time() - start, result


def _sig(x: float, digits: int = 4) -> float:
    """Round to a few significant digits (keeps the JSON small and diff-friendly)."""
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, digits - 1 - math.floor(math.log10(abs(x))))


# --- 1. minimum deadwood --------------------------------------------------------------------


def distinct_hands(count: int, seed: int) -> list[tuple[int, ...]]:
    """``count`` distinct random 10-card hands (our card indices), reproducible from ``seed``."""
    rng = random.Random(f"bench-deadwood:{seed}")
    seen: set[int] = set()
    hands: list[tuple[int, ...]] = []
    cards = range(52)
    while len(hands) < count:
        hand = tuple(rng.sample(cards, 10))
        mask = 0
        for c in hand:
            mask |= 1 << c
        if mask not in seen:
            seen.add(mask)
            hands.append(hand)
    return hands


def _as_text(hand: tuple[int, ...]) -> str:
    """A hand as the text a person would write (``"As 7d Kc ..."``)."""
    return " ".join(str(CARDS[c]) for c in hand)


def _run_all(fn: Callable[[Any], int], items: list[Any]) -> list[int]:
    return [fn(x) for x in items]


def bench_deadwood(sizes: Sizes, engines: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Microseconds per hand for each engine (best of the repeats) and the cross-check."""
    n, n_rl, repeats = sizes.deadwood_hands, sizes.deadwood_hands_rlcard, sizes.deadwood_repeats
    all_hands = distinct_hands(n * repeats, seed)
    chunks = [all_hands[i * n : (i + 1) * n] for i in range(repeats)]

    variants: dict[str, tuple[Callable[[Any], int], Callable[[tuple[int, ...]], Any], int]] = {
        "ours_mask": (deadwood_mask, lambda h: sum(1 << c for c in h), n),
        "ours_cards": (deadwood, lambda h: [CARDS[c] for c in h], n),
        "ours_text": (deadwood, _as_text, n),
    }
    skipped: dict[str, str] = {}
    pyspiel = engines.get(OPENSPIEL)
    if pyspiel is not None and not isinstance(pyspiel, Unavailable):
        utils = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        variants["openspiel"] = (utils.min_deadwood, lambda h: [_TO_OPENSPIEL[c] for c in h], n)
    elif pyspiel is not None:
        skipped["openspiel"] = pyspiel.reason
    rl = engines.get(RLCARD)
    if rl is not None and not isinstance(rl, Unavailable):
        card = rl.get_card
        variants["rlcard"] = (rl.min_deadwood, lambda h: [card(_TO_RLCARD[c]) for c in h], n_rl)
    elif rl is not None:
        skipped["rlcard"] = rl.reason

    best: dict[str, float] = dict.fromkeys(variants, math.inf)
    mismatches: dict[str, int] = dict.fromkeys(variants, 0)
    example: str | None = None
    for chunk in chunks:
        reference: list[int] | None = None
        for name, (fn, convert, count) in variants.items():
            native = [convert(h) for h in chunk[:count]]
            seconds, results = _timed(lambda fn=fn, native=native: _run_all(fn, native))
            best[name] = min(best[name], seconds / count)
            if reference is None:
                reference = results
                continue
            for i, (got, want) in enumerate(zip(results, reference, strict=False)):
                if got != want:
                    mismatches[name] += 1
                    if example is None:
                        cards = " ".join(str(CARDS[c]) for c in sorted(chunk[i]))
                        example = f"{name} says {got}, ours {want}: {cards}"
    out: dict[str, Any] = {
        "hands_per_repeat": {name: v[2] for name, v in variants.items()},
        "repeats": repeats,
        "us_per_hand": {name: _sig(best[name] * 1e6) for name in variants},
        "mismatches": {k: v for k, v in mismatches.items() if k != "ours_mask"},
        "skipped": skipped,
    }
    if example is not None:
        out["mismatch_example"] = example
    return out


# --- 2. uniformly random self-play ----------------------------------------------------------


def selfplay_ours(deals: int, seed: int) -> dict[str, float]:
    """Random playouts with our engine: ``new_deal`` then ``apply(rng.choice(legal_actions))``."""
    rules = RuleSet()

    def run() -> int:
        rng = random.Random(seed)
        actions = 0
        for i in range(deals):
            state = new_deal(rules, i % 2, rng=rng)
            while not state.is_over:
                state = apply(state, rng.choice(legal_actions(state)))
                actions += 1
        return actions

    seconds, actions = _timed(run)
    return {"seconds": seconds, "deals": deals, "actions": actions, "chance": 0}


def selfplay_openspiel(pyspiel: Any, deals: int, seed: int) -> dict[str, float]:
    """Random playouts of ``gin_rummy``; chance nodes pick uniformly among ``chance_outcomes``.

    Each deal clones one initial state: ``new_initial_state()`` rebuilds OpenSpiel's meld tables
    (milliseconds), which a fair driver avoids. Its cost is reported apart.
    """
    game = pyspiel.load_game("gin_rummy")
    root = game.new_initial_state()

    def run() -> tuple[int, int]:
        rng = random.Random(seed)
        actions = chance = 0
        for _ in range(deals):
            state = root.clone()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                    chance += 1
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    actions += 1
        return actions, chance

    seconds, (actions, chance) = _timed(run)
    return {"seconds": seconds, "deals": deals, "actions": actions, "chance": chance}


def openspiel_initial_state_ms(pyspiel: Any, calls: int = 50) -> float:
    """Milliseconds per ``game.new_initial_state()`` (what cloning avoids)."""
    game = pyspiel.load_game("gin_rummy")
    seconds, _ = _timed(lambda: [game.new_initial_state() for _ in range(calls)])
    return seconds / calls * 1e3


def selfplay_rlcard(rl: Any, deals: int, seed: int) -> dict[str, float]:
    """Random playouts on RLCard's game object (no observation encoding, no agents)."""
    game = rl.Game()
    game.np_random = rl.np.random.RandomState(seed)  # its dealer shuffles with this

    def run() -> int:
        rng = random.Random(seed)
        actions = 0
        for _ in range(deals):
            game.init_game()
            while not game.is_over():
                game.step(rng.choice(game.judge.get_legal_actions()))
                actions += 1
        return actions

    seconds, actions = _timed(run)
    return {"seconds": seconds, "deals": deals, "actions": actions, "chance": 0}


def bench_selfplay(sizes: Sizes, engines: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Hands/s and actions/s per engine: the repeat with the best hands/s, distinct seeds."""
    runners: dict[str, tuple[Callable[[int, int], dict[str, float]], int]] = {
        OURS: (selfplay_ours, sizes.selfplay_deals),
    }
    skipped: dict[str, str] = {}
    extra: dict[str, float] = {}
    pyspiel = engines.get(OPENSPIEL)
    if pyspiel is not None and not isinstance(pyspiel, Unavailable):
        runners[OPENSPIEL] = (lambda d, s: selfplay_openspiel(pyspiel, d, s), sizes.selfplay_deals)
        extra["openspiel_new_initial_state_ms"] = _sig(openspiel_initial_state_ms(pyspiel))
    elif pyspiel is not None:
        skipped[OPENSPIEL] = pyspiel.reason
    rl = engines.get(RLCARD)
    if rl is not None and not isinstance(rl, Unavailable):
        runners[RLCARD] = (lambda d, s: selfplay_rlcard(rl, d, s), sizes.selfplay_deals_rlcard)
    elif rl is not None:
        skipped[RLCARD] = rl.reason

    out: dict[str, Any] = {"repeats": sizes.selfplay_repeats, "engines": {}, "skipped": skipped}
    out.update(extra)
    # Repeats go round the engines, so a burst of load elsewhere hits them all alike.
    all_runs: dict[str, list[dict[str, float]]] = {name: [] for name in runners}
    for r in range(sizes.selfplay_repeats):
        for name, (runner, deals) in runners.items():
            all_runs[name].append(runner(deals, seed + 1000 * r))
    for name, (_, deals) in runners.items():
        runs = all_runs[name]
        best = max(runs, key=lambda r: r["deals"] / r["seconds"])
        total_deals = sum(r["deals"] for r in runs)
        out["engines"][name] = {
            "deals_per_repeat": deals,
            "hands_per_s": _sig(best["deals"] / best["seconds"]),
            "actions_per_s": _sig(best["actions"] / best["seconds"]),
            "chance_actions_per_s": _sig(best["chance"] / best["seconds"]),
            "actions_per_hand": _sig(sum(r["actions"] for r in runs) / total_deals),
            "chance_actions_per_hand": _sig(sum(r["chance"] for r in runs) / total_deals),
        }
    return out


# --- 3. heuristic match ---------------------------------------------------------------------


def bench_match(sizes: Sizes, seed: int = 0) -> dict[str, Any]:
    """Milliseconds per best-of-five match to 250 between two heuristic players."""
    times: list[float] = []
    deals = decisions = 0
    for s in range(seed, seed + sizes.match_seeds):
        players = [HeuristicPlayer(name="x"), HeuristicPlayer(name="y")]
        seconds, record = _timed(lambda players=players, s=s: play_match(players, seed=s))
        if record.forfeit is not None:
            raise RuntimeError(f"heuristic match seed {s} forfeited: {record.forfeit}")
        times.append(seconds * 1e3)
        hands = [h for g in record.games for h in g.hands]
        deals += len(hands)
        decisions += sum(len(h.actions) for h in hands)
    return {
        "matches": len(times),
        "ms_mean": _sig(statistics.fmean(times)),
        "ms_median": _sig(statistics.median(times)),
        "ms_min": _sig(min(times)),
        "ms_max": _sig(max(times)),
        "deals_per_match": _sig(deals / len(times)),
        "decisions_per_match": _sig(decisions / len(times)),
        "us_per_decision": _sig(sum(times) * 1e3 / decisions),
    }


# --- machine, targets, report ---------------------------------------------------------------


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git_revision() -> str | None:
    try:
        rev = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return rev or None


def machine_info() -> dict[str, Any]:
    """Python, CPU and package versions: what the figures depend on."""
    affinity = getattr(os, "sched_getaffinity", None)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(affinity(0)) if affinity else os.cpu_count(),
        "load_1min_at_start": None if load is None else round(load, 2),
        "gin_arena": _git_revision(),
        "open_spiel": _version("open-spiel"),
        "rlcard": _version("rlcard"),
    }


def check_targets(results: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets: the measured ratio and whether it is met (None: not measurable)."""
    dw = results["deadwood"]["us_per_hand"]
    sp = results["selfplay"]["engines"]
    out: dict[str, Any] = {}
    ratio = dw["ours_mask"] / dw["openspiel"] if "openspiel" in dw else None
    out["deadwood_time_vs_openspiel"] = {
        "target_max": DEADWOOD_TARGET,
        "ratio": None if ratio is None else _sig(ratio, 3),
        "met": None if ratio is None else ratio <= DEADWOOD_TARGET,
    }
    ratio = dw["ours_cards"] / dw["openspiel"] if "openspiel" in dw else None
    out["deadwood_cards_time_vs_openspiel"] = {
        "target_max": DEADWOOD_CARDS_TARGET,
        "ratio": None if ratio is None else _sig(ratio, 3),
        "met": None if ratio is None else ratio <= DEADWOOD_CARDS_TARGET,
    }
    ratio = sp[OURS]["hands_per_s"] / sp[OPENSPIEL]["hands_per_s"] if OPENSPIEL in sp else None
    out["selfplay_hands_vs_openspiel"] = {
        "target_min": SELFPLAY_TARGET,
        "ratio": None if ratio is None else _sig(ratio, 3),
        "met": None if ratio is None else ratio >= SELFPLAY_TARGET,
    }
    return out


def run_all(sizes: Sizes, selected: Sequence[str] = ENGINES, seed: int = 0) -> dict[str, Any]:
    """Every measurement, as one JSON-ready dict."""
    engines = load_engines(selected)
    results: dict[str, Any] = {
        "schema": 1,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "mode": "quick" if sizes == QUICK else "full",
        "machine": machine_info(),
    }
    wall, cpu = time.perf_counter(), time.process_time()
    results["deadwood"] = bench_deadwood(sizes, engines, seed)
    results["selfplay"] = bench_selfplay(sizes, engines, seed)
    results["match"] = bench_match(sizes, seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # Below 1: this process waited for a CPU (other load), so the figures are noisier.
    results["machine"]["cpu_share"] = round(cpu / wall, 2) if wall > 0 else None
    results["machine"]["seconds"] = round(wall, 1)
    results["targets"] = check_targets(results)
    return results


_DEADWOOD_LABELS = {
    "ours_mask": "ours deadwood_mask(int mask)",
    "ours_cards": "ours deadwood(list[Card])",
    "ours_text": "ours deadwood(str)",
    "openspiel": "OpenSpiel min_deadwood (C++)",
    "rlcard": "RLCard best meld clusters",
}
_ENGINE_LABELS = {
    OURS: "ours (pure Python)",
    OPENSPIEL: "OpenSpiel (C++ via pybind)",
    RLCARD: "RLCard (pure Python)",
}


def _verdict(target: dict[str, Any]) -> str:
    if target["met"] is None:
        return "not measured (OpenSpiel missing)"
    return f"{target['ratio']:.2f}x  {'MET' if target['met'] else 'MISSED'}"


def format_report(results: dict[str, Any]) -> str:
    """The side-by-side tables, as text."""
    m = results["machine"]
    lines = [
        f"gin-arena engine benchmark ({results['mode']} run, {results['date']}, {m['gin_arena']})",
        f"Python {m['python']} ({m['implementation']}) on {m['platform']}, {m['cpu']}, "
        f"{m['cpu_count']} CPUs ({m['cpus_usable']} usable), load {m['load_1min_at_start']}",
        f"open-spiel {m['open_spiel'] or '-'}, rlcard {m['rlcard'] or '-'}; "
        "single-threaded; times are CPU time of this process",
    ]
    share = m.get("cpu_share")
    if share is not None and share < 0.9:
        lines.append(
            f"NOTE: the run had a CPU only {share:.0%} of its wall time: other load was running. "
            "CPU times leave the waiting out, but shared caches still add noise: compare ratios, "
            "or rerun on a quiet machine."
        )
    lines.append("")
    dw = results["deadwood"]
    us = dw["us_per_hand"]
    base = us.get("openspiel")
    lines += [
        f"1. Minimum deadwood, distinct random 10-card hands (best of {dw['repeats']})",
        f"   {'engine':<30} {'hands':>8} {'us/hand':>9} {'time vs OpenSpiel':>18}",
    ]
    for name, value in us.items():
        ratio = f"{value / base:.2f}x" if base else "-"
        hands = dw["hands_per_repeat"][name]
        lines.append(f"   {_DEADWOOD_LABELS[name]:<30} {hands:>8} {value:>9.3f} {ratio:>18}")
    for name, reason in dw["skipped"].items():
        lines.append(f"   {_DEADWOOD_LABELS[name]:<30} skipped: {reason}")
    bad = {k: v for k, v in dw["mismatches"].items() if v}
    if bad:
        lines.append(f"   DISAGREEMENT with ours: {bad}; e.g. {dw.get('mismatch_example')}")
    elif dw["mismatches"]:
        lines.append("   every answer agrees with deadwood_mask on every timed hand")
    t = results["targets"]["deadwood_time_vs_openspiel"]
    lines.append(f"   target: ours (mask) <= {t['target_max']}x OpenSpiel's time: {_verdict(t)}")
    t = results["targets"]["deadwood_cards_time_vs_openspiel"]
    lines += [
        f"   target: ours deadwood(list[Card]) <= {t['target_max']}x OpenSpiel's time: "
        f"{_verdict(t)}",
        "",
    ]

    sp = results["selfplay"]
    rows = sp["engines"]
    base = rows.get(OPENSPIEL, {}).get("hands_per_s")
    lines += [
        f"2. Uniformly random self-play (best of {sp['repeats']} repeats, distinct seeds)",
        f"   {'engine':<30} {'deals':>6} {'hands/s':>9} {'actions/s':>10} {'act/hand':>9} "
        f"{'chance/hand':>12} {'hands/s vs OpenSpiel':>21}",
    ]
    for name, row in rows.items():
        ratio = f"{row['hands_per_s'] / base:.2f}x" if base else "-"
        lines.append(
            f"   {_ENGINE_LABELS[name]:<30} {row['deals_per_repeat']:>6} "
            f"{row['hands_per_s']:>9.1f} {row['actions_per_s']:>10.0f} "
            f"{row['actions_per_hand']:>9.1f} {row['chance_actions_per_hand']:>12.1f} {ratio:>21}"
        )
    for name, reason in sp["skipped"].items():
        lines.append(f"   {_ENGINE_LABELS[name]:<30} skipped: {reason}")
    if "openspiel_new_initial_state_ms" in sp:
        lines.append(
            f"   (OpenSpiel deals clone one initial state; new_initial_state() would add "
            f"{sp['openspiel_new_initial_state_ms']:.2f} ms per deal)"
        )
    t = results["targets"]["selfplay_hands_vs_openspiel"]
    lines += [f"   target: ours >= {t['target_min']}x OpenSpiel's hands/s: {_verdict(t)}", ""]

    mt = results["match"]
    lines += [
        f"3. Heuristic vs heuristic, best of five games to 250, in process ({mt['matches']} seeds)",
        f"   mean {mt['ms_mean']:.1f} ms, median {mt['ms_median']:.1f} ms "
        f"(min {mt['ms_min']:.1f}, max {mt['ms_max']:.1f}); {mt['deals_per_match']:.1f} deals "
        f"and {mt['decisions_per_match']:.0f} decisions per match, "
        f"{mt['us_per_decision']:.1f} us per decision",
    ]
    return "\n".join(lines)


def _ratio(value: float, base: float | None) -> str:
    return f"{value / base:.2f}x" if base else ""


def _met(target: dict[str, Any]) -> str:
    if target["met"] is None:
        return "not measured"
    bound = f"≤ {target['target_max']}x" if "target_max" in target else f"≥ {target['target_min']}x"
    return f"{bound}: {'met' if target['met'] else 'MISSED'}"


def readme_table(results: dict[str, Any]) -> str:
    """The "Latest full run" table of ``benchmarks/README.md``, made from a results JSON (the
    README shows exactly this, so its figures are the JSON's: a test compares them)."""
    us = results["deadwood"]["us_per_hand"]
    sp = results["selfplay"]["engines"]
    mt = results["match"]
    targets = results["targets"]
    base = us.get("openspiel")
    rl = us.get("rlcard", "")
    ours, os_, rlc = sp[OURS], sp.get(OPENSPIEL), sp.get(RLCARD)
    os_hands = None if os_ is None else os_["hands_per_s"]

    def actions(row: dict[str, Any] | None, chance: bool = False) -> str:
        if row is None:
            return ""
        extra = f", plus {row['chance_actions_per_hand']} chance" if chance else ""
        return f"{row['actions_per_s']:,.0f} ({row['actions_per_hand']}{extra})"

    rows = [
        "| figure | ours | OpenSpiel | RLCard | ours vs OpenSpiel | target |",
        "|---|---|---|---|---|---|",
        f"| min deadwood, µs/hand: `deadwood_mask` | {us['ours_mask']} | {base or ''} | {rl} "
        f"| {_ratio(us['ours_mask'], base)} the time | "
        f"{_met(targets['deadwood_time_vs_openspiel'])} |",
        f"| min deadwood, µs/hand: `deadwood(list[Card])` | {us['ours_cards']} | | "
        f"| {_ratio(us['ours_cards'], base)} the time | "
        f"{_met(targets['deadwood_cards_time_vs_openspiel'])} |",
        f"| min deadwood, µs/hand: `deadwood(str)` | {us['ours_text']} | | "
        f"| {_ratio(us['ours_text'], base)} the time | |",
        f"| random self-play, hands/s | {ours['hands_per_s']} | "
        f"{os_hands or ''} | {'' if rlc is None else rlc['hands_per_s']} "
        f"| {_ratio(ours['hands_per_s'], os_hands)} "
        f"| {_met(targets['selfplay_hands_vs_openspiel'])} |",
        f"| random self-play, actions/s (actions/hand) | {actions(ours)} | "
        f"{actions(os_, chance=True)} | {actions(rlc)} | | |",
        f"| heuristic match, ms (mean / median; {mt['deals_per_match']} deals, "
        f"{mt['decisions_per_match']:,.0f} decisions) | {mt['ms_mean']} / {mt['ms_median']} "
        "| | | | |",
    ]
    return "\n".join(rows)


def write_json(results: dict[str, Any], path: Path) -> None:
    """Write the results, small and stable (sorted keys, two-space indent)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


# --- profiling ------------------------------------------------------------------------------


def profile(what: str, sizes: Sizes, limit: int = 30) -> str:
    """cProfile of our engine on random self-play or heuristic matches, by own time."""
    profiler = cProfile.Profile()
    if what == "selfplay":
        profiler.runcall(selfplay_ours, sizes.selfplay_deals, 0)
    else:
        profiler.runcall(bench_match, sizes)
    import io  # noqa: PLC0415

    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(limit)
    return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts: a smoke test")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help=f"write results here (default: {DEFAULT_JSON.relative_to(ROOT)} on a full run, "
        "nothing with --quick)",
    )
    parser.add_argument(
        "--engines",
        default=",".join(ENGINES),
        help="comma-separated subset of ours,openspiel,rlcard (ours always runs)",
    )
    parser.add_argument("--seed", type=int, default=0, help="base seed of hands, deals and matches")
    parser.add_argument(
        "--profile",
        choices=("selfplay", "match"),
        help="instead of benchmarking, print a cProfile of our engine",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    selected = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = set(selected) - set(ENGINES)
    if unknown:
        parser.error(f"unknown engine(s) {', '.join(sorted(unknown))}; choose from {ENGINES}")
    if args.profile:
        print(profile(args.profile, sizes))
        return 0
    results = run_all(sizes, selected, args.seed)
    print(format_report(results))
    path = args.json if args.json is not None else (None if args.quick else DEFAULT_JSON)
    if path is not None:
        write_json(results, path)
        print(f"\nresults written to {path}; its table for benchmarks/README.md:\n")
        print(readme_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
