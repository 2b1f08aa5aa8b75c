"""benchmarks/bench_transport.py keeps working: a quick run measures the transport's CPU a call
on the threads path, the gevent path and the gevent-poll baseline, every call answered (no
timing is asserted), and writes only where ``--json`` says."""

from __future__ import annotations

from pathlib import Path

from arena_procs import run_quick_benchmark


def test_the_quick_transport_benchmark_measures_each_pool_path(tmp_path: Path) -> None:
    done, result = run_quick_benchmark("bench_transport.py", tmp_path / "transport.json")
    assert "gevent / gevent-poll" in done.stdout
    assert [r["mode"] for r in result["runs"]] == ["threads", "gevent", "gevent-poll"]
    for run in result["runs"]:
        assert run["calls"] > 0 and run["cpu_us_per_call"] > 0
    assert result["gevent_over_gevent_poll"] > 0
