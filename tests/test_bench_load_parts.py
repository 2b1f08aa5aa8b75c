"""Parts of ``benchmarks/bench_load.py`` that its quick run does not show: where a full run
writes (the four names the docs give) and how the load's matches are sent (``--ramp-s``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_module import load_benchmark

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
RESULTS = BENCHMARKS / "results"


bench_load = load_benchmark("bench_load")


def test_the_load_benchmarks_full_runs_write_the_files_the_docs_name() -> None:
    """A full run with the gevent pool and the read cache wrote ``load_cached_gevent.json``
    while the docs (and the committed file) said ``load_gevent_cached.json``."""
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


class Sent:
    """Stands in for the Celery executor: what was sent, in which batches."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def submit(self, ids: list[int]) -> None:
        self.batches.append(list(ids))


def test_the_load_goes_at_once_unless_ramped() -> None:
    sent = Sent()
    sizes = bench_load.QUICK
    ids = list(range(1, 2 * sizes.concurrency + 1))
    bench_load.submit_load(sent, ids, sizes)
    assert sent.batches == [ids]


def test_a_ramp_sends_the_first_slots_one_by_one_then_the_rest() -> None:
    """Matches that start together finish together (each seed's are as long as each other),
    and the worker records them all at once: with ``--ramp-s`` the first ``concurrency`` go
    one by one, so their slots free, and take the queued rest, at different moments."""
    sent = Sent()
    sizes = bench_load.replace(bench_load.QUICK, ramp_s=0.01)
    ids = list(range(1, 3 * sizes.concurrency + 1))
    bench_load.submit_load(sent, ids, sizes)
    first = [[i] for i in ids[: sizes.concurrency]]
    assert sent.batches == [*first, ids[sizes.concurrency :]]


def test_a_negative_ramp_is_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        bench_load.main(["--ramp-s", "-1"])
    assert exited.value.code == 2
    assert "--ramp-s must be 0 or more" in capsys.readouterr().err
