"""benchmarks/bench_executors.py keeps working: its quick run plays the same batch through the
local executor and through Celery workers (each going first once), and measures the write
cost of a match record on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_procs import run_quick_benchmark
from conftest import PG_ADMIN_URL

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def test_the_quick_executor_benchmark_runs_both_orders_and_reports(
    tmp_path: Path, redis_url: str, pg_server_url: str
) -> None:
    done, result = run_quick_benchmark(
        "bench_executors.py",
        tmp_path / "executors.json",
        *("--rounds", "2", "--redis-url", redis_url, "--pg-admin-url", PG_ADMIN_URL),
    )
    assert "celery / local = " in done.stdout
    rounds = [line.split(":")[0] for line in done.stderr.splitlines() if line.startswith("round ")]
    assert rounds == ["round 1 local ", "round 1 celery", "round 2 celery", "round 2 local "]
    for name in ("local", "celery"):
        run = result[name]
        assert run["matches_per_minute"] > 0 and run["max_attempt"] == 1
        assert len(run["rounds_matches_per_minute"]) == 2
    assert result["celery_over_local"] > 0
    for database in ("sqlite", "postgresql"):
        cost = result["write_cost"][database]
        assert cost["ms_median"] > 0 and cost["rows_inserted_mean"] > 0
        # The match, both bots' statistics and Elo, and both versions' Elo.
        assert cost["rows_updated_mean"] == 7
