"""benchmarks/bench_streams.py keeps working: a quick run (a few streams, a few seconds) prints
its table and writes nothing (the committed figures change only with a full run); the kept
run's row in benchmarks/README.md is what results/streams.json holds."""

from __future__ import annotations

import json
import os
import re
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


def test_the_readme_row_of_the_kept_run_is_results_streams_json() -> None:
    result = json.loads((ROOT / "benchmarks" / "results" / "streams.json").read_text())
    text = (ROOT / "benchmarks" / "README.md").read_text()
    start = text.index("## `bench_streams.py`")
    section = text[start : text.find("\n## ", start + 1)]
    row = next(line for line in section.splitlines() if "(`results/streams.json`)" in line)
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    # | run | held | p50 / p99 | once joined p99 | request to match p50 / p99 | events/s | CPU |

    def number(text: str) -> float:
        return float(text.replace(",", ""))

    p50, p99 = (number(v) for v in cells[2].split(" / "))
    assert round(result["latency_ms"]["p50"]) == round(p50)
    assert round(result["latency_ms"]["p99"]) == round(p99)
    assert round(result["latency_ms_joined"]["p99"]) == round(number(cells[3]))
    hello = [number(v) for v in cells[4].split(" / ")]
    assert [round(v) for v in hello] == [round(result["match_event_ms"][k]) for k in ("p50", "p99")]
    assert round(result["events_per_second"]) == round(number(cells[5]))
    assert int(cells[1]) == result["open_streams_min"]
    shares = result["cpu_share"]
    expected = " / ".join(
        str(shares[k]) for k in ("api_process", "match_workers", "bots", "clients")
    )
    assert expected in cells[6], (expected, cells[6])
    assert re.search(rf"load {result['load_before']}\b", cells[6]), cells[6]
