"""Prometheus metrics read from the database at scrape time.

A custom collector runs a few aggregate queries per scrape
(:func:`arena.reading.queries.operations.metric_counts`), so every API process (threads,
gunicorn workers, several machines) reports the same numbers with no shared state:

* ``gin_arena_matches{status}``: matches by status;
* ``gin_arena_queue_depth``: matches waiting to be played (pending);
* ``gin_arena_bot_call_latency_ms``: a histogram of every bot call, merged from the per-bot
  histograms of :mod:`arena.measures.stats` (coarse ``le`` buckets; the sum is estimated from bucket
  midpoints);
* ``gin_arena_bot_faults`` and ``gin_arena_bot_forfeits`` per bot, and
  ``gin_arena_bot_latency_p99_ms`` per bot;
* ``gin_arena_bots{status}``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from arena.db.session import Database
from arena.measures.stats import BUCKETS, merge_histograms, percentile
from arena.reading.queries.operations import metric_counts
from arena.states import MatchStatus

__all__ = ["ArenaCollector", "make_registry"]

log = logging.getLogger(__name__)

#: ``le`` bounds (ms) of the exported latency histogram.
LATENCY_BOUNDS = (1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0)
_LOW_MS = 0.01
_PER_DECADE = BUCKETS // 7


def _upper(index: int) -> float:
    return _LOW_MS * 10 ** ((index + 1) / _PER_DECADE)


def _middle(index: int) -> float:
    return _LOW_MS * 10 ** ((index + 0.5) / _PER_DECADE)


def coarse_histogram(fine: list[int]) -> tuple[list[tuple[str, float]], float]:
    """Cumulative ``(le, count)`` buckets and an estimated sum from :mod:`arena.measures.stats`
    counts.

    >>> coarse_histogram([0] * 112)[0][-1]
    ('+Inf', 0.0)
    """
    counts = [0.0] * (len(LATENCY_BOUNDS) + 1)
    total = 0.0
    for index, n in enumerate(fine):
        if not n:
            continue
        total += n * _middle(index)
        slot = next(
            (i for i, bound in enumerate(LATENCY_BOUNDS) if _upper(index) <= bound * 1.0001),
            len(LATENCY_BOUNDS),
        )
        counts[slot] += n
    buckets: list[tuple[str, float]] = []
    running = 0.0
    for bound, count in zip([*map(str, LATENCY_BOUNDS), "+Inf"], counts, strict=True):
        running += count
        buckets.append((bound, running))
    return buckets, total


class ArenaCollector(Collector):
    """Collects the metrics above from ``db`` at each scrape."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        try:
            yield from self._collect()
        except Exception:  # a scrape must answer even when the database does not
            log.exception("metrics collection failed")
            up = GaugeMetricFamily("gin_arena_database_up", "Whether the database answered")
            up.add_metric([], 0.0)
            yield up

    def _collect(self) -> Iterator[Metric]:
        counts = metric_counts(self.db)
        by_status, bots = counts["matches"], counts["bots"]
        up = GaugeMetricFamily("gin_arena_database_up", "Whether the database answered")
        up.add_metric([], 1.0)
        yield up
        matches = GaugeMetricFamily("gin_arena_matches", "Matches by status", labels=["status"])
        for status in MatchStatus:
            matches.add_metric([status.value], float(by_status.get(status.value, 0)))
        yield matches
        queue = GaugeMetricFamily("gin_arena_queue_depth", "Matches waiting to be played")
        queue.add_metric([], float(by_status.get(MatchStatus.PENDING.value, 0)))
        yield queue
        bot_gauge = GaugeMetricFamily("gin_arena_bots", "Bots by status", labels=["status"])
        for bot_status, n in sorted(bots.items()):
            bot_gauge.add_metric([bot_status], float(n))
        yield bot_gauge
        yield from self._per_bot(counts["per_bot"])

    def _per_bot(self, rows: list[dict[str, Any]]) -> Iterator[Metric]:
        faults = CounterMetricFamily("gin_arena_bot_faults", "Bot faults", labels=["bot"])
        forfeits = CounterMetricFamily(
            "gin_arena_bot_forfeits", "Matches forfeited", labels=["bot"]
        )
        p99 = GaugeMetricFamily(
            "gin_arena_bot_latency_p99_ms", "Bot call latency p99 (ms)", labels=["bot"]
        )
        merged: list[int] = []
        for row in rows:
            name, histogram = row["name"], row["latency_histogram"]
            faults.add_metric([name], float(row["faults"]))
            forfeits.add_metric([name], float(row["forfeits"]))
            value = percentile(histogram, 0.99)
            if value is not None:
                p99.add_metric([name], value)
            merged = merge_histograms(merged, histogram)
        buckets, total = coarse_histogram(merged)
        latency = HistogramMetricFamily(
            "gin_arena_bot_call_latency_ms", "Latency of every bot call (ms)"
        )
        latency.add_metric([], buckets, total)
        yield faults
        yield forfeits
        yield p99
        yield latency


def make_registry(db: Database) -> CollectorRegistry:
    """A registry of this app's own (not the process-global default registry)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ArenaCollector(db))
    return registry
