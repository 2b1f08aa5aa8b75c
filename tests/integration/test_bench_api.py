"""benchmarks/bench_api.py keeps working: its quick run builds two small PostgreSQL arenas
(real recorded matches and a tournament), serves each with `gin-arena serve`, and measures every
endpoint open loop and closed loop from a separate load-generator process."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_procs import run_quick_benchmark
from conftest import PG_ADMIN_URL, require_service
from sqlalchemy import create_engine, text

pytestmark = [pytest.mark.postgres]

SCENARIOS = {"leaderboard", "bracket", "matches", "matches_deep", "replay_hit", "replay_miss"}


def scratch_databases() -> set[str]:
    engine = create_engine(PG_ADMIN_URL)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text("SELECT datname FROM pg_database WHERE datname LIKE 'arena_bench_api_%'")
            )
            return {name for (name,) in rows}
    finally:
        engine.dispose()


def test_the_quick_api_benchmark_runs_and_reports(tmp_path: Path) -> None:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    before = scratch_databases()
    done, result = run_quick_benchmark(
        "bench_api.py", tmp_path / "api.json", "--pg-admin-url", PG_ADMIN_URL, timeout=280
    )
    assert scratch_databases() <= before, "the scratch databases are dropped"
    assert "leaderboard p99 at 200 req/s" in done.stdout
    assert "latency does not grow with stored matches" in done.stdout
    small, large = str(result["sizes"]["small"]), str(result["sizes"]["large"])
    assert result["data"][small]["finished"] == result["sizes"]["small"]
    assert result["data"][large]["finished"] == result["sizes"]["large"]
    assert result["data"][large]["hands"] > result["data"][small]["hands"] > 0
    assert set(result["endpoints"]) == SCENARIOS
    for name, endpoint in result["endpoints"].items():
        assert set(endpoint["runs"]) == {small, large}, name
        for n in (small, large):
            for mode in ("open", "closed"):
                run = endpoint["runs"][n][mode]
                assert set(run["statuses"]) == {"200"}, (name, n, mode)
                assert run["requests"] > 0 and run["achieved_rps"] > 0
                assert run["latency"]["p50_ms"] <= run["latency"]["p99_ms"]
                assert 0 <= run["generator_cpu_share"] < 1
        assert endpoint["ratio_large_vs_small"]["closed_rps"] is not None
    assert result["endpoints"]["replay_hit"]["runs"][small]["open"]["mean_body_bytes"] > 1000
    assert "leaderboard_target_met" in result["verdicts"]
    assert set(result["verdicts"]["growth"]) == SCENARIOS
