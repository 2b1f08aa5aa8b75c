"""benchmarks/bench_load.py keeps working: its quick run plays every match of the load once, on
the first attempt, through one real worker while the open-loop generator reads the API, and
reports the throughput against the ideal, the API's latency and every process's CPU (no speed
is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from arena_procs import run_quick_benchmark
from conftest import PG_ADMIN_URL

pytestmark = [pytest.mark.postgres, pytest.mark.redis]


def test_the_quick_load_benchmark_plays_every_match_once_while_the_api_is_read(
    tmp_path: Path, redis_url: str, pg_server_url: str
) -> None:
    done, result = run_quick_benchmark(
        "bench_load.py",
        tmp_path / "load.json",
        *("--redis-url", redis_url, "--pg-admin-url", PG_ADMIN_URL),
        timeout=600,
    )
    assert "of the ideal" in done.stdout
    setup, matches, api = result["setup"], result["matches"], result["api"]
    load = matches["load"]
    assert load["matches"] == setup["concurrency"] * setup["waves"]
    assert load["max_attempt"] == 1  # no arena failure (a bot's timeout would be a fault)
    assert load["finished_in_window"] > 0 and matches["ratio"] > 0
    # Matches in play on average over the window: some, and never more than the worker plays.
    assert 0 < load["in_play_mean"] <= setup["concurrency"]
    assert matches["alone"]["matches"] == setup["seeds"]
    assert matches["ideal_matches_per_second"] > 0
    # Every request due in the window was answered 200 (a timeout past 10 s aside: speed) and
    # counted by endpoint.
    assert api["requests"] > 0
    assert all(error.startswith("timeout ") for error in api["errors"]), api["errors"]
    assert sum(row["requests"] for row in api["by_endpoint"].values()) == api["requests"]
    # Which endpoints of the mix fall in the window depends on its length (the machine's speed):
    # only that each is one of the mix, named with its ids replaced.
    mix = {
        "/api/v1/matches", "/api/v1/matches?status=running", "/api/v1/matches/{id}",
        "/api/v1/matches/{id}/replay", "/api/v1/ratings", "/api/v1/ratings/{id}/history",
        "/api/v1/tournaments", "/api/v1/tournaments/{id}", "/api/v1/tournaments/{id}/bracket",
        "/api/v1/tournaments/{id}/standings", "/api/v1/bots", "/api/v1/bots/{id}",
    }  # fmt: skip
    assert api["by_endpoint"] and set(api["by_endpoint"]) <= mix, set(api["by_endpoint"])
    for process in ("worker", "api", "bots", "postgres", "generator"):
        assert result["cpu"]["cores"][process] >= 0
    assert sum(b["acts"] for b in result["bot_servers"]) > 0
    assert result["limits"]["cores_needed_total"] > 0
