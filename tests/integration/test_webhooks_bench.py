"""benchmarks/bench_webhooks.py keeps working: its quick run delivers every event on SQLite and
PostgreSQL through the real periodic job, measures the HTTP client, and writes only where told
(no timing is asserted)."""

from __future__ import annotations

import json
from pathlib import Path

from arena_procs import run_quick_benchmark
from conftest import require_service


def test_the_quick_webhook_benchmark_delivers_everything_on_both_databases(
    tmp_path: Path,
) -> None:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    args = ("--deliveries", "40", "--endpoints", "4")
    done, result = run_quick_benchmark("bench_webhooks.py", tmp_path / "webhooks.json", *args)
    assert result["mode"] == "quick" and set(result["delivery"]) == {"sqlite", "postgresql"}
    for row in result["delivery"].values():
        best = row["best"]
        assert best["deliveries"] == 40 and best["deliveries_per_s"] > 0
        assert best["latency_ms_p50"] <= best["latency_ms_p99"]
    client = result["client"]
    assert client["arena_sender_us"] > 0 and client["http_client_us"] > 0
    assert "deliveries/s" in done.stdout and "results written" in done.stdout


def test_the_readme_gives_the_figures_of_results_webhooks_json() -> None:
    root = Path(__file__).resolve().parents[2] / "benchmarks"
    result = json.loads((root / "results" / "webhooks.json").read_text(encoding="utf-8"))
    readme = (root / "README.md").read_text(encoding="utf-8")
    section = readme.split("## `bench_webhooks.py`", 1)[1]
    assert result["mode"] == "full"
    for kind, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
        row = result["delivery"][kind]
        best = row["best"]
        rounds = ", ".join(f"{r:.0f}" for r in row["rounds"])
        expected = (
            f"| {label} | {best['deliveries_per_s']:.0f} ({rounds}) | {best['cpu_ms_per_delivery']}"
            f" | {best['latency_ms_p50']:.2f} / {best['latency_ms_p99']:.2f} |"
        )
        assert expected in section, expected
    client = result["client"]
    assert f"{client['arena_sender_us']} µs" in section
    assert f"{client['http_client_us']} µs ({client['ratio']}x)" in section
