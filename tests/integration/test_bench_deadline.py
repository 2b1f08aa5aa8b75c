"""benchmarks/bench_deadline.py keeps working: its quick run measures every scenario, records no
latency over the deadline, and writes nothing unless given ``--json`` (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena_procs import BENCHMARKS, run_quick_benchmark

TINY = ("--requests", "2", "--load", "1", "--threads", "2", "--deadline-ms", "50")


def test_the_quick_deadline_benchmark_runs_and_never_records_more_than_the_deadline(
    tmp_path: Path,
) -> None:
    done, result = run_quick_benchmark("bench_deadline.py", tmp_path / "deadline.json", *TINY)
    assert "overshoot" in done.stdout
    for scenario, threads in (("quiet", 1), ("busy", 1), ("busy_threads_gil", 2)):
        for mode in ("silent", "trickle"):
            row = result[scenario][mode]
            assert row["requests"] == 2 * threads
            assert row["faults"] == {"timeout": 2 * threads}
            assert row["recorded_latency_ms_max"] == 50.0
        late = result[scenario]["late"]
        assert late["requests"] == 2 * threads and late["recorded_latency_ms_max"] <= 50.0
        assert late["verdicts"]["taken"] + late["verdicts"]["cut_off"] == 2 * threads


def test_a_quick_run_without_json_writes_nothing(tmp_path: Path) -> None:
    def files() -> dict[str, int]:
        return {p.name: p.stat().st_mtime_ns for p in (BENCHMARKS / "results").iterdir()}

    before = files()
    argv = [sys.executable, str(BENCHMARKS / "bench_deadline.py"), "--quick", *TINY,
            "--only", "quiet"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "wrote" not in done.stdout
    assert files() == before
