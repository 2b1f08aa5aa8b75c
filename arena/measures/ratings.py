"""Ratings: live Elo after every match, and a whole-history fit with confidence intervals.

This module owns the arithmetic of ratings and nothing else: it reads no clock, touches no
database and draws no random numbers, so a service can call it inside the transaction that
stores a result. Players are whatever hashable ids the caller uses.

* **Live Elo** (:func:`expected_score`, :func:`elo_delta`, :func:`elo_update`): the logistic
  Elo rule on the usual 400-point scale, starting at :data:`INITIAL_RATING`. An update is
  exactly zero-sum (see :func:`elo_delta`).
* **Whole-history fit** (:func:`fit_ratings`): Bradley-Terry maximum likelihood over every
  rated result on the same Elo scale, anchored so the fitted players average
  :data:`INITIAL_RATING`, with standard errors and confidence intervals from the observed
  information, and one virtual draw per player against an average player so that estimates stay
  finite for unbeaten players and disconnected pools. The arithmetic is sparse
  (:mod:`arena.measures.bradley_terry`): 10,000 players and a million results fit in seconds.

>>> elo_update(1500.0, 1500.0, 1.0)
(1512.0, 1488.0)
>>> fit = fit_ratings([("ann", "bob", 1.0)] * 30 + [("ann", "bob", 0.0)] * 10)
>>> round(fit["ann"].rating), round(fit["bob"].rating), fit["ann"].matches
(1594, 1406, 40)
>>> fit["ann"].ci_low < fit["ann"].rating < fit["ann"].ci_high
True
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from statistics import NormalDist
from typing import Final, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DEFAULT_K",
    "DEFAULT_MIN_MATCHES",
    "ELO_SCALE",
    "INITIAL_RATING",
    "FittedRating",
    "RatingError",
    "elo_delta",
    "elo_update",
    "expected_score",
    "fit_ratings",
]

#: Rating every player starts from, and the mean the whole-history fit is anchored to.
INITIAL_RATING: Final = 1500.0
#: A difference of this many points means 10:1 odds.
ELO_SCALE: Final = 400.0
#: Default live Elo K factor: the most points one match can move a rating.
DEFAULT_K: Final = 24.0
#: Fewer rated matches than this and a fitted rating is flagged provisional.
DEFAULT_MIN_MATCHES: Final = 10

#: Elo deltas are rounded to a multiple of this (about 1.5e-5 points), see :func:`elo_delta`.
_DELTA_QUANTUM: Final = 2.0**-16
#: The logistic scale of the fit: P(a beats b) = 1 / (1 + exp(-(r_a - r_b) / _S)).
_SCORES: Final = frozenset({0.0, 0.5, 1.0})

P = TypeVar("P", bound=Hashable)

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


class RatingError(ValueError):
    """A result or a rating parameter is invalid (bad score, self-play, bad K or weight...)."""


def _check_score(score_a: float) -> float:
    if score_a not in _SCORES:
        raise RatingError(f"score must be 0, 0.5 or 1, not {score_a!r}")
    return float(score_a)


def _check_players(player_a: object, player_b: object) -> None:
    if player_a == player_b:
        raise RatingError(f"a player cannot be rated against itself: {player_a!r}")


# --------------------------------------------------------------------------- live Elo


def expected_score(rating_a: float, rating_b: float) -> float:
    """Expected score of a against b under Elo: ``1 / (1 + 10 ** ((r_b - r_a) / 400))``.

    ``expected_score(a, b) + expected_score(b, a)`` is 1 (up to rounding).

    >>> expected_score(1500.0, 1500.0), round(expected_score(1900.0, 1500.0), 4)
    (0.5, 0.9091)
    """
    return 1.0 / (1.0 + math.pow(10.0, (rating_b - rating_a) / ELO_SCALE))


def elo_delta(rating_a: float, rating_b: float, score_a: float, *, k: float = DEFAULT_K) -> float:
    """Points a gains (and b loses) for one result: ``k * (score_a - expected_score(a, b))``.

    ``score_a`` is 1 for a win of a, 0.5 for a draw, 0 for a loss. The delta is rounded to a
    multiple of 2**-16 points, so when both ratings are on that grid (as every rating is that
    starts from a whole number and changes only through this module) ``a + delta`` and
    ``b - delta`` are exact in floating point: the total of a pool is conserved bit for bit.

    >>> elo_delta(1500.0, 1500.0, 0.5), elo_delta(1500.0, 1500.0, 1.0, k=32.0)
    (0.0, 16.0)
    """
    score = _check_score(score_a)
    if not (math.isfinite(k) and k > 0):
        raise RatingError(f"K must be a positive finite number, not {k!r}")
    raw = k * (score - expected_score(rating_a, rating_b))
    return round(raw / _DELTA_QUANTUM) * _DELTA_QUANTUM


def elo_update(
    rating_a: float, rating_b: float, score_a: float, *, k: float = DEFAULT_K
) -> tuple[float, float]:
    """New ``(rating_a, rating_b)`` after one result; what a gains, b loses (:func:`elo_delta`).

    >>> [round(r, 2) for r in elo_update(1600.0, 1400.0, 0.5, k=10.0)]
    [1597.4, 1402.6]
    """
    delta = elo_delta(rating_a, rating_b, score_a, k=k)
    return rating_a + delta, rating_b - delta


# --------------------------------------------------------------------------- whole-history fit


@dataclass(frozen=True, slots=True)
class FittedRating(Generic[P]):
    """One player's whole-history rating, on the Elo scale, with its uncertainty."""

    player: P
    rating: float
    #: Lower and upper ends of the confidence interval (``level`` of :func:`fit_ratings`).
    ci_low: float
    ci_high: float
    #: Standard error of ``rating`` (points).
    stderr: float
    #: Rated results with a positive weight that the player took part in.
    matches: int
    #: True when ``matches`` is under the fit's ``min_matches``.
    is_provisional: bool


def fit_ratings(
    results: Iterable[tuple[P, P, float]],
    *,
    weights: Iterable[float] | None = None,
    players: Iterable[P] = (),
    min_matches: int = DEFAULT_MIN_MATCHES,
    level: float = 0.95,
    prior_draws: float = 1.0,
) -> dict[P, FittedRating[P]]:
    """Fit Bradley-Terry ratings to every ``(player_a, player_b, score_a)`` result.

    **Model.** ``P(a beats b) = 1 / (1 + 10 ** ((r_b - r_a) / 400))``, the Elo curve. A draw
    counts as half a win and half a loss (the usual Elo treatment), so the log-likelihood is
    ``sum w * (s log p + (1 - s) log(1 - p))`` over results with score ``s`` and weight ``w``
    (``weights`` runs parallel to ``results``; default 1 each).

    **Prior.** Each player also gets ``prior_draws`` virtual draws (default one) against an
    average player, i.e. one rated at the mean of the fitted players. It keeps every estimate
    finite when a player has won (or lost) everything, and when the comparison graph falls into
    pieces that no result connects: the level of each piece is then set by the prior alone and
    its intervals are wide. With more than a handful of real results the pull is negligible
    (one draw's worth of shrinkage towards the mean).

    **Anchor and solver.** Ratings are only defined up to a common shift, so the fit is made
    under the constraint that they sum to zero and then shifted by :data:`INITIAL_RATING`:
    the average fitted rating is exactly 1500. The penalised log-likelihood is strictly concave
    on that subspace; it is maximised from all-equal ratings by damped (backtracking) Newton
    steps, each solved on the sum-zero subspace by preconditioned conjugate gradients on the
    sparse information matrix (:func:`arena.measures.bradley_terry.solve_ratings`).

    **Intervals.** The covariance is the inverse observed information under the constraint,
    ``Z (Z^T I Z)^-1 Z^T`` for an orthonormal basis ``Z`` of the sum-zero subspace, with ``I``
    the negative Hessian of the penalised log-likelihood at the optimum. ``stderr`` is the
    square root of its diagonal, and the interval is ``rating ± z * stderr`` with ``z`` the
    normal quantile for ``level``. Each interval is for one player's rating relative to the
    field's average. Treating draws as half wins overstates their variance, so with many draws
    the intervals err on the wide side. Up to 2,000 players the diagonal is exact (a dense
    inverse); beyond, it is exact pool by pool where that is cheap (small pools, and chains or
    ladders of neighbours, as a band) and otherwise a spectral approximation whose measured
    error is under a percent (:mod:`arena.measures.bradley_terry` gives the methods and the
    figures; :func:`~arena.measures.bradley_terry.variance_method` names the one used).

    ``players`` may name players without results, who are fitted too (at the prior, with a
    wide interval). The result maps each player to a :class:`FittedRating`, best first.
    Cost: results are summed per pair first, then a few Newton steps over the distinct pairs;
    10,000 players and 1,000,000 results take a few seconds, intervals included
    (``benchmarks/bench_ratings.py``).

    >>> fit = fit_ratings([("a", "b", 1.0), ("b", "c", 0.5)], min_matches=2)
    >>> [(p, round(r.rating), r.matches, r.is_provisional) for p, r in fit.items()]
    [('a', 1645, 1, True), ('c', 1451, 1, True), ('b', 1404, 2, False)]
    """
    if min_matches < 0:
        raise RatingError(f"min_matches must be at least 0, not {min_matches!r}")
    if not 0.0 < level < 1.0:
        raise RatingError(f"level must be between 0 and 1, not {level!r}")
    if not (math.isfinite(prior_draws) and prior_draws > 0):
        raise RatingError(f"prior_draws must be a positive finite number, not {prior_draws!r}")

    player_a, player_b, score_a = _columns(results)
    # Players in order of first appearance (result by result, a before b), then the others.
    order = dict.fromkeys(chain.from_iterable(zip(player_a, player_b, strict=True)))
    for player in players:
        order.setdefault(player)
    index = {player: position for position, player in enumerate(order)}
    ia = np.fromiter(map(index.__getitem__, player_a), dtype=np.intp, count=len(player_a))
    ib = np.fromiter(map(index.__getitem__, player_b), dtype=np.intp, count=len(player_b))
    _check_results(player_a, ia, ib, score_a)
    score = np.array(score_a, dtype=np.float64)
    weight = _weights(weights, score.size)

    n = len(index)
    played = weight > 0
    matches = np.bincount(ia[played], minlength=n) + np.bincount(ib[played], minlength=n)
    rating, stderr = _fit(n, ia=ia, ib=ib, score=score, weight=weight, prior=prior_draws)

    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    fitted = [
        FittedRating(
            player=player,
            rating=float(rating[i]) + INITIAL_RATING,
            ci_low=float(rating[i] - z * stderr[i]) + INITIAL_RATING,
            ci_high=float(rating[i] + z * stderr[i]) + INITIAL_RATING,
            stderr=float(stderr[i]),
            matches=int(matches[i]),
            is_provisional=int(matches[i]) < min_matches,
        )
        for player, i in index.items()
    ]
    fitted.sort(key=lambda f: -f.rating)
    return {f.player: f for f in fitted}


def _weights(weights: Iterable[float] | None, count: int) -> FloatArray:
    if weights is None:
        return np.ones(count, dtype=np.float64)
    weight = np.array(list(weights), dtype=np.float64)
    if weight.shape != (count,):
        raise RatingError(f"{weight.size} weights for {count} results")
    if not (np.all(np.isfinite(weight)) and np.all(weight >= 0)):
        raise RatingError("weights must be finite and non-negative")
    return weight


def _columns(
    results: Iterable[tuple[P, P, float]],
) -> tuple[Sequence[P], Sequence[P], Sequence[float]]:
    """The results' three columns (a million results in a fraction of a second)."""
    rows = results if isinstance(results, list) else list(results)
    try:
        lengths = set(map(len, rows))
    except TypeError:  # a row without a length: unpack it below
        lengths = {-1}
    if lengths <= {3}:
        return (
            list(map(itemgetter(0), rows)),
            list(map(itemgetter(1), rows)),
            list(map(itemgetter(2), rows)),
        )
    player_a: list[P] = []
    player_b: list[P] = []
    score_a: list[float] = []
    for a, b, score in rows:  # raises on a row that is not three values, as unpacking does
        player_a.append(a)
        player_b.append(b)
        score_a.append(score)
    return player_a, player_b, score_a


def _check_results(
    player_a: Sequence[object], ia: IntArray, ib: IntArray, score_a: Sequence[float]
) -> None:
    """Raise for the first bad result, in order: self-play, then a score other than 0, ½, 1."""
    self_play = np.flatnonzero(ia == ib)
    first_self = int(self_play[0]) if self_play.size else len(score_a)
    bad_scores = set(score_a) - _SCORES
    first_bad = len(score_a)
    if bad_scores:
        first_bad = next(k for k, score in enumerate(score_a) if score not in _SCORES)
    if first_self < len(score_a) and first_self <= first_bad:
        _check_players(player_a[first_self], player_a[first_self])
    if first_bad < len(score_a):
        _check_score(score_a[first_bad])


def _fit(
    n: int, *, ia: IntArray, ib: IntArray, score: FloatArray, weight: FloatArray, prior: float
) -> tuple[FloatArray, FloatArray]:
    """Centred ratings and their standard errors (see :func:`fit_ratings`)."""
    if n <= 1:
        return np.zeros(n, dtype=np.float64), np.zeros(n, dtype=np.float64)
    from arena.measures import bradley_terry  # noqa: PLC0415 - scipy loads only for a fit

    pairs = bradley_terry.pair_totals(n, ia=ia, ib=ib, score=score, weight=weight)
    rating = bradley_terry.solve_ratings(pairs, prior)
    variance = bradley_terry.constrained_variances(bradley_terry.information(pairs, rating, prior))
    return rating, np.sqrt(variance)
