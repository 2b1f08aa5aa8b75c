"""benchmarks/bench_tournament.py keeps working: its quick run (4 bots, short games) plays the
round robin through both executors and times every match's database writes in the workers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PG_ADMIN_URL

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_tournament.py"


def test_the_quick_tournament_benchmark_runs_and_reports(
    tmp_path: Path, redis_url: str, pg_server_url: str
) -> None:
    out = tmp_path / "tournament.json"
    argv = [sys.executable, str(SCRIPT), "--quick", "--json", str(out)]
    argv += ["--redis-url", redis_url, "--pg-admin-url", PG_ADMIN_URL]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches/min" in done.stdout and "share of match time" in done.stdout
    result = json.loads(out.read_text())
    assert result["tournament"]["matches"] == 6
    for name in ("local", "celery"):
        run = result[name]
        assert run["matches"] == 6 and run["matches_per_minute"] > 0
        per = run["ms_per_match"]
        assert per["bot"]["mean"] > 0 and per["database"]["mean"] > 0
        assert per["advance"]["mean"] > 0
        assert sum(run["share_of_match_time"].values()) == pytest.approx(1.0, abs=0.01)
        assert str(run["champion"]).startswith(name + "-")
