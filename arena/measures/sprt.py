"""The sequential probability ratio test between two bots over duplicate pairs: pure numbers.

A test plays **pairs**: two matches on the same deals with the seats swapped. The candidate's
score in a match is 1 for a win, 0 for a loss and 1/2 for a match with no winner (void, or
both seats forfeited); its score in a pair is the sum, one of 0, 1/2, 1, 3/2, 2. The
**pentanomial** is the count of pairs in each of those five buckets: a pair is the unit of
observation, so whatever the two legs share (the deals' luck) stays inside it and never makes
the test look surer than it is (fishtest's model for opening pairs).

**The hypotheses** are in *logistic Elo of the match score*, the Elo the arena's ratings use:
``H0: elo = elo0`` against ``H1: elo = elo1``, where a difference of ``elo`` means an expected
match score of ``1 / (1 + 10 ** (-elo / 400))`` for the candidate. So ``elo1 = 50`` means what
50 points between two bots on the leaderboard mean. (fishtest's default is *normalized* Elo,
which divides by the spread of the pair scores so that the bounds fix the test's expected
length; here the bounds keep the leaderboard's meaning and the length depends on how decisive
the matches are.)

**The statistic** is the generalized log-likelihood ratio (GSPRT): for each hypothesis, the
distribution over the five buckets closest to the observed one (maximum likelihood) among those
whose mean is that hypothesis's expected score, found by solving the one-variable secular
equation; the LLR is ``N * sum(p_hat_i * log(p1_i / p0_i))``. Empty buckets get a count of
``1e-3`` so the equation always has a root. The test stops when the LLR leaves
``[log(beta / (1 - alpha)), log((1 - beta) / alpha)]``: below, H0 is accepted; above, H1.

**The estimate**: the mean pair score per match ``mu`` with standard error
``sqrt(var / N)`` over pairs, its Elo ``-400 * log10(1 / mu - 1)``, the 95% interval as the Elo
of ``mu +- 1.96 se``, and the likelihood of superiority ``LOS = Phi((mu - 1/2) / se)``.

>>> params = SprtParams(elo0=0.0, elo1=50.0)
>>> round(params.lower, 3), round(params.upper, 3)
(-2.944, 2.944)
>>> round(llr(Pentanomial((0, 0, 10, 0, 0)), 0.0, 50.0), 3)  # ten even pairs lean to H0
-1.535
>>> llr(Pentanomial((0, 0, 5, 20, 15)), 0.0, 50.0) > params.upper  # a clear winner
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "BUCKETS",
    "Estimate",
    "Pentanomial",
    "SprtParams",
    "SprtState",
    "Verdict",
    "elo_estimate",
    "elo_to_score",
    "llr",
    "llr_path",
    "pair_bucket",
    "score_to_elo",
    "sprt_state",
]

#: The candidate's score in a pair, per bucket (index 0..4).
BUCKETS: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0)
#: The count an empty bucket is given (so every hypothesis has a maximum-likelihood fit).
_PRIOR = 1e-3
_Z95 = 1.959963984540054
#: Scores are clamped to [_EPS, 1 - _EPS] before turning into Elo (about +-1200).
_EPS = 1e-3


class Verdict(StrEnum):
    """How a test ended (None while it runs)."""

    H0 = "h0"  # the LLR fell below the lower bound: not better by elo1 (as good as elo0 or worse)
    H1 = "h1"  # the LLR rose above the upper bound: better by about elo1 (not only elo0)
    CAPPED = "capped"  # the cap on pairs was reached first: no decision
    CANCELLED = "cancelled"  # stopped by its owner or the organiser (or a side became unplayable)


@dataclass(frozen=True, slots=True)
class SprtParams:
    """The test's hypotheses (logistic Elo of the match score) and error rates.

    >>> SprtParams(elo0=10.0, elo1=5.0)
    Traceback (most recent call last):
    ...
    ValueError: elo1 must be greater than elo0 (got elo0=10, elo1=5)
    """

    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0.0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5 (got {value:g})")
        for name in ("elo0", "elo1"):
            value = getattr(self, name)
            if not -1000.0 <= value <= 1000.0:
                raise ValueError(f"{name} must be between -1000 and 1000 (got {value:g})")
        if self.elo1 <= self.elo0:
            raise ValueError(
                f"elo1 must be greater than elo0 (got elo0={self.elo0:g}, elo1={self.elo1:g})"
            )

    @property
    def lower(self) -> float:
        """The LLR at or below which H0 is accepted: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """The LLR at or above which H1 is accepted: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)


@dataclass(frozen=True, slots=True)
class Pentanomial:
    """Pairs counted by the candidate's pair score: ``counts[i]`` pairs scored ``BUCKETS[i]``."""

    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.counts) != len(BUCKETS) or any(c < 0 for c in self.counts):
            raise ValueError(f"a pentanomial is five counts >= 0, not {self.counts!r}")

    @classmethod
    def from_buckets(cls, buckets: Iterable[int]) -> Pentanomial:
        """Count the bucket indexes (0..4) of a sequence of pairs.

        >>> Pentanomial.from_buckets([2, 3, 3, 4]).counts
        (0, 0, 1, 2, 1)
        """
        counts = [0] * len(BUCKETS)
        for bucket in buckets:
            counts[bucket] += 1
        return cls(tuple(counts))

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    def add(self, bucket: int) -> Pentanomial:
        """These counts with one more pair in ``bucket``."""
        counts = list(self.counts)
        counts[bucket] += 1
        return Pentanomial(tuple(counts))


def pair_bucket(first: float, second: float) -> int:
    """The bucket of a pair from the candidate's score in each leg (1, 1/2 or 0).

    >>> pair_bucket(1.0, 0.5), pair_bucket(0.0, 0.0), pair_bucket(1.0, 1.0)
    (3, 0, 4)
    """
    for score in (first, second):
        if score not in (0.0, 0.5, 1.0):
            raise ValueError(f"a match score is 0, 0.5 or 1, not {score!r}")
    return round(2 * (first + second))


def elo_to_score(elo: float) -> float:
    """The expected match score of a logistic Elo difference.

    >>> elo_to_score(0.0), round(elo_to_score(400.0), 4)
    (0.5, 0.9091)
    """
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def score_to_elo(score: float) -> float:
    """The logistic Elo difference of an expected match score (clamped to about +-1200).

    >>> round(score_to_elo(0.75), 1)
    190.8
    """
    score = min(max(score, _EPS), 1.0 - _EPS)
    return -400.0 * math.log10(1.0 / score - 1.0)


def _distribution(counts: Pentanomial) -> tuple[float, list[float]]:
    """The number of pairs and the regularized empirical probabilities of the five buckets."""
    regular = [c if c > 0 else _PRIOR for c in counts.counts]
    total = sum(regular)
    return total, [c / total for c in regular]


#: Pair scores per match (the bucket's score halved): 0, 1/4, 1/2, 3/4, 1.
_VALUES = tuple(b / 2.0 for b in BUCKETS)


def _mle_with_mean(probs: Sequence[float], mean: float) -> list[float]:
    """The distribution over the buckets with expectation ``mean`` that is most likely to
    have produced ``probs``: ``p_i / (1 + x (v_i - mean))`` where ``x`` solves the secular
    equation ``sum p_i (v_i - mean) / (1 + x (v_i - mean)) = 0`` (decreasing in ``x`` between
    its poles, so bisection then Newton finds the one root)."""
    shifted = [v - mean for v in _VALUES]
    low = -1.0 / max(shifted)
    high = -1.0 / min(shifted)
    margin = 1e-12 * (high - low)
    low, high = low + margin, high - margin

    def secular(x: float) -> float:
        return sum(p * a / (1.0 + x * a) for p, a in zip(probs, shifted, strict=True))

    x = 0.0
    for _ in range(200):
        value = secular(x)
        if abs(value) < 1e-13:
            break
        if value > 0:
            low = x
        else:
            high = x
        slope = -sum(p * a * a / (1.0 + x * a) ** 2 for p, a in zip(probs, shifted, strict=True))
        step = x - value / slope
        x = step if low < step < high else (low + high) / 2.0
    return [p / (1.0 + x * a) for p, a in zip(probs, shifted, strict=True)]


def llr(counts: Pentanomial, elo0: float, elo1: float) -> float:
    """The generalized log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for these
    pairs (0.0 before the first pair)."""
    if counts.pairs == 0:
        return 0.0
    total, probs = _distribution(counts)
    fit0 = _mle_with_mean(probs, elo_to_score(elo0))
    fit1 = _mle_with_mean(probs, elo_to_score(elo1))
    return total * sum(
        p * (math.log(q1) - math.log(q0)) for p, q0, q1 in zip(probs, fit0, fit1, strict=True)
    )


def llr_path(buckets: Iterable[int], elo0: float, elo1: float) -> list[float]:
    """The LLR after each pair of a sequence of pair buckets, in order.

    >>> [round(v, 2) for v in llr_path([4, 4, 4], 0.0, 100.0)][-1] > 0
    True
    """
    counts = Pentanomial((0,) * len(BUCKETS))
    path = []
    for bucket in buckets:
        counts = counts.add(bucket)
        path.append(llr(counts, elo0, elo1))
    return path


@dataclass(frozen=True, slots=True)
class Estimate:
    """The candidate's Elo over the baseline from the pairs, with its 95% interval and the
    likelihood of superiority (the probability that it is the stronger, 0..1)."""

    elo: float
    ci_low: float
    ci_high: float
    los: float


def elo_estimate(counts: Pentanomial) -> Estimate | None:
    """The estimate from the pentanomial (None before the first pair).

    >>> e = elo_estimate(Pentanomial((2, 10, 40, 10, 2)))
    >>> abs(e.elo) < 1e-9, e.ci_low < 0 < e.ci_high, round(e.los, 3)
    (True, True, 0.5)
    """
    if counts.pairs == 0:
        return None
    total, probs = _distribution(counts)
    mean = sum(p * v for p, v in zip(probs, _VALUES, strict=True))
    var = sum(p * (v - mean) ** 2 for p, v in zip(probs, _VALUES, strict=True))
    se = math.sqrt(var / total)
    los = 0.5 * (1.0 + math.erf((mean - 0.5) / (se * math.sqrt(2.0))))
    return Estimate(
        elo=score_to_elo(mean),
        ci_low=score_to_elo(mean - _Z95 * se),
        ci_high=score_to_elo(mean + _Z95 * se),
        los=los,
    )


@dataclass(frozen=True, slots=True)
class SprtState:
    """Where a test stands after its pairs: the LLR, and the verdict once a bound is crossed
    or the cap reached (None: keep playing)."""

    llr: float
    pairs: int
    verdict: Verdict | None


def sprt_state(counts: Pentanomial, params: SprtParams, max_pairs: int) -> SprtState:
    """The LLR of ``counts`` and the verdict it gives: H0 at or below the lower bound, H1 at
    or above the upper bound, capped when ``max_pairs`` pairs are played without either.

    >>> sprt_state(Pentanomial((0, 0, 0, 0, 0)), SprtParams(0.0, 50.0), 100).verdict is None
    True
    >>> sprt_state(Pentanomial((0, 0, 3, 0, 0)), SprtParams(0.0, 50.0), 3).verdict
    <Verdict.CAPPED: 'capped'>
    """
    value = llr(counts, params.elo0, params.elo1)
    verdict: Verdict | None = None
    if counts.pairs and value <= params.lower:
        verdict = Verdict.H0
    elif counts.pairs and value >= params.upper:
        verdict = Verdict.H1
    elif counts.pairs >= max_pairs:
        verdict = Verdict.CAPPED
    return SprtState(value, counts.pairs, verdict)
