"""benchmarks/bench_ladder.py keeps working: every part runs on tiny counts, and the figures
in benchmarks/README.md are the table of the committed results/ladder.json (a full run's)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmark_module import load_benchmark

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


bench = load_benchmark("bench_ladder")


def test_the_pure_round_is_timed_at_each_size() -> None:
    rows = bench.bench_pure([50, 120], repeats=2)
    assert [r["bots"] for r in rows] == [50, 120]
    assert all(r["ms_median"] > 0 and r["matches"] > 0 for r in rows)


def test_the_service_rounds_schedule_every_free_bot_and_the_late_round_reads_the_day() -> None:
    service = bench.bench_service(bots=40, rounds=2, late_per_bot=6)
    first, second, late = service["rounds"]
    assert [r["round"] for r in service["rounds"]] == ["12:00 UTC", "12:05 UTC", "23:55 UTC"]
    assert first["scheduled"] == second["scheduled"] == late["scheduled"] == 40
    assert (first["today_matches_before"], second["today_matches_before"]) == (0, 40)
    assert late["today_matches_before"] == 40 * 6 // 2
    assert all(r["ms"] > 0 and r["inputs_ms"] > 0 for r in service["rounds"])


def test_the_readme_figures_are_those_of_results_ladder_json() -> None:
    results = json.loads((BENCHMARKS / "results" / "ladder.json").read_text(encoding="utf-8"))
    assert results["mode"] == "full"
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    assert bench.readme_table(results) in readme
