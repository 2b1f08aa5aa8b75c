"""benchmarks/bench_streams.py keeps working: a quick run (a few streams, a few seconds) prints
its table and writes nothing (the committed figures change only with a full run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_quick_run_prints_its_figures_and_writes_nothing() -> None:
    results = ROOT / "benchmarks" / "results"
    before = {p.name: p.stat().st_mtime_ns for p in results.iterdir()}
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    argv = [sys.executable, "benchmarks/bench_streams.py", "--quick", "--streams", "10"]
    done = subprocess.run(
        [*argv, "--seconds", "4", "--concurrent", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| streams kept open" in done.stdout and "event latency" in done.stdout
    assert "wrote " not in done.stdout
    assert {p.name: p.stat().st_mtime_ns for p in results.iterdir()} == before
