"""Sentences of the docs that describe code, held to the code they describe."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

from arena.protocol.http_player import record_for_seat
from workers import tasks

ROOT = Path(__file__).resolve().parent.parent


def bullet(path: Path, title: str) -> str:
    """The text of the ``- **title**`` bullet of a Markdown file, joined into one line."""
    text = path.read_text()
    found = re.search(rf"^- \*\*{re.escape(title)}\*\*(.*?)(?=^\S|^- |\Z)", text, re.S | re.M)
    assert found, f"{path.name}: no bullet **{title}**"
    return " ".join(found.group(1).split())


def test_the_end_record_is_described_without_decks_as_it_is_sent() -> None:
    record = {
        "seed": 7,
        "faults": [],
        "games": [{"hands": [{"deck": "AS" * 26, "actions": [["a", "pass", None, 1.0]]}]}],
    }
    sent = record_for_seat(record, 0)
    assert "seed" not in sent and "deck" not in sent["games"][0]["hands"][0]
    text = bullet(ROOT / "api_spec" / "README.md", "The end.")
    assert "without the seed and the decks" in text, text
    assert not re.search(r"hands, deck and actions", text), text


def test_a_task_on_a_held_match_is_described_as_retried() -> None:
    source = inspect.getsource(tasks)
    assert re.search(r"JobStatus\.BUSY:\s*raise self\.retry\(", source)
    text = " ".join((ROOT / "deploy" / "README.md").read_text().split())
    assert "delivered while a live lease holds its match is retried" in text
    assert "holds its match ends at once" not in text


def test_the_api_benchmark_gives_no_figures_no_command_reproduces() -> None:
    text = (ROOT / "benchmarks" / "README.md").read_text()
    assert "before: max req/s" not in text and "→" not in text


BENCH_README = ROOT / "benchmarks" / "README.md"
RESULTS = ROOT / "benchmarks" / "results"


def _section(heading: str) -> str:
    """The text of benchmarks/README.md from ``## `heading` `` to the next ``## ``."""
    text = BENCH_README.read_text()
    start = text.index(f"## `{heading}`")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None]


def _rows(section: str, header_start: str) -> list[list[str]]:
    """The body cells of the first Markdown table in ``section`` whose header starts so."""
    lines = section.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[first + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _num(cell: str) -> float:
    return float(cell.replace(",", "").replace("*", "").rstrip("x"))


def _shown(value: float, cell: str) -> bool:
    """``cell`` is ``value`` rounded to the digits the cell shows."""
    cell = cell.strip("*")
    digits = len(cell.split(".")[1]) if "." in cell else 0
    return abs(_num(cell) - value) <= 0.5 * 10.0**-digits + 1e-9


def _groups(pattern: str, cell: str) -> tuple[str, ...]:
    found = re.fullmatch(pattern, cell)
    assert found, (pattern, cell)
    return found.groups()


def _results(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((RESULTS / f"{name}.json").read_text())
    return data


def test_the_api_benchmark_table_is_results_api_json() -> None:
    endpoints = _results("api")["endpoints"]
    rows = [r for r in _rows(_section("bench_api.py"), "| endpoint |") if r[1] in ("200", "2,000")]
    expected = [(name, size) for name in endpoints for size in ("200", "2000")]
    assert len(rows) == len(expected), rows
    for row, (name, size) in zip(rows, expected, strict=True):
        run = endpoints[name]["runs"][size]
        open_, closed = run["open"], run["closed"]
        figures = [
            open_["rate"],
            open_["achieved_rps"],
            open_["latency"]["p50_ms"],
            open_["latency"]["p99_ms"],
            closed["achieved_rps"],
            closed["latency"]["p50_ms"],
            closed["latency"]["p99_ms"],
            open_["server_cpu_ms_per_request"],
        ]
        for value, cell in zip(figures, row[2:], strict=True):
            assert _shown(value, cell), (name, size, value, cell, row)


def test_the_api_benchmark_prose_gives_the_figures_of_the_table() -> None:
    endpoints = _results("api")["endpoints"]
    text = " ".join(_section("bench_api.py").split())

    def spread(name: str, *figures: tuple[str, str]) -> list[float]:
        return [
            endpoints[name]["runs"][size][mode][key]
            for size in ("200", "2000")
            for mode, key in figures
        ]

    cpu = ("open", "server_cpu_ms_per_request"), ("closed", "server_cpu_ms_per_request")
    claims = {
        r"a replay that misses the in-process cache costs ([\d.]+)-([\d.]+) ms": spread(
            "replay_miss", *cpu
        ),
        r"\(([\d.]+)-([\d.]+) req/s at most, the closed loop\)": spread(
            "replay_miss", ("closed", "achieved_rps")
        ),
        r"what a cache hit does \(([\d.]+)-([\d.]+) ms of CPU\)": spread("replay_hit", *cpu),
        r"a leaderboard costs ([\d.]+)-([\d.]+) ms": spread("leaderboard", *cpu),
        r"The server spends ([\d.]+)-([\d.]+) of a CPU on it": spread(
            "leaderboard", ("open", "server_cpu_share")
        ),
    }
    for pattern, values in claims.items():
        found = re.search(pattern, text, re.I)
        assert found, pattern
        low, high = float(found.group(1)), float(found.group(2))
        assert low - 0.5 <= min(values) and max(values) <= high + 0.5, (pattern, values)
        assert min(values) < low + 1 and max(values) > high - 1, (pattern, values)


def test_the_tournament_benchmark_table_is_results_tournament_json() -> None:
    results = _results("tournament")
    rows = _rows(_section("bench_tournament.py"), "| executor |")
    assert [r[0].split()[0].lower() for r in rows] == ["local", "celery"], rows
    for row in rows:
        run = results[row[0].split()[0].lower()]
        assert _shown(run["seconds"], row[1]) and _shown(run["matches_per_minute"], row[2])
        for part, cell in zip(("bot", "arena", "database", "advance"), row[3:], strict=True):
            mean, median = _groups(r"([\d,.]+) \((?:median )?([\d,.]+)\)", cell)
            assert _shown(run["ms_per_match"][part]["mean"], mean), (part, cell)
            assert _shown(run["ms_per_match"][part]["median"], median), (part, cell)


def test_the_executors_benchmark_newest_row_is_results_executors_json() -> None:
    results = _results("executors")
    row = _rows(_section("bench_executors.py"), "| run |")[0]
    for executor, cell in (("local", row[1]), ("celery", row[2])):
        best, rounds = _groups(r"([\d.]+) \(([\d., ]+)\)", cell)
        assert _shown(results[executor]["matches_per_minute"], best), cell
        assert [float(r) for r in rounds.split(", ")] == results[executor][
            "rounds_matches_per_minute"
        ]
    assert _shown(results["celery_over_local"], row[3].split()[0]), row[3]
    assert _shown(results["write_cost"]["sqlite"]["ms_median"], row[4])
    assert _shown(results["write_cost"]["postgresql"]["ms_median"], row[5])


def test_the_deadline_benchmark_table_is_results_deadline_json() -> None:
    results = _results("deadline")
    rows = _rows(_section("bench_deadline.py"), "| scenario |")
    for row, scenario in zip(rows, ("quiet", "busy", "busy_threads_gil"), strict=True):
        silent, late = results[scenario]["silent"], results[scenario]["late"]["verdicts"]
        shown = [c.strip() for c in row[1].split("/")]
        spread = silent["overshoot_ms"]
        for key, cell in zip(("median", "p99", "max"), shown, strict=True):
            assert _shown(spread[key], cell), (scenario, key, cell)
        assert _shown(silent["recorded_latency_ms_max"], row[2].split()[0])
        taken, cut = (c.strip() for c in row[3].split("/"))
        assert _shown(late["latest_taken_ms"], taken) and _shown(late["earliest_cut_off_ms"], cut)
