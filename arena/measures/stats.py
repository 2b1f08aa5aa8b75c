"""Per-bot statistics from match records, and a latency histogram that merges exactly.

Latencies go into fixed logarithmic buckets (16 per decade from 10 µs to 100 s), so the
histograms of many matches add up and p50/p99 come out within a few percent, whatever the
number of calls.

>>> h = latency_histogram([0.5, 0.6, 0.7, 12.0])
>>> round(percentile(h, 0.5), 2), round(percentile(h, 1.0), 1)
(0.6, 12.4)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "BUCKETS",
    "SeatStats",
    "latency_histogram",
    "merge_histograms",
    "percentile",
    "seat_stats",
]

_PER_DECADE = 16
_LOW_MS = 0.01
BUCKETS = _PER_DECADE * 7  # 10 µs .. 100 s


def _bucket(ms: float) -> int:
    if ms <= _LOW_MS:
        return 0
    return min(BUCKETS - 1, int(math.log10(ms / _LOW_MS) * _PER_DECADE))


def _bucket_value(index: int) -> float:
    """The geometric middle of a bucket, in milliseconds."""
    return float(_LOW_MS * 10 ** ((index + 0.5) / _PER_DECADE))


def latency_histogram(latencies_ms: Iterable[float]) -> list[int]:
    """Counts per bucket (a list of BUCKETS ints)."""
    counts = [0] * BUCKETS
    for ms in latencies_ms:
        counts[_bucket(ms)] += 1
    return counts


def merge_histograms(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Bucket-wise sum (an empty list counts as all zeros)."""
    if not a:
        return list(b)
    if not b:
        return list(a)
    return [x + y for x, y in zip(a, b, strict=True)]


def percentile(histogram: Sequence[int], p: float) -> float | None:
    """The p-quantile (0..1) in milliseconds, or None for no calls."""
    total = sum(histogram)
    if not total:
        return None
    rank = p * (total - 1)
    seen = 0
    for index, count in enumerate(histogram):
        seen += count
        if seen > rank:
            return _bucket_value(index)
    return _bucket_value(len(histogram) - 1)  # pragma: no cover - unreachable


@dataclass
class SeatStats:
    """What one match adds to one bot's totals."""

    matches: int = 1
    wins: int = 0
    losses: int = 0
    games_won: int = 0
    games_lost: int = 0
    hands_played: int = 0
    hands_won: int = 0
    knocks: int = 0
    gins: int = 0
    big_gins: int = 0
    undercut: int = 0
    undercuts: int = 0
    misknocks: int = 0
    deadwood_at_knock: int = 0
    faults: int = 0
    forfeits: int = 0
    calls: int = 0
    latency_histogram: list[int] = field(default_factory=list)

    def counters(self) -> dict[str, int]:
        """Every integer field (the columns to add to)."""
        return {k: v for k, v in vars(self).items() if isinstance(v, int)}


def _hands(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    hands = [h for g in record["games"] for h in g["hands"]]
    unfinished = record.get("unfinished_game")
    if unfinished:
        hands += unfinished["hands"]
    return hands


def seat_stats(record: Mapping[str, Any], seat: str, latencies_ms: Iterable[float]) -> SeatStats:
    """A bot's share of one match record (seat ``"a"`` or ``"b"``)."""
    other = "b" if seat == "a" else "a"
    s = SeatStats()
    winner = record["winner"]
    s.wins = int(winner == seat)
    s.losses = int(winner == other)
    s.games_won = record["games_won"][seat]
    s.games_lost = record["games_won"][other]
    forfeit = record.get("forfeit")
    s.forfeits = int(forfeit is not None and forfeit["seat"] in (seat, None))
    s.faults = sum(1 for f in record["faults"] if f["seat"] == seat)
    for hand in _hands(record):
        s.hands_played += 1
        outcome = hand["outcome"]
        s.hands_won += int(hand["winner"] == seat)
        s.misknocks += sum(1 for m in hand["misknocks"] if m["seat"] == seat)
        if hand["knocker"] == seat:
            if outcome in ("knock", "undercut", "tie"):
                s.knocks += 1
                s.deadwood_at_knock += hand["knocker_deadwood"] or 0
            s.gins += int(outcome == "gin")
            s.big_gins += int(outcome == "big_gin")
            s.undercut += int(outcome == "undercut")
        elif hand["knocker"] == other:
            s.undercuts += int(outcome == "undercut")
    latencies = list(latencies_ms)
    s.calls = len(latencies)
    s.latency_histogram = latency_histogram(latencies)
    return s
