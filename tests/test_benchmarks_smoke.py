"""benchmarks/bench_engine.py keeps working: every part runs on tiny counts.

Our engine always runs. OpenSpiel and RLCard are the optional ``bench`` extras: their
cross-check tests skip when the package is not installed (the script itself reports and skips
them then), except under ``CI=true``, where they fail instead: ``make test`` installs the extra
there, so a CI run always compares our engine with both.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from benchmark_module import load_benchmark
from conftest import IN_CI

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_engine.py"


bench = load_benchmark("bench_engine")
TINY = bench.Sizes(
    deadwood_hands=300,
    deadwood_hands_rlcard=30,
    deadwood_repeats=2,
    selfplay_deals=3,
    selfplay_deals_rlcard=2,
    selfplay_repeats=2,
    match_seeds=1,
)


def test_distinct_hands_are_distinct_ten_card_hands_and_reproducible():
    hands = bench.distinct_hands(2000, seed=3)
    masks = {sum(1 << c for c in h) for h in hands}
    assert len(masks) == 2000
    assert all(len(set(h)) == 10 and all(0 <= c < 52 for c in h) for h in hands)
    assert hands == bench.distinct_hands(2000, seed=3)


def test_deadwood_ours_only():
    out = bench.bench_deadwood(TINY, engines={})
    assert set(out["us_per_hand"]) == {"ours_mask", "ours_cards", "ours_text"}
    assert all(v > 0 for v in out["us_per_hand"].values())
    assert out["mismatches"] == {"ours_cards": 0, "ours_text": 0}


def test_selfplay_ours_only():
    run = bench.selfplay_ours(deals=3, seed=0)
    assert run["deals"] == 3 and run["actions"] >= 3 * 4 and run["seconds"] > 0
    out = bench.bench_selfplay(TINY, engines={})
    assert set(out["engines"]) == {"ours"}
    assert out["engines"]["ours"]["hands_per_s"] > 0


def test_heuristic_match():
    out = bench.bench_match(TINY)
    assert out["matches"] == 1
    assert out["ms_median"] > 0 and out["deals_per_match"] >= 3


def test_missing_engine_is_reported_and_skipped():
    missing = {
        "openspiel": bench.Unavailable("OpenSpiel not installed: pip install -e .[bench]"),
        "rlcard": bench.Unavailable("RLCard not installed: pip install -e .[bench]"),
    }
    results = {
        "schema": 1,
        "date": "2000-01-01",
        "mode": "quick",
        "machine": bench.machine_info(),
        "deadwood": bench.bench_deadwood(TINY, missing),
        "selfplay": bench.bench_selfplay(TINY, missing),
        "match": bench.bench_match(TINY),
    }
    results["targets"] = bench.check_targets(results)
    assert results["targets"]["deadwood_time_vs_openspiel"]["met"] is None
    report = bench.format_report(results)
    assert "OpenSpiel not installed: pip install -e .[bench]" in report
    assert "RLCard not installed" in report
    assert "not measured (OpenSpiel missing)" in report


def test_cli_quick_ours_only_writes_json(tmp_path, capsys):
    path = tmp_path / "engine.json"
    assert bench.main(["--quick", "--engines", "ours", "--json", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "1. Minimum deadwood" in printed and "3. Heuristic" in printed
    data = json.loads(path.read_text())
    assert data["mode"] == "quick"
    assert {"machine", "deadwood", "selfplay", "match", "targets"} <= set(data)
    assert data["machine"]["cpu_count"] >= 1


def test_cli_rejects_unknown_engine():
    with pytest.raises(SystemExit):
        bench.main(["--quick", "--engines", "ours,chess"])


def test_profile_names_the_engine_functions():
    text = bench.profile("selfplay", TINY, limit=10)
    assert "hand.py" in text or "melds.py" in text


def require_bench_extra(module: str) -> ModuleType:
    """``module`` of the ``bench`` extra; skip without it, or under CI=true fail."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        message = f"{module} is not installed (the bench extra: pip install -e .[bench]): {exc}"
        if IN_CI:
            pytest.fail(f"{message}; CI=true requires it (make test installs it)")
        pytest.skip(message)


@pytest.mark.parametrize("ci", ["true", ""])
def test_cross_checks_fail_instead_of_skipping_under_ci(ci: str, tmp_path: Path) -> None:
    # A pyspiel and an rlcard that cannot be imported stand for the extra being missing.
    for module in ("pyspiel", "rlcard"):
        missing = f"raise ModuleNotFoundError(\"No module named '{module}' (test)\")\n"
        (tmp_path / f"{module}.py").write_text(missing)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    env["CI"] = ci
    argv = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rsf"]
    argv += [f"{Path(__file__)}::test_openspiel_quick", f"{Path(__file__)}::test_rlcard_quick"]
    done = subprocess.run(
        argv, cwd=SCRIPT.parent.parent, env=env, capture_output=True, text=True, check=False
    )
    if ci:
        assert done.returncode == 1, done.stdout + done.stderr
        assert "2 failed" in done.stdout and "CI=true requires it" in done.stdout
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "2 skipped" in done.stdout and "bench extra" in done.stdout


def test_openspiel_quick():
    pyspiel = require_bench_extra("pyspiel")
    engines = {"openspiel": pyspiel}
    out = bench.bench_deadwood(TINY, engines)
    assert out["mismatches"]["openspiel"] == 0
    run = bench.selfplay_openspiel(pyspiel, deals=2, seed=0)
    assert run["deals"] == 2 and run["actions"] > 0 and run["chance"] >= 2 * 21
    assert bench.bench_selfplay(TINY, engines)["engines"]["openspiel"]["hands_per_s"] > 0


def test_rlcard_quick():
    require_bench_extra("rlcard")
    rl = bench.load_rlcard()
    assert not isinstance(rl, bench.Unavailable)
    out = bench.bench_deadwood(TINY, {"rlcard": rl})
    assert out["mismatches"]["rlcard"] == 0
    run = bench.selfplay_rlcard(rl, deals=2, seed=0)
    assert run["deals"] == 2 and run["actions"] > 0


def test_readme_engine_figures_are_those_of_results_engine_json():
    """benchmarks/README.md's "Latest full run" table is made from the committed JSON (issue 10,
    4.10: they drifted apart)."""
    root = SCRIPT.parent
    results = json.loads((root / "results" / "engine.json").read_text(encoding="utf-8"))
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert results["mode"] == "full"
    assert bench.readme_table(results) in readme


def test_a_quick_run_writes_nothing(capsys):
    committed = bench.DEFAULT_JSON.read_bytes()
    assert bench.main(["--quick", "--engines", "ours"]) == 0
    assert bench.DEFAULT_JSON.read_bytes() == committed
    assert "results written" not in capsys.readouterr().out


def test_strength_quick_plays_every_pairing_and_writes_only_with_json(tmp_path: Path) -> None:
    """benchmarks/bench_strength.py --quick: every house bot against the OpenSpiel bot (skipped
    and said so without the bench extra) and expert against strong, one short pair each."""
    script = SCRIPT.parent / "bench_strength.py"
    path = tmp_path / "strength.json"
    argv = [sys.executable, str(script), "--quick", "--json", str(path)]
    done = subprocess.run(
        argv, cwd=SCRIPT.parent.parent, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(path.read_text())
    played = {(p["a"], p["b"]) for p in data["pairings"]}
    assert ("expert", "strong") in played
    if importlib.util.find_spec("pyspiel") is None:
        assert "OpenSpiel not installed" in done.stdout and len(data["skipped"]) == 4
    else:
        assert {(k, "openspiel") for k in ("random", "greedy", "strong", "expert")} <= played
    for pairing in data["pairings"]:
        assert pairing["matches"] == 2 and pairing["wins_a"] + pairing["wins_b"] <= 2
        assert all(t["decisions"] > 0 for t in pairing["think_time"].values())
        assert pairing["faults"] == {pairing["a"]: 0, pairing["b"]: 0}


def test_readme_strength_figures_are_those_of_results_strength_json() -> None:
    """benchmarks/README.md's strength table is made from the committed full run, exactly, and
    that run meets issue 13's target: expert wins at least 60% of at least 200 standard
    matches against the OpenSpiel bot and against strong."""
    strength = load_benchmark("bench_strength")
    results = json.loads(strength.RESULTS.read_text(encoding="utf-8"))
    assert results["mode"] == "full" and results["rules"] == "standard"
    assert strength.readme_table(results) in (SCRIPT.parent / "README.md").read_text("utf-8")
    by_pair = {(p["a"], p["b"]): p for p in results["pairings"]}
    for opponent in ("openspiel", "strong"):
        run = by_pair["expert", opponent]
        assert run["matches"] >= 200 and run["win_rate_a"] >= strength.TARGET
