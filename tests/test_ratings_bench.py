"""benchmarks/bench_ratings.py and benchmarks/bench_leaderboard.py keep working: every part runs
on tiny counts, and the README's tables are made from the committed full-run JSON."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from benchmark_module import load_benchmark

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


ratings = load_benchmark("bench_ratings")
leaderboard = load_benchmark("bench_leaderboard")


@pytest.mark.parametrize("name", sorted(ratings.SCHEDULES))
def test_every_schedule_is_valid_and_reproducible(name: str) -> None:
    make = ratings.SCHEDULES[name]
    a, b, score = make(np.random.default_rng(1), 60, 600)
    again = make(np.random.default_rng(1), 60, 600)
    assert all(np.array_equal(x, y) for x, y in zip((a, b, score), again, strict=True))
    assert a.size == b.size == score.size > 0
    assert np.all(a != b) and np.all((a >= 0) & (a < 60) & (b >= 0) & (b < 60))
    assert set(np.unique(score)) <= {0.0, 0.5, 1.0}


def test_the_ratings_parts_run_on_tiny_counts() -> None:
    row = ratings.time_fit(120, 3000, seed=2, repeats=1)
    assert row["interval_method"] == "dense" and row["total_s"] > 0
    baseline = ratings.compare_baseline("uniform", 80, 2000, seed=3, repeats=1)
    assert baseline["same_order"] and baseline["max_rating_difference"] < 1e-3
    error = ratings.interval_error("ladder", 400, seed=4)
    assert error["max_abs_error"] < 0.01 and error["large_pools"] in {"banded", "spectral"}


def test_the_leaderboard_parts_run_on_a_small_arena(tmp_path: Path) -> None:
    row = leaderboard.measure(f"sqlite:///{tmp_path / 'arena.db'}", bots=300, requests=5, seed=1)
    assert row["bots"] == 300 and row["fitted"] + row["elo_only"] + row["unrated"] == 300
    assert row["api"]["p50_ms"] > 0 and row["query"]["p99_ms"] >= row["query"]["p50_ms"]


@pytest.mark.parametrize(
    ("module", "result"), [(ratings, "ratings.json"), (leaderboard, "leaderboard.json")]
)
def test_readme_tables_are_those_of_the_committed_results(module: ModuleType, result: str) -> None:
    committed = json.loads((BENCHMARKS / "results" / result).read_text(encoding="utf-8"))
    assert committed["mode"] == "full"
    assert module.readme_table(committed) in (BENCHMARKS / "README.md").read_text(encoding="utf-8")
