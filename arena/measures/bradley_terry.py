"""The numerical core of the whole-history fit: a sparse Bradley-Terry solver and its intervals.

:func:`arena.measures.ratings.fit_ratings` is the public door (it checks and indexes the
results, and names the players); this module only does arithmetic on integer player indices.
Like the rest of :mod:`arena.measures` it reads no clock, does no I/O and draws no random
numbers: a fit is a deterministic function of its input.

**The problem.** Players ``0..n-1``, results summed per unordered pair (:func:`pair_totals`),
the penalised log-likelihood of :func:`arena.measures.ratings.fit_ratings` maximised under the
constraint that the ratings sum to zero. Its negative Hessian, the *information* ``I``, is a
graph Laplacian (one weight per pair that met) plus a diagonal from the prior: sparse, with
``n + 2 * pairs`` non-zero entries, never stored as an ``n x n`` array beyond
:data:`EXACT_LIMIT` players.

**The solver** (:func:`solve_ratings`): damped Newton from all-equal ratings, each step
``I step = gradient`` on the sum-zero subspace solved by conjugate gradients with a Jacobi
(diagonal) preconditioner, to a relative residual that shrinks with the gradient (an inexact
Newton method, superlinear), until no player's residual (actual minus expected score) exceeds
1e-10 games. The dense solver it replaced stopped short of that optimum by up to ~1e-4 points
on a few lopsided schedules (``tests/test_ratings_sparse.py``), 6e-5 on the benchmark's ladders.

**The intervals** (:func:`constrained_variances`) need the diagonal of ``C``, the inverse of
``I`` on the sum-zero subspace (the covariance of the centred ratings). :func:`variance_method`
names the method used:

* ``dense``: up to :data:`EXACT_LIMIT` players, exactly (:func:`exact_variances`: the dense
  inverse of ``I`` bordered by the constraint, as the fit always did; 0.4 s at 2,000 players).
* Beyond, pool by pool (:func:`pooled_variances`; a pool is a connected component of the
  players who met). The covariance splits exactly into each pool's variation about its own
  mean and the pools' levels, which only the prior ties to the field: the levels come from one
  conjugate-gradient solve ``u = I^-1 1``, exactly. Within a pool of at most
  :data:`SMALL_POOL` players the variances are exact (a small dense inverse per pool). The
  larger pools are done together, either
* ``banded``, exactly, when their bandwidth after a reverse Cuthill-McKee ordering is small
  enough (``players x bandwidth^2`` at most 2e9): the Takahashi recurrence on a banded Cholesky
  factor gives the band of the inverse. That is the case of chains and of ladders where
  players meet only neighbours in strength; or
* ``spectral``, approximately (:func:`spectral_variances`). With ``D`` the diagonal of ``I``,
  the normalised information ``N = D^-1/2 I D^-1/2`` (each pool's level projected out) has its
  spectrum in (0, 2), most of it near 1 on a well-mixed schedule. Its inverse is taken as the
  second-order expansion ``1/x ~ 3 - 3x + x^2`` around 1, whose diagonal is exact and cheap
  (``diag(N^2)`` is the row sums of the squared entries), plus the remainder ``(1 - x)^3 / x``
  on a Krylov space of block Lanczos (blocks of :data:`LANCZOS_BLOCK`), which finds first the
  modes where the remainder is large: the slow ones near 0 that carry long-range uncertainty,
  and any near 2 (bipartite structure, such as a star). The space grows until the remainder's
  trace settles, within ``players x vectors^2`` of :data:`KRYLOV_WORK` (1,581 vectors at
  10,000 players).

Measured error of the spectral standard errors against the exact dense ones
(``benchmarks/bench_ratings.py``, figures in ``benchmarks/results/ratings.json`` and
``benchmarks/README.md``): at 1,000 and 2,000 players under 0.1% for every player on ladders
(each player meeting tens to a hundred opponents, mostly close in strength, some unbeaten,
with or without exploration), uniform schedules, disconnected pools and a star; at 10,000
players 0.03% at most on the ladder (10% of pairings against anyone; under a second) and 0.2%
on a narrow ladder where one pairing in 500 goes far (the hardest case found: too few
long-range pairings to mix, too many for a band; its Krylov space reaches the cap, ~6.5 s).
Alone it is poor where players meet only neighbours along a chain (the standard errors too
small by a third), which is why such pools are factorised as a band instead. The quantity
estimated is the same at every size; only beyond :data:`EXACT_LIMIT` players, and only for
``spectral``, is it an approximation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, sparse
from scipy.sparse import csgraph

__all__ = [
    "EXACT_LIMIT",
    "KRYLOV_WORK",
    "LANCZOS_BLOCK",
    "SCALE",
    "SMALL_POOL",
    "Information",
    "PairTotals",
    "constrained_variances",
    "exact_variances",
    "information",
    "pair_totals",
    "pooled_method",
    "pooled_variances",
    "solve_ratings",
    "spectral_variances",
    "variance_method",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

#: The logistic scale of the fit: P(a beats b) = 1 / (1 + exp(-(r_a - r_b) / SCALE)).
SCALE: Final = 400.0 / math.log(10.0)
#: Up to this many players the intervals come from the exact dense inverse.
EXACT_LIMIT: Final = 2000
#: Lowest and highest eigenpairs of the normalised information inverted exactly beyond it.
#: Beyond it, block Lanczos of this many steps of this many vectors (a 300-vector Krylov space).
LANCZOS_BLOCK: Final = 20
#: The Krylov space grows until the remainder settles, up to players x vectors^2 of this
#: (1,581 vectors at 10,000 players), checked from 3% of the players on.
KRYLOV_WORK: Final = 2.5e10
#: Pools of at most this many players get exact within-pool variances (a dense inverse each).
SMALL_POOL: Final = 300

_MAX_NEWTON_STEPS: Final = 200
#: Below this decrement (the log-likelihood a full step would still gain) Newton takes full
#: steps, no line search; it stops when no residual (actual minus expected score) exceeds
#: ``_GRADIENT_TOL`` games, or when a full step no longer halves the largest.
_DECREMENT: Final = 1e-12
_GRADIENT_TOL: Final = 1e-10
#: Relative residual the last Newton steps' conjugate gradients reach (and the solve for levels).
_CG_FLOOR: Final = 1e-12
#: The large pools are factorised as a band when players x bandwidth^2 is at most this.
_BANDED_WORK: Final = 2e9
#: A Lanczos residual direction shorter than this (the operator's norm is at most 2) is none.
_RANK_FLOOR: Final = 1e-7
#: The first check of the Krylov space's remainder, as a share of the players (300 of 10,000).
_FIRST_CHECK: Final = 0.03
_SETTLED: Final = 0.002

_Operator = Callable[[FloatArray], FloatArray]


@dataclass(frozen=True, slots=True)
class PairTotals:
    """Sufficient statistics of the results: per unordered pair ``lo[k] < hi[k]`` that met
    with a positive weight, the total weight and ``lo[k]``'s weighted score."""

    n: int
    lo: IntArray
    hi: IntArray
    total: FloatArray
    won: FloatArray


@dataclass(frozen=True, slots=True)
class Information:
    """The information at some ratings: ``curvature[k]`` couples ``lo[k]`` and ``hi[k]``
    (the matrix holds ``-curvature[k]`` there), ``diagonal`` includes the prior's part."""

    pairs: PairTotals
    curvature: FloatArray
    diagonal: FloatArray


def pair_totals(
    n: int, *, ia: IntArray, ib: IntArray, score: FloatArray, weight: FloatArray
) -> PairTotals:
    """Sum results ``(ia[k], ib[k], score[k])`` of weight ``weight[k]`` per unordered pair.

    >>> p = pair_totals(3, ia=np.array([0, 1, 2]), ib=np.array([1, 0, 1]),
    ...                 score=np.array([1.0, 1.0, 0.5]), weight=np.ones(3))
    >>> p.lo.tolist(), p.hi.tolist(), p.total.tolist(), p.won.tolist()
    ([0, 1], [1, 2], [2.0, 1.0], [1.0, 0.5])
    """
    lo, hi = np.minimum(ia, ib), np.maximum(ia, ib)
    score_lo = np.where(ia < ib, score, 1.0 - score)
    key = lo.astype(np.int64) * n + hi
    pair_ids, pair_of = np.unique(key, return_inverse=True)
    total = _scatter(pair_of.ravel(), weight, pair_ids.size)
    won = _scatter(pair_of.ravel(), weight * score_lo, pair_ids.size)
    met = total > 0
    pair_ids = pair_ids[met]
    return PairTotals(
        n=n,
        lo=(pair_ids // n).astype(np.intp),
        hi=(pair_ids % n).astype(np.intp),
        total=total[met],
        won=won[met],
    )


def information(pairs: PairTotals, rating: FloatArray, prior: float) -> Information:
    """The negative Hessian of the penalised log-likelihood at ``rating`` (centred)."""
    p = _sigmoid((rating[pairs.lo] - rating[pairs.hi]) / SCALE)
    p0 = _sigmoid(rating / SCALE)
    curvature = pairs.total * p * (1.0 - p) / SCALE**2
    diagonal = (
        _scatter(pairs.lo, curvature, pairs.n)
        + _scatter(pairs.hi, curvature, pairs.n)
        + prior * p0 * (1.0 - p0) / SCALE**2
    )
    return Information(pairs=pairs, curvature=curvature, diagonal=diagonal)


# --------------------------------------------------------------------------- the optimum


def solve_ratings(pairs: PairTotals, prior: float) -> FloatArray:
    """The centred ratings (summing to zero) that maximise the penalised log-likelihood."""
    n = pairs.n
    if n <= 1:
        return np.zeros(n, dtype=np.float64)
    lo, hi, total, won = pairs.lo, pairs.hi, pairs.total, pairs.won
    pattern = _Pattern(n, lo, hi)

    def objective(r: FloatArray) -> float:
        d, x = (r[lo] - r[hi]) / SCALE, r / SCALE
        pair_terms = won * _log_sigmoid(d) + (total - won) * _log_sigmoid(-d)
        virtual = 0.5 * prior * (_log_sigmoid(x) + _log_sigmoid(-x))
        return float(pair_terms.sum() + virtual.sum())

    def gradient(r: FloatArray) -> FloatArray:
        p, p0 = _sigmoid((r[lo] - r[hi]) / SCALE), _sigmoid(r / SCALE)
        residual = (won - total * p) / SCALE
        grad = _scatter(lo, residual, n) - _scatter(hi, residual, n)
        grad += prior * (0.5 - p0) / SCALE
        return grad

    r = np.zeros(n, dtype=np.float64)
    value = objective(r)
    first_norm, previous_size = 0.0, math.inf
    for _ in range(_MAX_NEWTON_STEPS):
        grad = gradient(r)
        grad -= grad.mean()  # the gradient along the sum-zero subspace
        size = float(np.max(np.abs(grad))) * SCALE  # the largest residual, in games
        if size <= _GRADIENT_TOL:
            break
        norm = float(np.linalg.norm(grad))
        first_norm = first_norm or norm
        # Tighter as the gradient falls, but no tighter than the step needs to bring the
        # largest residual under a tenth of the tolerance (rounding stalls CG below that).
        forcing = max(_CG_FLOOR, 0.1 * _GRADIENT_TOL / size, min(0.1, norm / first_norm))
        step = _projected_cg(pattern, information(pairs, r, prior), grad, rtol=forcing)
        decrement = float(grad @ step)
        if decrement < _DECREMENT:  # the quadratic region: full steps while they still help
            if size > 0.5 * previous_size:
                break  # stalled at rounding level
            r, previous_size = r + step, size
            value = objective(r)
            continue
        t = 1.0
        while True:  # backtracking (Armijo) line search; the objective is concave
            candidate = r + t * step
            new_value = objective(candidate)
            if new_value >= value + 1e-4 * t * decrement or t < 1e-12:
                break
            t /= 2.0
        if new_value <= value:  # no progress left at double precision
            break
        r, value, previous_size = candidate, new_value, size
    else:  # pragma: no cover - damped Newton on a strictly concave function converges
        raise ArithmeticError("rating fit did not converge")
    centred: FloatArray = r - r.mean()  # exact zero sum, undoing rounding drift
    return centred


def _projected_cg(
    pattern: _Pattern, info: Information, b: FloatArray, *, rtol: float
) -> FloatArray:
    """Solve ``I x = b`` on the sum-zero subspace (``b`` in it), Jacobi-preconditioned CG."""
    matrix = pattern.matrix(info.curvature)
    diagonal = info.diagonal
    inverse_diagonal = 1.0 / diagonal
    x = np.zeros_like(b)
    residual = b.copy()
    z = inverse_diagonal * residual
    z -= z.mean()
    direction = z.copy()
    rz = float(residual @ z)
    target = rtol * float(np.linalg.norm(b))
    for _ in range(2 * pattern.n + 50):
        q = diagonal * direction - matrix @ direction
        q -= q.mean()
        alpha = rz / float(direction @ q)
        x += alpha * direction
        residual -= alpha * q
        if float(np.linalg.norm(residual)) <= target:
            break
        z = inverse_diagonal * residual
        z -= z.mean()
        rz, previous = float(residual @ z), rz
        direction = z + (rz / previous) * direction
    return x


# --------------------------------------------------------------------------- the intervals


def constrained_variances(info: Information) -> FloatArray:
    """Variances of the centred ratings, by the method :func:`variance_method` names."""
    if info.pairs.n <= EXACT_LIMIT:
        return exact_variances(info)
    return pooled_variances(info, banded=True)


def variance_method(info: Information) -> str:
    """How :func:`constrained_variances` gets the variances of ``info``: ``"dense"`` (exact,
    up to :data:`EXACT_LIMIT` players), else :func:`pooled_method`."""
    return "dense" if info.pairs.n <= EXACT_LIMIT else pooled_method(info)


def pooled_method(info: Information) -> str:
    """What :func:`pooled_variances` does with the large pools of ``info``: ``"small pools"``
    (there are none: every pool is exact), ``"banded"`` (exact, from a band) or
    ``"spectral"`` (approximated)."""
    plan = _Plan(info)
    if plan.large.size == 0:
        return "small pools"
    return "banded" if plan.banded_order() is not None else "spectral"


def exact_variances(info: Information) -> FloatArray:
    """The diagonal of the sum-zero-constrained inverse, from the dense bordered matrix.

    ``[[I, 1], [1^T, 0]]^-1``'s upper-left block is ``Z (Z^T I Z)^-1 Z^T`` for an orthonormal
    basis ``Z`` of the sum-zero subspace. Memory ``8 n^2`` bytes, time cubic in ``n``.
    """
    n, pairs = info.pairs.n, info.pairs
    if n <= 1:
        return np.zeros(n, dtype=np.float64)
    bordered = np.zeros((n + 1, n + 1))
    bordered[pairs.lo, pairs.hi] = -info.curvature
    bordered[pairs.hi, pairs.lo] = -info.curvature
    diagonal = np.arange(n)
    bordered[diagonal, diagonal] = info.diagonal
    bordered[n, :n] = 1.0
    bordered[:n, n] = 1.0
    variance = np.diag(np.linalg.inv(bordered))[:n]
    out: FloatArray = np.maximum(variance, 0.0)
    return out


def spectral_variances(
    info: Information,
    *,
    block: int = LANCZOS_BLOCK,
    steps: int | None = None,
    work: float = KRYLOV_WORK,
) -> FloatArray:
    """The diagonal of the constrained inverse with every large pool approximated
    (:func:`pooled_variances` without its banded shortcut; see the module's docstring).

    The error is what the Krylov space of ``steps`` blocks of ``block`` Lanczos vectors misses
    of the third-order remainder ``(1 - x)^3 / x`` (largest on the slowest modes, found first).
    """
    return pooled_variances(info, banded=False, krylov=(block, steps), work=work)


def pooled_variances(
    info: Information,
    *,
    banded: bool,
    krylov: tuple[int, int | None] = (LANCZOS_BLOCK, None),
    small_pool: int = SMALL_POOL,
    work: float = KRYLOV_WORK,
) -> FloatArray:
    """The diagonal of the constrained inverse, pool by pool (connected components).

    Within each pool, relative to the pool's mean: a pool of one player has no such part; a
    pool of at most ``small_pool`` players gets it exactly, from a small dense inverse
    (many pools alike would defeat Lanczos, which sees only ``block`` directions of a repeated
    eigenvalue). The large pools share one computation: exact from a banded factorisation when
    ``banded`` and their bandwidth after reverse Cuthill-McKee ordering makes it cheap (chains
    and ladders without long-range pairings), else the spectral approximation. Then each
    pool's level relative to the field, exactly.
    """
    n, d = info.pairs.n, info.diagonal
    if n <= 1:
        return np.zeros(n, dtype=np.float64)
    plan = _Plan(info, largest_small=small_pool)
    variance = np.zeros(n)
    for members, pool_info in _small_pools(info, plan.pool_of, plan.small):
        variance[members] = exact_variances(pool_info)
    if plan.large.size:
        sub = plan.large_information()
        order = plan.banded_order() if banded else None
        if order is not None:
            variance[plan.large] = _banded_within_pool_variances(sub, plan.large_pool, order)
        else:
            variance[plan.large] = _within_pool_variances(
                sub.diagonal,
                lo=sub.pairs.lo,
                hi=sub.pairs.hi,
                curvature=sub.curvature,
                pool_of=plan.large_pool,
                krylov=krylov,
                work=work,
            )
    if plan.pools > 1:  # each pool's level: exact, from u = I^-1 1 (I is block diagonal by pool)
        prior_part = (
            d
            - _scatter(info.pairs.lo, info.curvature, n)
            - _scatter(info.pairs.hi, info.curvature, n)
        )
        pool = _Pools(plan.pool_of, plan.pools)
        u = _solve_levels(info, pool, prior_part)
        variance += u**2 / pool.total(u) - u**2 / float(u.sum())
    out: FloatArray = np.maximum(variance, 0.0)
    return out


class _Plan:
    """The pools of ``info`` and which are small (exact) or large (one shared computation)."""

    def __init__(self, info: Information, *, largest_small: int = SMALL_POOL):
        self.info = info
        pairs = info.pairs
        self.pools, pool_of = csgraph.connected_components(
            _Pattern(pairs.n, pairs.lo, pairs.hi).matrix(pairs.total), directed=False
        )
        self.pool_of: IntArray = pool_of.astype(np.intp)
        size = np.bincount(self.pool_of, minlength=self.pools)
        self.small: IntArray = np.flatnonzero((size >= 2) & (size <= largest_small))
        self.large: IntArray = np.flatnonzero(size[self.pool_of] > largest_small)
        self._large_pairs = size[self.pool_of[pairs.lo]] > largest_small
        _, large_pool = np.unique(self.pool_of[self.large], return_inverse=True)
        self.large_pool: IntArray = large_pool.ravel().astype(np.intp)

    def large_information(self) -> Information:
        """The information of the large pools' players alone, renumbered ``0..``."""
        pairs, rows = self.info.pairs, self._large_pairs
        position = np.zeros(pairs.n, dtype=np.intp)
        position[self.large] = np.arange(self.large.size)
        sub = PairTotals(
            n=self.large.size,
            lo=position[pairs.lo[rows]],
            hi=position[pairs.hi[rows]],
            total=pairs.total[rows],
            won=pairs.won[rows],
        )
        return Information(sub, self.info.curvature[rows], self.info.diagonal[self.large])

    def banded_order(self) -> IntArray | None:
        """A reverse Cuthill-McKee order of the large pools if their band is cheap, else None."""
        sub = self.large_information().pairs
        pattern = _Pattern(sub.n, sub.lo, sub.hi).matrix(np.ones(sub.lo.size))
        order = csgraph.reverse_cuthill_mckee(pattern, symmetric_mode=True).astype(np.intp)
        rank = np.empty(sub.n, dtype=np.intp)
        rank[order] = np.arange(sub.n)
        bandwidth = int(np.max(np.abs(rank[sub.lo] - rank[sub.hi]), initial=0))
        return order if sub.n * bandwidth**2 <= _BANDED_WORK else None


def _banded_within_pool_variances(
    info: Information, pool_of: IntArray, order: IntArray
) -> FloatArray:
    """Exact variances relative to each pool's mean, from the banded Cholesky factor.

    With ``I = L L^T`` banded (players in ``order``), the band of ``Sigma = I^-1`` follows
    from the Takahashi recurrence, last column first; the pool's constraint then removes
    ``u u^T / (1^T u)`` per pool, ``u = I^-1 1``.
    """
    n, pairs = info.pairs.n, info.pairs
    rank = np.empty(n, dtype=np.intp)
    rank[order] = np.arange(n)
    lo, hi = rank[pairs.lo], rank[pairs.hi]
    row, column = np.maximum(lo, hi), np.minimum(lo, hi)
    bandwidth = int(np.max(row - column, initial=0))
    band = np.zeros((bandwidth + 1, n))  # band[k, j] = I[j + k, j]
    band[0] = info.diagonal[order]
    band[row - column, column] = -info.curvature  # one entry per pair
    factor = linalg.cholesky_banded(band, lower=True)
    sigma = np.empty(n)
    window = np.zeros((bandwidth + 1, bandwidth + 1))  # Sigma[j..j+b, j..j+b]
    for j in range(n - 1, -1, -1):
        m = min(bandwidth, n - 1 - j)
        ratio = factor[1 : m + 1, j] / factor[0, j]
        below = -window[1 : m + 1, 1 : m + 1] @ ratio  # Sigma[j+1..j+m, j]
        sigma[j] = 1.0 / factor[0, j] ** 2 - ratio @ below
        if bandwidth:
            window[2:, 2:] = window[1:-1, 1:-1]
            kept = min(m, bandwidth - 1)
            window[1, 1] = sigma[j]
            window[2:, 1] = 0.0
            window[1, 2:] = 0.0
            window[2 : 2 + kept, 1] = below[:kept]
            window[1, 2 : 2 + kept] = below[:kept]
    u = linalg.cho_solve_banded((factor, True), np.ones(n))
    pool = _Pools(pool_of[order], int(pool_of.max()) + 1)
    within = sigma - u**2 / pool.total(u)
    out = np.empty(n)
    out[order] = within
    return out


def _small_pools(
    info: Information, pool_of: IntArray, wanted: IntArray
) -> Iterator[tuple[IntArray, Information]]:
    """For each pool in ``wanted``: its players and their information alone."""
    if wanted.size == 0:
        return
    pairs, bounds = info.pairs, np.arange(int(pool_of.max()) + 2)
    player_order = np.argsort(pool_of, kind="stable")  # by pool, then by index
    player_starts = np.searchsorted(pool_of[player_order], bounds)
    local = np.empty(pairs.n, dtype=np.intp)  # each player's index within its pool
    local[player_order] = np.arange(pairs.n) - player_starts[pool_of[player_order]]
    pair_pool = pool_of[pairs.lo]
    pair_order = np.argsort(pair_pool, kind="stable")
    pair_starts = np.searchsorted(pair_pool[pair_order], bounds)
    for pool in wanted:
        members = player_order[player_starts[pool] : player_starts[pool + 1]]
        rows = pair_order[pair_starts[pool] : pair_starts[pool + 1]]
        sub = PairTotals(
            n=members.size,
            lo=local[pairs.lo[rows]],
            hi=local[pairs.hi[rows]],
            total=pairs.total[rows],
            won=pairs.won[rows],
        )
        yield members, Information(sub, info.curvature[rows], info.diagonal[members])


def _within_pool_variances(
    d: FloatArray,
    *,
    lo: IntArray,
    hi: IntArray,
    curvature: FloatArray,
    pool_of: IntArray,
    krylov: tuple[int, int | None],
    work: float,
) -> FloatArray:
    """Variances relative to each pool's own mean, every pool having two players or more."""
    n = d.size
    pool = _Pools(pool_of, int(pool_of.max()) + 1)
    # Normalised coordinates: N = 1 - A; ``level`` is the sum-zero constraint's normal
    # (D^-1/2 1), one unit vector per pool.
    root = np.sqrt(d)
    entries = curvature / (root[lo] * root[hi])
    adjacency = _Pattern(n, lo, hi).matrix(entries)
    level = 1.0 / (root * np.sqrt(pool.total(1.0 / d)))

    def normalised(x: FloatArray) -> FloatArray:
        out: FloatArray = x - adjacency @ x
        return out

    def within(x: FloatArray) -> FloatArray:
        """``P N P`` (P the projection off the levels), plus the levels at eigenvalue 1."""
        lv = level[:, None] if x.ndim == 2 else level
        coefficient = pool.total(lv * x)
        y = normalised(x - lv * coefficient)
        out: FloatArray = y - lv * pool.total(lv * y) + lv * coefficient
        return out

    # diag q(PNP) for q(x) = 3 - 3x + x^2, from diag(PNP) and diag((PNP)^2) in closed form.
    w = normalised(level)
    c, ww = pool.total(level * w), pool.total(w * w)
    y = normalised(w)
    squares = entries**2
    row_norms = 1.0 + _scatter(lo, squares, n) + _scatter(hi, squares, n)
    diag_pnp = 1.0 - 2.0 * level * w + c * level**2
    diag_pnp2 = row_norms + level**2 * (ww - c**2) - w**2 - 2.0 * level * y + 2.0 * c * level * w
    series = 3.0 - 3.0 * diag_pnp + diag_pnp2 - 3.0 * level**2  # minus q(0) on the levels

    values, vectors = _lanczos_modes(within, n, *krylov, total=float(series.sum()), work=work)
    remainder = (1.0 - values) ** 3 / values  # 1/x - q(x), applied on the Krylov space
    out: FloatArray = (series + (vectors**2) @ remainder) / d
    return out


def _lanczos_modes(
    operator: _Operator,
    n: int,
    block: int,
    steps: int | None,
    *,
    total: float = 0.0,
    work: float = KRYLOV_WORK,
) -> tuple[FloatArray, FloatArray]:
    """Ritz values and vectors of the symmetric ``operator`` from block Lanczos.

    Blocks of ``block`` vectors from a fixed start, with full reorthogonalisation (block
    classical Gram-Schmidt, twice, in :func:`_orthonormal`). The extreme eigenpairs converge
    first; every Ritz pair is returned, so that ``sum f(value) vector vector^T`` is the
    Galerkin approximation of ``f(operator)`` on the Krylov space. ``steps`` blocks exactly, or
    with None as many as it takes for the trace of the remainder ``f(x) = (1 - x)^3 / x`` on
    the Krylov space to settle: to change by under :data:`_SETTLED` of ``total`` (the trace
    without it) plus itself while the space grows by half, within :data:`KRYLOV_WORK`. When
    the space would hold every mode (a small pool), they are computed densely.
    """
    most = min(int(math.sqrt(work / max(n, 1))), n // 2)
    size = block * steps if steps is not None else max(block, most - most % block)
    if n <= size:
        full = operator(np.eye(n))
        every_value, every_vector = np.linalg.eigh((full + full.T) / 2.0)
        return every_value, every_vector
    basis = np.empty((size, n))  # one basis vector per row
    tridiagonal = np.zeros((size, size))  # block tridiagonal
    basis[:block] = _orthonormal(_start_block(n, block), basis[:0]).T
    check, settled = max(3 * block, int(_FIRST_CHECK * n)), math.nan
    for k in range(size // block):
        now, upto = slice(k * block, (k + 1) * block), (k + 1) * block
        w = operator(basis[now].T)
        diagonal = basis[now] @ w
        tridiagonal[now, now] = (diagonal + diagonal.T) / 2.0
        if upto == size:
            break
        if steps is None and upto >= check:
            ritz_values = np.linalg.eigvalsh(tridiagonal[:upto, :upto])
            trace = float(np.sum((1.0 - ritz_values) ** 3 / ritz_values))
            if abs(trace - settled) <= _SETTLED * abs(total + trace):
                size = upto
                break
            check, settled = int(upto * 1.5), trace
        q = _next_block(w, basis[:upto], start=upto)
        if q is None:  # an invariant subspace: the Ritz pairs so far are exact
            size = upto
            break
        r = q.T @ w
        following = slice(upto, upto + block)
        basis[following] = q.T
        tridiagonal[following, now] = r
        tridiagonal[now, following] = r.T
    values, ritz = np.linalg.eigh(tridiagonal[:size, :size])
    vectors: FloatArray = basis[:size].T @ ritz
    return values, vectors


def _next_block(w: FloatArray, basis: FloatArray, *, start: int) -> FloatArray | None:
    """An orthonormal basis (columns) of the range of ``w`` off the rows of ``basis``.

    Directions ``w`` lacks (its rank fell: part of an invariant subspace was found) are filled
    with fresh ones orthogonal to everything so far; None when ``w`` is (numerically) zero.
    """
    kept = _orthonormal(w, basis)
    if kept.shape[1] == 0:
        return None
    if kept.shape[1] == w.shape[1]:
        return kept
    fresh = _start_block(w.shape[0], w.shape[1] - kept.shape[1], offset=start)
    return np.hstack([kept, _orthonormal(fresh, np.vstack([basis, kept.T]))])


def _orthonormal(w: FloatArray, basis: FloatArray) -> FloatArray:
    """Orthonormal columns spanning ``w``'s numerically non-zero range, off ``basis``'s rows.

    Classical Gram-Schmidt against ``basis`` and Gram-matrix orthonormalisation, both twice
    (one pass lets Lanczos lose orthogonality and grow ghost eigenvalues): matrix products
    and small eigenproblems only, which stay fast on a busy machine where threaded LAPACK
    does not.
    """
    for _ in range(2):
        w = w - basis.T @ (basis @ w)
        values, vectors = np.linalg.eigh(w.T @ w)
        strong = values > _RANK_FLOOR**2
        w = w @ (vectors[:, strong] / np.sqrt(values[strong]))
    return w


def _solve_levels(info: Information, pool: _Pools, prior_part: FloatArray) -> FloatArray:
    """``u = I^-1 1`` by conjugate gradients, preconditioned by the diagonal plus each pool's
    level: on a pool's indicator the information is the prior's alone, so the preconditioner
    adds ``(1_c^T r) / (the pool's prior curvature)`` per pool."""
    d = info.diagonal
    coupling = _Pattern(info.pairs.n, info.pairs.lo, info.pairs.hi).matrix(info.curvature)
    pool_prior = pool.total(prior_part)
    b = np.ones_like(d)
    x = np.zeros_like(d)
    residual = b.copy()
    z = residual / d + pool.total(residual) / pool_prior
    direction = z.copy()
    rz = float(residual @ z)
    target = _CG_FLOOR * float(np.linalg.norm(b))
    for _ in range(2 * d.size + 50):
        q = d * direction - coupling @ direction
        alpha = rz / float(direction @ q)
        x += alpha * direction
        residual -= alpha * q
        if float(np.linalg.norm(residual)) <= target:
            break
        z = residual / d + pool.total(residual) / pool_prior
        rz, previous = float(residual @ z), rz
        direction = z + (rz / previous) * direction
    return x


def _start_block(n: int, block: int, *, offset: int = 0) -> FloatArray:
    """Fixed, well-spread vectors (golden-ratio sequences), so that fits are repeatable."""
    golden = (math.sqrt(5.0) - 1.0) / 2.0
    strides = (np.arange(offset + 1, offset + block + 1) * golden) % 1.0 + 1.0
    out: FloatArray = (np.outer(np.arange(1, n + 1), strides) * golden) % 1.0 - 0.5
    return out


# --------------------------------------------------------------------------- helpers


class _Pools:
    """Which pool (connected component) each player is in; sums over a pool, per player."""

    def __init__(self, pool_of: IntArray, pools: int) -> None:
        self.pool_of = pool_of
        self.pools = pools

    def total(self, values: FloatArray) -> FloatArray:
        """Each player's pool's sum of ``values`` (per column for a 2-D array)."""
        if values.ndim == 1:
            out: FloatArray = _scatter(self.pool_of, values, self.pools)[self.pool_of]
            return out
        columns = [_scatter(self.pool_of, column, self.pools) for column in values.T]
        summed: FloatArray = np.stack(columns, axis=1)[self.pool_of]
        return summed


class _Pattern:
    """The symmetric sparsity pattern of the pairs, built once; values are filled per use."""

    def __init__(self, n: int, lo: IntArray, hi: IntArray) -> None:
        self.n = n
        m = lo.size
        order = sparse.csr_matrix(
            (np.arange(1, 2 * m + 1, dtype=np.float64), (np.r_[lo, hi], np.r_[hi, lo])),
            shape=(n, n),
        )
        order.sort_indices()
        self._take = order.data.astype(np.intp) - 1
        self._indices = order.indices
        self._indptr = order.indptr

    def matrix(self, values: FloatArray) -> sparse.csr_matrix:
        """The symmetric matrix with ``values[k]`` at ``(lo[k], hi[k])`` and ``(hi[k], lo[k])``."""
        data = np.r_[values, values][self._take]
        return sparse.csr_matrix((data, self._indices, self._indptr), shape=(self.n, self.n))


def _scatter(index: IntArray, values: FloatArray, size: int) -> FloatArray:
    """``out[index[k]] += values[k]`` into a zero array of ``size``."""
    return np.bincount(index, weights=values, minlength=size).astype(np.float64, copy=False)


def _sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return out


def _log_sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = -np.logaddexp(0.0, -x)
    return out
