"""A ``--quick`` benchmark run is a smoke test: it must never overwrite the committed figures
in ``benchmarks/results/`` (only a full run, or an explicit ``--json PATH``, writes).

Each script is run for real, as a user runs it, and the results directory is compared before
and after. The heavy scripts (``bench_api``, ``bench_executors``, ``bench_tournament``) are run
quick by ``tests/integration/``; here every script's source is also held to the one rule.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
RESULTS = BENCHMARKS / "results"
SCRIPTS = sorted(p.name for p in BENCHMARKS.glob("bench_*.py"))

#: Scripts cheap enough to run quick here, with the options that keep them cheap.
CHEAP = {
    "bench_engine.py": ["--engines", "ours"],
    "bench_ladder.py": [],
    "bench_leaderboard.py": [],
    "bench_live_sink.py": [],
    "bench_protocol.py": [],
    "bench_ratings.py": [],
    "bench_strength.py": ["--workers", "1"],
    "bench_transport.py": [],
    "bench_webhooks.py": ["--databases", "sqlite", "--deliveries", "20"],
}


def snapshot() -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() + f":{p.stat().st_mtime_ns}"
        for p in sorted(RESULTS.iterdir())
    }


@pytest.mark.parametrize("script", sorted(CHEAP))
def test_a_quick_run_writes_nothing(script: str) -> None:
    before = snapshot()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    argv = [sys.executable, str(BENCHMARKS / script), "--quick", *CHEAP[script]]
    done = subprocess.run(
        argv,
        cwd=BENCHMARKS.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert snapshot() == before, f"{script} --quick changed benchmarks/results/"
    assert "wrote " not in done.stdout and "results written" not in done.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_takes_quick_and_writes_only_on_a_full_run_or_json(script: str) -> None:
    source = (BENCHMARKS / script).read_text()
    assert '"--quick"' in source, f"{script} has no --quick"
    writes = re.findall(r"\.write_text\(", source)
    assert writes, f"{script} writes no results"
    # The one rule, spelled the same way in every script: --json, else the default unless quick.
    rule = r"args\.json (?:or|if args\.json is not None else) \(None if args\.quick"
    assert re.search(rule, source), (
        f"{script}: the output path must be `args.json or (None if args.quick else RESULTS)`"
    )
