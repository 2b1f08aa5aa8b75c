"""A ``--quick`` benchmark run is a smoke test: it must never overwrite the committed figures
in ``benchmarks/results/`` (only a full run, or an explicit ``--json PATH``, writes).

Each script is run for real, as a user runs it, and the results directory is compared before
and after. The heavy scripts (``bench_api``, ``bench_executors``, ``bench_tournament``) are run
quick by ``tests/integration/``; here every script's source is also held to the one rule.
"""

from __future__ import annotations

import hashlib
import importlib.util
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


def test_the_load_benchmarks_full_runs_write_the_files_the_docs_name() -> None:
    """A full run with the gevent pool and the read cache wrote ``load_cached_gevent.json``
    while the docs (and the committed file) said ``load_gevent_cached.json``."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))  # as when run as a script: pools, run_info
    spec = importlib.util.spec_from_file_location("bench_load", BENCHMARKS / "bench_load.py")
    assert spec is not None and spec.loader is not None
    bench_load = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench_load  # its dataclasses look their module up there
    spec.loader.exec_module(bench_load)
    docs = [
        (BENCHMARKS / "README.md").read_text(encoding="utf-8"),
        (BENCHMARKS.parent / "docs" / "RELIABILITY.md").read_text(encoding="utf-8"),
    ]
    names = set()
    for pool in ("threads", "gevent"):
        for cache_ms in (0, 1000):
            path = bench_load.default_results(pool, cache_ms)
            assert path.parent == RESULTS and path.exists(), path
            assert all(path.name in doc for doc in docs), path.name
            names.add(path.name)
    assert len(names) == 4
