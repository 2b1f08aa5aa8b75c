"""benchmarks/chaos.py keeps its promise: its quick run (a 6-bot round robin on its own Redis and
PostgreSQL, one worker SIGKILLed, Redis and PostgreSQL restarted once each) records every match
exactly once, with the same results, standings and fit as the clean run, and every fault is
recovered from. Recovery times are printed, not asserted (they depend on the machine); the
README's chaos figures are those of ``benchmarks/results/chaos.json``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from arena_procs import BENCHMARKS, run_quick_benchmark
from conftest import IN_CI


def _servers_missing() -> list[str]:
    found = [shutil.which("redis-server"), *Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    missing = [] if found[0] else ["redis-server"]
    return missing if len(found) > 1 or shutil.which("initdb") else [*missing, "initdb"]


def test_the_quick_chaos_run_records_every_match_once_with_the_clean_results(
    tmp_path: Path,
) -> None:
    missing = _servers_missing()
    if missing and not IN_CI:
        pytest.skip(f"chaos.py starts its own servers: {', '.join(missing)} not installed")
    done, result = run_quick_benchmark("chaos.py", tmp_path / "chaos.json", timeout=240)
    print(done.stdout)
    checks = result["checks"]
    assert result["passed"], done.stdout + done.stderr[-4000:]
    assert sorted(f["kind"] for f in result["faults"]) == ["broker", "database", "kill"]
    assert result["faults_missed"] == []
    assert checks["lost"] == [] and checks["duplicated"] == []
    assert checks["tables_differing"] == {} and checks["events_differing"] == {}
    assert checks["results_identical"] and checks["records_differing"] == []
    assert checks["standings_identical"] and checks["fit_identical"]
    assert checks["replayed_matches"] >= 1  # the killed worker's match was played again
    kill = result["recovery"]["kill_to_running_again"]
    assert kill["count"] >= 1 and kill["unrecovered"] == []
    (broker,) = result["recovery"]["broker_restart"]
    # Every match pending at the restart sent again (by the lost-queue marker: the quick run
    # keeps the default 300 s pending grace, past its time).
    assert broker["requeued_s"] is not None and broker["not_requeued"] == []
    assert result["settings"]["pending_grace_seconds"] == 300
    assert "kill -> match running again" in done.stdout


def test_the_readme_gives_the_figures_of_results_chaos_json() -> None:
    result = json.loads((BENCHMARKS / "results" / "chaos.json").read_text(encoding="utf-8"))
    readme = (BENCHMARKS / "README.md").read_text(encoding="utf-8")
    section = readme.split("## `chaos.py`", 1)[1].split("\n## ", 1)[0]
    assert result["mode"] == "full" and result["passed"]
    kill = result["recovery"]["kill_to_running_again"]
    (broker,) = result["recovery"]["broker_restart"]
    c = result["checks"]
    for figure in (
        f"{result['tournament']['matches']} matches",
        f"{len(result['faults'])} faults",
        f"median {kill['median_s']} s, worst {kill['worst_s']} s",
        f"{broker['pending_lost']} pending matches",
        f"queued again after {broker['requeued_s']} s",
        f"{c['replayed_matches']} matches played again",
        f"load average {result['machine']['loadavg_1min_before']:.2f}",
    ):
        assert figure in section, figure
