"""Live Elo and the whole-history Bradley-Terry fit (arena/measures/ratings.py), on real statistics.

Synthetic players of known strength play games drawn from a seeded numpy generator; the fit
must recover their order, land within a few standard errors of the truth, and its 95% intervals
must cover the truth at about the stated rate.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import ArrayLike, NDArray

from arena.measures.ratings import (
    INITIAL_RATING,
    FittedRating,
    RatingError,
    elo_delta,
    elo_update,
    expected_score,
    fit_ratings,
)

Result = tuple[int, int, float]

# ----------------------------------------------------------------------------- helpers


def simulate(
    rng: np.random.Generator, truth: NDArray[np.float64], games: int, *, draw_share: float = 0.0
) -> list[Result]:
    """Random pairings among ``truth``'s players, outcomes drawn from the Elo curve.

    With ``draw_share`` > 0 part of the decisive mass becomes draws, keeping each game's expected
    score on the Elo curve (a draw counts half).
    """
    n = truth.size
    a = rng.integers(0, n, games)
    b = (a + rng.integers(1, n, games)) % n
    p = 1.0 / (1.0 + 10.0 ** ((truth[b] - truth[a]) / 400.0))
    draw = 2.0 * draw_share * np.minimum(p, 1.0 - p)
    u = rng.random(games)
    score = np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))
    return [(int(x), int(y), float(s)) for x, y, s in zip(a, b, score, strict=True)]


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    rank_x = np.argsort(np.argsort(np.asarray(x)))
    rank_y = np.argsort(np.argsort(np.asarray(y)))
    return float(np.corrcoef(rank_x, rank_y)[0, 1])


def centred(truth: ArrayLike) -> NDArray[np.float64]:
    """The true ratings on the fit's anchor: mean 1500."""
    values = np.asarray(truth, dtype=np.float64)
    shifted: NDArray[np.float64] = values - values.mean() + INITIAL_RATING
    return shifted


def coverage(
    seed: int, *, repeats: int, games: int, draw_share: float = 0.0
) -> tuple[float, list[float]]:
    """Pooled share of 95% intervals covering the truth, and every z-score seen."""
    rng = np.random.default_rng(seed)
    truth = centred(np.arange(8) * 100.0)
    covered, zs = 0, []
    for _ in range(repeats):
        fit = fit_ratings(simulate(rng, truth, games, draw_share=draw_share))
        for player, true_rating in enumerate(truth):
            f = fit[player]
            covered += f.ci_low <= true_rating <= f.ci_high
            zs.append((f.rating - true_rating) / f.stderr)
    return covered / (repeats * truth.size), zs


# ----------------------------------------------------------------------------- live Elo

ELO_CASES = {
    # name: (rating_a, rating_b, score_a, k, expected delta for a)
    "equal_win_gains_half_k": (1500.0, 1500.0, 1.0, 24.0, 12.0),
    "equal_draw_moves_nothing": (1500.0, 1500.0, 0.5, 24.0, 0.0),
    "equal_loss_loses_half_k": (1500.0, 1500.0, 0.0, 24.0, -12.0),
    "favourite_win_gains_little": (1900.0, 1500.0, 1.0, 24.0, 24.0 / 11.0),
    "favourite_draw_loses_points": (1900.0, 1500.0, 0.5, 24.0, 24.0 * (0.5 - 10.0 / 11.0)),
    "underdog_win_gains_a_lot": (1500.0, 1900.0, 1.0, 24.0, 24.0 * 10.0 / 11.0),
    "underdog_draw_gains_points": (1500.0, 1900.0, 0.5, 24.0, 24.0 * (0.5 - 1.0 / 11.0)),
    "k_32_equal_win": (1500.0, 1500.0, 1.0, 32.0, 16.0),
}


@pytest.mark.parametrize(("a", "b", "score", "k", "delta"), ELO_CASES.values(), ids=ELO_CASES)
def test_elo_delta_cases(a: float, b: float, score: float, k: float, delta: float) -> None:
    assert elo_delta(a, b, score, k=k) == pytest.approx(delta, abs=2.0**-16)
    new_a, new_b = elo_update(a, b, score, k=k)
    assert new_a - a == pytest.approx(delta, abs=2.0**-16)
    assert new_a - a == b - new_b


def test_expected_score_is_the_elo_curve() -> None:
    assert expected_score(1500.0, 1500.0) == 0.5
    assert expected_score(1900.0, 1500.0) == pytest.approx(10.0 / 11.0)
    assert expected_score(1500.0, 1900.0) == pytest.approx(1.0 / 11.0)
    assert expected_score(2300.0, 1500.0) == pytest.approx(100.0 / 101.0)


@settings(derandomize=True, max_examples=200)
@given(
    st.floats(min_value=0.0, max_value=4000.0),
    st.floats(min_value=0.0, max_value=4000.0),
)
def test_expected_scores_of_both_sides_sum_to_one(a: float, b: float) -> None:
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1.0, abs=1e-12)
    if a >= b:
        assert expected_score(a, b) >= 0.5 >= expected_score(b, a)


@settings(derandomize=True, max_examples=100)
@given(
    st.floats(min_value=500.0, max_value=2500.0),
    st.floats(min_value=500.0, max_value=2500.0),
    st.sampled_from([0.0, 0.5, 1.0]),
    st.floats(min_value=1.0, max_value=64.0),
)
def test_elo_delta_scales_with_k(a: float, b: float, score: float, k: float) -> None:
    base = elo_delta(a, b, score, k=k)
    assert elo_delta(a, b, score, k=3 * k) == pytest.approx(3 * base, abs=2 * 2.0**-16)
    assert abs(base) <= k


def test_draw_between_equals_and_wins_mirror_losses() -> None:
    assert elo_delta(1700.0, 1700.0, 0.5) == 0.0
    for a, b in [(1500.0, 1620.0), (1800.0, 1400.0)]:
        assert elo_delta(a, b, 1.0) == -elo_delta(b, a, 0.0)
        assert elo_delta(a, b, 0.5) == -elo_delta(b, a, 0.5)


matches = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.sampled_from([0.0, 0.5, 1.0])).filter(
        lambda m: m[0] != m[1]
    ),
    max_size=60,
)


@settings(derandomize=True, max_examples=150)
@given(
    matches,
    st.dictionaries(st.integers(0, 5), st.integers(800, 2400).map(float), max_size=6),
    st.floats(min_value=0.5, max_value=64.0),
)
def test_a_run_of_elo_updates_is_exactly_zero_sum(
    games: list[Result], start: dict[int, float], k: float
) -> None:
    ratings = dict(start)
    players = set(start) | {p for a, b, _ in games for p in (a, b)}
    before_total = sum(start.get(p, INITIAL_RATING) for p in players)
    for a, b, score in games:
        before = ratings.get(a, INITIAL_RATING), ratings.get(b, INITIAL_RATING)
        ratings[a], ratings[b] = elo_update(*before, score, k=k)
        assert (ratings[a] - before[0]) + (ratings[b] - before[1]) == 0.0
    assert sum(ratings.get(p, INITIAL_RATING) for p in players) == before_total  # bit for bit


ELO_ERRORS = {
    "score_above_one": {"score": 2.0, "k": 24.0},
    "score_negative": {"score": -1.0, "k": 24.0},
    "score_between_values": {"score": 0.7, "k": 24.0},
    "score_nan": {"score": math.nan, "k": 24.0},
    "k_zero": {"score": 1.0, "k": 0.0},
    "k_negative": {"score": 1.0, "k": -8.0},
    "k_infinite": {"score": 1.0, "k": math.inf},
}


@pytest.mark.parametrize("case", ELO_ERRORS.values(), ids=ELO_ERRORS)
def test_elo_rejects_bad_input_loudly(case: dict[str, float]) -> None:
    with pytest.raises(RatingError):
        elo_update(1500.0, 1500.0, case["score"], k=case["k"])


# ----------------------------------------------------------------------------- the fit


def test_fit_recovers_eight_players_spaced_100_apart() -> None:
    rng = np.random.default_rng(20240601)
    truth = centred(np.arange(8) * 100.0)
    fit = fit_ratings(simulate(rng, truth, 4000))
    estimates = [fit[p].rating for p in range(8)]
    assert spearman(estimates, truth) == 1.0
    for player, true_rating in enumerate(truth):
        f = fit[player]
        assert abs(f.rating - true_rating) < 3.5 * f.stderr
        assert 5.0 < f.stderr < 30.0  # about 1000 games each
    assert list(fit) == list(range(7, -1, -1))  # best first


def test_fit_of_two_players_matches_the_closed_form() -> None:
    # 30 wins in 40 games: MLE difference 400 log10(3); var(diff) = s^2 / (n p (1 - p)), and
    # under the sum-to-zero anchor each player carries half the difference.
    fit = fit_ratings([("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 10, prior_draws=1e-9)
    s = 400.0 / math.log(10.0)
    assert fit["a"].rating - fit["b"].rating == pytest.approx(400.0 * math.log10(3.0))
    assert fit["a"].stderr == pytest.approx(math.sqrt(s**2 / (40 * 0.75 * 0.25)) / 2)
    assert fit["a"].ci_high - fit["a"].rating == pytest.approx(1.959964 * fit["a"].stderr)


def test_fit_solves_the_penalised_score_equations() -> None:
    # At the constrained optimum every player's residual (actual minus expected score, the
    # virtual draw included) is the same Lagrange multiplier, and they sum to ~0.
    rng = np.random.default_rng(5)
    truth = np.array([0.0, 150.0, 200.0, 420.0, -90.0])
    results = simulate(rng, truth, 300, draw_share=0.3)
    fit = fit_ratings(results)
    residual = dict.fromkeys(range(5), 0.0)
    for a, b, score in results:
        e = expected_score(fit[a].rating, fit[b].rating)
        residual[a] += score - e
        residual[b] -= score - e
    for p in residual:
        residual[p] += 0.5 - expected_score(fit[p].rating, INITIAL_RATING)
    values = list(residual.values())
    assert max(values) - min(values) == pytest.approx(0.0, abs=1e-7)


def test_95_percent_intervals_cover_the_truth_at_about_95_percent() -> None:
    rate, zs = coverage(11, repeats=200, games=800)
    assert 0.90 <= rate <= 0.98
    assert np.std(zs) == pytest.approx(1.0, abs=0.1)  # standard errors are calibrated


def test_intervals_with_many_draws_are_conservative() -> None:
    rate, _ = coverage(12, repeats=100, games=800, draw_share=0.5)
    assert rate >= 0.90


@settings(derandomize=True, max_examples=100, deadline=None)
@given(matches, st.lists(st.integers(6, 8), max_size=2))
def test_fit_is_anchored_at_1500_and_always_finite(games: list[Result], extra: list[int]) -> None:
    fit = fit_ratings(games, players=extra)
    if not fit:
        return
    assert np.mean([f.rating for f in fit.values()]) == pytest.approx(INITIAL_RATING, abs=1e-6)
    for f in fit.values():
        assert all(map(math.isfinite, (f.rating, f.ci_low, f.ci_high, f.stderr)))
        if len(fit) > 1:
            assert f.ci_low < f.rating < f.ci_high


def test_unbeaten_player_gets_a_finite_rating_and_a_wide_interval() -> None:
    unbeaten = fit_ratings([("a", "b", 1.0)] * 20)
    even = fit_ratings([("a", "b", 1.0)] * 10 + [("a", "b", 0.0)] * 10)
    a = unbeaten["a"]
    assert math.isfinite(a.rating) and a.rating > 1700.0
    assert unbeaten["b"].rating == pytest.approx(3000.0 - a.rating)
    assert a.ci_high - a.ci_low > 2 * (even["a"].ci_high - even["a"].ci_low)


def test_disconnected_pools_get_finite_ratings_and_wide_intervals() -> None:
    pool_1 = [("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 10
    pool_2 = [("c", "d", 1.0)] * 10 + [("c", "d", 0.0)] * 30
    bridge = [("a", "c", 1.0)] * 20 + [("a", "c", 0.0)] * 20
    apart = fit_ratings(pool_1 + pool_2)
    joined = fit_ratings(pool_1 + pool_2 + bridge)
    assert np.mean([f.rating for f in apart.values()]) == pytest.approx(1500.0)
    # Within each pool the difference is still the data's; between pools only the prior speaks.
    assert apart["a"].rating - apart["b"].rating == pytest.approx(190.0, abs=15.0)
    assert apart["d"].rating - apart["c"].rating == pytest.approx(190.0, abs=15.0)
    for p in "abcd":
        assert math.isfinite(apart[p].rating)
        assert apart[p].stderr > 2 * joined[p].stderr
        assert apart[p].stderr > 100.0


def test_players_without_results_sit_at_the_prior_with_wide_intervals() -> None:
    fit = fit_ratings([("a", "b", 1.0)] * 10 + [("a", "b", 0.5)] * 10, players=["new"])
    new = fit["new"]
    assert new.matches == 0 and new.is_provisional
    assert new.rating == pytest.approx(1500.0, abs=25.0)
    assert new.stderr > 250.0


PROVISIONAL_CASES = {
    # name: (games played by "x", min_matches, provisional?)
    "nine_of_ten": (9, 10, True),
    "ten_of_ten": (10, 10, False),
    "none_required": (0, 0, False),
    "one_of_three": (1, 3, True),
}


@pytest.mark.parametrize(
    ("games", "min_matches", "provisional"), PROVISIONAL_CASES.values(), ids=PROVISIONAL_CASES
)
def test_provisional_flag(games: int, min_matches: int, provisional: bool) -> None:
    results = [("x", "y", 1.0)] * games + [("y", "z", 0.5)] * 12
    fit = fit_ratings(results, players=["x"], min_matches=min_matches)
    assert fit["x"].matches == games
    assert fit["x"].is_provisional is provisional
    assert fit["y"].matches == games + 12


def test_weight_two_counts_like_the_result_twice_and_weight_zero_like_none() -> None:
    base = [("a", "b", 1.0), ("b", "c", 0.5), ("c", "a", 0.0), ("a", "c", 1.0)]
    weighted = fit_ratings([*base, ("b", "c", 1.0)], weights=[1, 2, 1, 1, 0])
    repeated = fit_ratings([*base, ("b", "c", 0.5)])
    for p in "abc":
        assert weighted[p].rating == pytest.approx(repeated[p].rating, abs=1e-9)
        assert weighted[p].stderr == pytest.approx(repeated[p].stderr, abs=1e-9)
    assert weighted["b"].matches == 2  # the zero-weight result is not a rated match


def test_fit_does_not_depend_on_the_order_of_results() -> None:
    rng = np.random.default_rng(3)
    results = simulate(rng, np.array([0.0, 50.0, 300.0, -200.0]), 200, draw_share=0.2)
    shuffled = [results[i] for i in rng.permutation(len(results))]
    first, second = fit_ratings(results), fit_ratings(shuffled)
    for p in first:
        assert first[p].rating == pytest.approx(second[p].rating, abs=1e-9)


def test_interval_level_sets_the_normal_quantile() -> None:
    fit = fit_ratings([("a", "b", 1.0)] * 12 + [("a", "b", 0.0)] * 8, level=0.5)
    a = fit["a"]
    assert (a.ci_high - a.rating) / a.stderr == pytest.approx(0.6744898)
    assert a.rating - a.ci_low == pytest.approx(a.ci_high - a.rating)


def test_fit_of_nothing_and_of_one_player() -> None:
    assert fit_ratings([]) == {}
    alone = fit_ratings([], players=["solo"])["solo"]
    assert alone == FittedRating("solo", 1500.0, 1500.0, 1500.0, 0.0, 0, True)


def test_fit_handles_hundreds_of_players_and_tens_of_thousands_of_results() -> None:
    rng = np.random.default_rng(99)
    truth = centred(np.sort(rng.normal(0.0, 200.0, 300)))
    fit = fit_ratings(simulate(rng, truth, 30_000))
    estimates = [fit[p].rating for p in range(300)]
    assert np.mean(estimates) == pytest.approx(1500.0)
    assert spearman(estimates, truth) > 0.95
    z = [(fit[p].rating - truth[p]) / fit[p].stderr for p in range(300)]
    assert max(map(abs, z)) < 4.5


FIT_ERRORS = {
    "bad_score": ({"results": [("a", "b", 0.25)]}, "score"),
    "self_play": ({"results": [("a", "a", 1.0)]}, "itself"),
    "negative_weight": ({"results": [("a", "b", 1.0)], "weights": [-1.0]}, "weights"),
    "nan_weight": ({"results": [("a", "b", 1.0)], "weights": [math.nan]}, "weights"),
    "too_few_weights": ({"results": [("a", "b", 1.0)] * 2, "weights": [1.0]}, "1 weights"),
    "negative_min_matches": ({"results": [], "min_matches": -1}, "min_matches"),
    "level_of_one": ({"results": [], "level": 1.0}, "level"),
    "no_prior": ({"results": [], "prior_draws": 0.0}, "prior_draws"),
}


@pytest.mark.parametrize(("kwargs", "message"), FIT_ERRORS.values(), ids=FIT_ERRORS)
def test_fit_rejects_bad_input_loudly(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(RatingError, match=message):
        fit_ratings(**kwargs)  # type: ignore[arg-type]


def test_ratings_module_stays_pure() -> None:
    code = (
        "import sys, arena.measures.ratings; "
        "bad = {'flask', 'sqlalchemy', 'celery', 'redis', 'requests', 'httpx', 'scipy', "
        "'arena.db', 'arena.api', 'arena.web'}; "
        "print(sorted(bad & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
