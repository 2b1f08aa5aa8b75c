"""The sparse whole-history fit (arena/measures/bradley_terry.py behind fit_ratings): invariants
over random schedules, agreement with the dense fit it replaced, and the spectral intervals
against the exact ones.

The dense fit is the benchmark's verbatim copy (``benchmarks/bench_ratings.py``), the one
reference for both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from benchmark_module import load_benchmark
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.measures import bradley_terry
from arena.measures.ratings import INITIAL_RATING, RatingError, expected_score, fit_ratings

Result = tuple[int, int, float]


bench = load_benchmark("bench_ratings")


def info_of(n: int, results: list[Result], prior: float = 1.0) -> bradley_terry.Information:
    a = np.array([r[0] for r in results], dtype=np.intp)
    b = np.array([r[1] for r in results], dtype=np.intp)
    score = np.array([r[2] for r in results], dtype=np.float64)
    pairs = bradley_terry.pair_totals(n, ia=a, ib=b, score=score, weight=np.ones(a.size))
    return bradley_terry.information(pairs, bradley_terry.solve_ratings(pairs, prior), prior)


def ladder_results(seed: int, n: int, matches: int) -> list[Result]:
    return bench.as_results(bench.ladder(np.random.default_rng(seed), n, matches))


def projected_gradient(results: list[Result], fit: dict[int, object], players: set[int]) -> float:
    """Largest residual (actual minus expected score, the virtual draw included) minus their
    mean: zero at the constrained optimum, where every residual is the same multiplier."""
    residual = dict.fromkeys(players, 0.0)
    for a, b, score in results:
        e = expected_score(fit[a].rating, fit[b].rating)  # type: ignore[attr-defined]
        residual[a] += score - e
        residual[b] -= score - e
    for p in residual:
        residual[p] += 0.5 - expected_score(fit[p].rating, INITIAL_RATING)  # type: ignore[attr-defined]
    values = np.array(list(residual.values()))
    return float(np.max(np.abs(values - values.mean())))


schedules = st.integers(2, 24).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(
            st.tuples(
                st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from([0.0, 0.5, 1.0])
            ).filter(lambda r: r[0] != r[1]),
            min_size=1,
            max_size=120,
        ),
    )
)


# ----------------------------------------------------------------------------- invariants


@settings(derandomize=True, max_examples=150, deadline=None)
@given(schedules)
def test_ratings_average_1500_and_the_optimum_has_no_gradient(
    schedule: tuple[int, list[Result]],
) -> None:
    n, results = schedule
    fit = fit_ratings(results, players=range(n))
    assert math.fsum(f.rating for f in fit.values()) == pytest.approx(n * INITIAL_RATING, abs=1e-6)
    assert projected_gradient(results, fit, set(range(n))) < 1e-8


@settings(derandomize=True, max_examples=100, deadline=None)
@given(schedules)
def test_intervals_contain_the_rating_and_are_finite(schedule: tuple[int, list[Result]]) -> None:
    n, results = schedule
    for f in fit_ratings(results, players=range(n)).values():
        assert all(map(math.isfinite, (f.rating, f.ci_low, f.ci_high, f.stderr)))
        assert f.ci_low < f.rating < f.ci_high


@settings(derandomize=True, max_examples=100, deadline=None)
@given(schedules, st.randoms(use_true_random=False))
def test_relabelling_the_players_relabels_the_fit(
    schedule: tuple[int, list[Result]], random: object
) -> None:
    n, results = schedule
    names = list(range(n))
    random.shuffle(names)  # type: ignore[attr-defined]
    relabelled = [(names[a], names[b], s) for a, b, s in results]
    first = fit_ratings(results, players=range(n))
    second = fit_ratings(relabelled, players=range(n))
    for p in range(n):
        assert second[names[p]].rating == pytest.approx(first[p].rating, abs=1e-7)
        assert second[names[p]].stderr == pytest.approx(first[p].stderr, rel=1e-7)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(schedules)
def test_sparse_fit_equals_the_old_dense_fit(schedule: tuple[int, list[Result]]) -> None:
    n, results = schedule
    new = fit_ratings(results, players=range(n))
    old = bench.dense_fit_ratings(results, players=range(n))
    # The dense solver stopped once a step would gain under 1e-12 of log-likelihood, which on
    # a few players with lopsided results is up to ~1e-4 points short of the optimum; the
    # sparse one goes on until no residual exceeds 1e-10 games.
    for p in range(n):
        assert new[p].rating == pytest.approx(old[p].rating, abs=1e-3)
        assert new[p].stderr == pytest.approx(old[p].stderr, rel=1e-5)
    assert projected_gradient(results, new, set(range(n))) <= max(
        1e-9, projected_gradient(results, old, set(range(n)))
    )


REFERENCE_DATA = {
    # name: (seed, players, results) - the sizes tests/test_ratings.py fits
    "eight_players_4000_results": (1, 8, 4000),
    "three_hundred_players_30000_results": (2, 300, 30_000),
    "a_thousand_players_100000_results": (3, 1000, 100_000),
}


@pytest.mark.parametrize(("seed", "n", "m"), REFERENCE_DATA.values(), ids=REFERENCE_DATA)
def test_sparse_fit_reaches_the_dense_optimum_on_ladders(seed: int, n: int, m: int) -> None:
    results = ladder_results(seed, n, m)
    new, old = fit_ratings(results), bench.dense_fit_ratings(results)
    assert list(new) == list(old)  # the same order
    assert max(abs(new[p].rating - old[p].rating) for p in old) < 1e-4
    assert max(abs(new[p].stderr / old[p].stderr - 1.0) for p in old) < 1e-6
    assert projected_gradient(results, new, set(new)) < 1e-8


def test_newton_converges_on_a_long_chain() -> None:
    # Every player meets only its neighbours: the information is as ill-conditioned as it gets.
    rng = np.random.default_rng(7)
    results = bench.as_results(bench.chain(rng, 400, 20_000))
    fit = fit_ratings(results)
    assert projected_gradient(results, fit, set(fit)) < 1e-8


def test_zero_weight_results_connect_nothing() -> None:
    pairs = bradley_terry.pair_totals(
        4,
        ia=np.array([0, 2, 1]),
        ib=np.array([1, 3, 2]),
        score=np.array([1.0, 0.0, 1.0]),
        weight=np.array([1.0, 1.0, 0.0]),
    )
    assert (pairs.lo.tolist(), pairs.hi.tolist()) == ([0, 2], [1, 3])


# ----------------------------------------------------------------------------- the intervals


def test_spectral_intervals_are_exact_when_the_krylov_space_holds_every_mode() -> None:
    info = info_of(40, ladder_results(4, 40, 2000))
    exact = bradley_terry.exact_variances(info)
    spectral = bradley_terry.spectral_variances(info, block=5, steps=8)  # 40 vectors: all
    np.testing.assert_allclose(spectral, exact, rtol=1e-9)


SPECTRAL_CASES = {
    # name: (schedule, players, results, largest relative error of a standard error allowed)
    "ladder": ("ladder", 600, 60_000, 0.005),
    "uniform": ("uniform", 600, 30_000, 0.001),
    "unbeaten_players": ("unbeaten players", 600, 60_000, 0.005),
    "disconnected_pools_and_players_without_results": ("disconnected pools", 610, 60_000, 0.005),
    "star": ("star", 600, 12_000, 1e-6),
}


@pytest.mark.parametrize(("name", "n", "m", "allowed"), SPECTRAL_CASES.values(), ids=SPECTRAL_CASES)
def test_spectral_intervals_are_close_to_the_exact_ones(
    name: str, n: int, m: int, allowed: float
) -> None:
    a, b, score = bench.SCHEDULES[name](np.random.default_rng(5), n, m)
    info = info_of(n, bench.as_results((a, b, score)))
    exact = np.sqrt(bradley_terry.exact_variances(info))
    # A Krylov space of 100 vectors, a third of the real one's share of the players.
    spectral = np.sqrt(bradley_terry.spectral_variances(info, block=10, steps=10))
    assert np.max(np.abs(spectral / exact - 1.0)) < allowed


def test_spectral_intervals_alone_are_too_narrow_on_a_long_chain() -> None:
    # The spectral method's weak case (the uncertainty is spread over many slow modes), which
    # is why constrained_variances factorises such pools as a band instead.
    a, b, score = bench.chain(np.random.default_rng(6), 600, 30_000)
    info = info_of(600, bench.as_results((a, b, score)))
    exact = np.sqrt(bradley_terry.exact_variances(info))
    spectral = np.sqrt(bradley_terry.spectral_variances(info, block=10, steps=10))
    assert np.all(spectral <= exact * (1.0 + 1e-9))
    assert np.median(spectral / exact) < 0.9


BANDED_CASES = {
    # name: (schedule, players, results)
    "chain": ("chain", 600, 30_000),
    "ladder_without_exploration": ("ladder_tight", 600, 30_000),
    "pools_of_ladders_without_exploration": ("ladder_tight_pools", 600, 30_000),
}


@pytest.mark.parametrize(("name", "n", "m"), BANDED_CASES.values(), ids=BANDED_CASES)
def test_banded_intervals_are_exact_where_players_meet_only_neighbours(
    name: str, n: int, m: int
) -> None:
    a, b, score = getattr(bench, name)(np.random.default_rng(9), n, m)
    info = info_of(n, bench.as_results((a, b, score)))
    exact = bradley_terry.exact_variances(info)
    # Pools over 100 players count as large here, so all of these take the banded path.
    banded = bradley_terry.pooled_variances(info, banded=True, krylov=(10, 10))
    np.testing.assert_allclose(banded, exact, rtol=1e-8)


def test_spectral_levels_of_many_pools_are_exact() -> None:
    # 150 separate pairs (more pools than Krylov vectors) and 20 players without results: each
    # pool's level comes from the exact solve, and a pair has one within-pool mode.
    results = [(2 * k, 2 * k + 1, 1.0) for k in range(150)] * 3 + [(1, 0, 0.5)] * 2
    info = info_of(320, results)
    exact = bradley_terry.exact_variances(info)
    spectral = bradley_terry.spectral_variances(info, block=4, steps=5)
    np.testing.assert_allclose(spectral, exact, rtol=1e-6)


def test_fit_beyond_the_exact_limit_uses_close_spectral_intervals() -> None:
    n = bradley_terry.EXACT_LIMIT + 100
    results = ladder_results(8, n, 40 * n)
    info = info_of(n, results)
    assert bradley_terry.variance_method(info) == "spectral"
    fit = fit_ratings(results)
    exact = np.sqrt(bradley_terry.exact_variances(info))
    stderr = np.array([fit[p].stderr for p in range(n)])
    assert np.max(np.abs(stderr / exact - 1.0)) < 0.005
    assert all(f.ci_low < f.rating < f.ci_high for f in fit.values())
    again = fit_ratings(results)
    assert [(f.rating, f.stderr) for f in again.values()] == [
        (f.rating, f.stderr) for f in fit.values()
    ]  # repeatable bit for bit: a fixed Lanczos start


METHOD_CASES = {
    # name: (results for players 0..n-1 beyond the exact limit, method)
    "a_long_chain_is_banded": ([(k, k + 1, 1.0) for k in range(2499)], "banded"),
    "separate_pairs_are_small_pools": (
        [(2 * k, 2 * k + 1, 0.5) for k in range(1250)],
        "small pools",
    ),
}


@pytest.mark.parametrize(("results", "method"), METHOD_CASES.values(), ids=METHOD_CASES)
def test_the_method_follows_the_structure(results: list[Result], method: str) -> None:
    info = info_of(2500, results)
    assert bradley_terry.variance_method(info) == method
    fit = fit_ratings(results)
    exact = np.sqrt(bradley_terry.exact_variances(info))
    np.testing.assert_allclose([fit[p].stderr for p in range(2500)], exact, rtol=1e-7)


# ----------------------------------------------------------------------------- input


def test_the_first_bad_result_is_the_one_reported() -> None:
    with pytest.raises(RatingError, match="score"):
        fit_ratings([("a", "b", 1.0), ("a", "b", 2.0), ("c", "c", 1.0)])
    with pytest.raises(RatingError, match="itself"):
        fit_ratings([("a", "b", 1.0), ("c", "c", 1.0), ("a", "b", 2.0)])
    with pytest.raises(RatingError, match="itself"):
        fit_ratings([("c", "c", 2.0)])  # both wrong: the players are checked first


def test_results_from_a_generator_and_rows_of_the_wrong_size() -> None:
    rows = [("a", "b", 1.0), ("b", "c", 0.5)]
    assert fit_ratings(iter(rows)) == fit_ratings(rows)
    with pytest.raises(ValueError, match="unpack"):
        fit_ratings([("a", "b", 1.0), ("a", "b")])  # type: ignore[list-item]


def test_players_are_numbered_in_order_of_first_appearance() -> None:
    # Equal ratings keep that order in the result (the sort is stable).
    fit = fit_ratings([("x", "y", 0.5), ("z", "w", 0.5)], players=["v", "x"])
    assert list(fit) == ["x", "y", "z", "w", "v"]
