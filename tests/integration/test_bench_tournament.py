"""benchmarks/bench_tournament.py keeps working: its quick run (4 bots, short games) plays the
round robin through both executors and times every match's database writes in the workers."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_procs import run_quick_benchmark
from conftest import PG_ADMIN_URL

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def test_the_quick_tournament_benchmark_runs_and_reports(
    tmp_path: Path, redis_url: str, pg_server_url: str
) -> None:
    done, result = run_quick_benchmark(
        "bench_tournament.py",
        tmp_path / "tournament.json",
        *("--redis-url", redis_url, "--pg-admin-url", PG_ADMIN_URL),
        timeout=240,
    )
    assert "matches/min" in done.stdout and "share of match time" in done.stdout
    assert result["tournament"]["matches"] == 6
    for name in ("local", "celery"):
        run = result[name]
        assert run["matches"] == 6 and run["matches_per_minute"] > 0
        per = run["ms_per_match"]
        assert per["bot"]["mean"] > 0 and per["database"]["mean"] > 0
        assert per["advance"]["mean"] > 0
        assert sum(run["share_of_match_time"].values()) == pytest.approx(1.0, abs=0.01)
        assert str(run["champion"]).startswith(name + "-")
