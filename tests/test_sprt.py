"""The SPRT's numbers (arena.measures.sprt): the pentanomial GSPRT against reference values,
its properties, and its error rates over seeded synthetic tests of known strength.

The reference LLRs were computed with fishtest's ``LLRcalc.LLR_logistic`` (server/fishtest/
stats, which uses scipy); the estimates with its ``stat_util.get_elo``.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.measures.sprt import (
    Pentanomial,
    SprtParams,
    Verdict,
    elo_estimate,
    elo_to_score,
    llr,
    llr_path,
    pair_bucket,
    score_to_elo,
    sprt_state,
)

LLR_CASES = [
    ("ten_even_pairs_lean_to_h0", (0, 0, 10, 0, 0), 0.0, 50.0, -1.5349158985894165),
    ("a_clear_winner", (0, 0, 5, 20, 15), 0.0, 50.0, 5.343505436386566),
    ("symmetric_results", (3, 12, 30, 12, 3), 0.0, 20.0, -0.4914451914498372),
    ("a_small_edge", (1, 8, 30, 15, 6), 0.0, 20.0, 1.9352357090613288),
    ("bounds_around_zero", (10, 20, 40, 20, 10), -10.0, 10.0, 0.0),
    ("an_empty_bucket", (0, 1, 2, 3, 4), 0.0, 100.0, 2.4537759899698224),
]


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "expected"),
    [case[1:] for case in LLR_CASES],
    ids=[case[0] for case in LLR_CASES],
)
def test_llr_matches_fishtest_logistic_gsprt(
    counts: tuple[int, ...], elo0: float, elo1: float, expected: float
) -> None:
    assert llr(Pentanomial(counts), elo0, elo1) == pytest.approx(expected, abs=1e-9)


ESTIMATE_CASES = [
    ("even", (2, 10, 40, 10, 2), 0.0, 32.01, 0.5),
    ("stronger", (0, 3, 20, 30, 9), 132.095, 38.344, 1.0),
    ("one_lost_pair", (1, 0, 0, 0, 0), -1041.084, 395.592, 0.0),
]


@pytest.mark.parametrize(
    ("counts", "elo", "half_width", "los"),
    [case[1:] for case in ESTIMATE_CASES],
    ids=[case[0] for case in ESTIMATE_CASES],
)
def test_elo_estimate_matches_fishtest_get_elo(
    counts: tuple[int, ...], elo: float, half_width: float, los: float
) -> None:
    estimate = elo_estimate(Pentanomial(counts))
    assert estimate is not None
    assert estimate.elo == pytest.approx(elo, abs=1e-3)
    assert (estimate.ci_high - estimate.ci_low) / 2 == pytest.approx(half_width, abs=1e-3)
    assert estimate.los == pytest.approx(los, abs=1e-4)


def test_bounds_are_wald_bounds_of_alpha_and_beta() -> None:
    params = SprtParams(0.0, 10.0, alpha=0.05, beta=0.1)
    assert params.lower == pytest.approx(math.log(0.1 / 0.95))
    assert params.upper == pytest.approx(math.log(0.9 / 0.05))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"elo0": 5.0, "elo1": 5.0}, "elo1 must be greater than elo0"),
        ({"elo0": 0.0, "elo1": 5.0, "alpha": 0.0}, "alpha must be between 0 and 0.5"),
        ({"elo0": 0.0, "elo1": 5.0, "beta": 0.7}, "beta must be between 0 and 0.5"),
        ({"elo0": 0.0, "elo1": 5000.0}, "elo1 must be between -1000 and 1000"),
    ],
    ids=["equal_bounds", "alpha_zero", "beta_too_big", "elo_out_of_range"],
)
def test_invalid_parameters_are_refused(fields: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SprtParams(**fields)


def test_pair_bucket_counts_a_void_match_as_half() -> None:
    assert [pair_bucket(a, b) for a, b in [(0, 0), (0, 0.5), (1, 0), (0.5, 1), (1, 1)]] == [
        0,
        1,
        2,
        3,
        4,
    ]
    with pytest.raises(ValueError, match=r"a match score is 0, 0\.5 or 1"):
        pair_bucket(2.0, 0.0)


def test_no_pairs_means_no_evidence_and_no_estimate() -> None:
    empty = Pentanomial((0, 0, 0, 0, 0))
    assert llr(empty, 0.0, 10.0) == 0.0
    assert elo_estimate(empty) is None
    assert sprt_state(empty, SprtParams(0.0, 10.0), 10).verdict is None


def test_the_cap_ends_an_undecided_test_and_a_bound_beats_the_cap() -> None:
    params = SprtParams(0.0, 50.0)
    assert sprt_state(Pentanomial((0, 0, 3, 0, 0)), params, 3).verdict is Verdict.CAPPED
    assert sprt_state(Pentanomial((0, 0, 5, 20, 15)), params, 40).verdict is Verdict.H1


counts_strategy = st.tuples(*[st.integers(0, 300)] * 5).filter(lambda c: sum(c) > 0)


@given(counts_strategy, st.floats(-100, 100), st.floats(1, 100))
def test_swapping_the_bots_negates_the_llr_of_mirrored_bounds(
    counts: tuple[int, ...], elo0: float, width: float
) -> None:
    """Candidate and baseline swapped (buckets reversed), H0 and H1 swapped and negated."""
    forward = llr(Pentanomial(counts), elo0, elo0 + width)
    mirrored = llr(Pentanomial(counts[::-1]), -(elo0 + width), -elo0)
    assert mirrored == pytest.approx(-forward, abs=1e-6 * max(1.0, abs(forward)))


@given(counts_strategy, st.integers(0, 4))
def test_a_better_pair_never_lowers_the_llr_or_the_estimate(
    counts: tuple[int, ...], bucket: int
) -> None:
    """Moving one pair up a bucket is evidence for the candidate, never against it."""
    if bucket == 4 or counts[bucket] == 0:
        return
    better = list(counts)
    better[bucket] -= 1
    better[bucket + 1] += 1
    before, after = Pentanomial(counts), Pentanomial(tuple(better))
    assert llr(after, 0.0, 20.0) >= llr(before, 0.0, 20.0) - 1e-9
    low, high = elo_estimate(before), elo_estimate(after)
    assert low is not None and high is not None
    assert high.elo >= low.elo - 1e-9
    assert high.los >= low.los - 1e-12


@given(counts_strategy)
def test_the_estimate_lies_inside_its_interval(counts: tuple[int, ...]) -> None:
    estimate = elo_estimate(Pentanomial(counts))
    assert estimate is not None
    assert estimate.ci_low <= estimate.elo <= estimate.ci_high
    assert 0.0 <= estimate.los <= 1.0


@given(st.floats(-1000, 1000))
def test_score_and_elo_are_inverse(elo: float) -> None:
    assert score_to_elo(elo_to_score(elo)) == pytest.approx(elo, abs=1e-6)


def test_llr_path_ends_at_the_llr_of_all_pairs() -> None:
    buckets = [2, 3, 1, 4, 2, 2, 3]
    path = llr_path(buckets, 0.0, 30.0)
    assert len(path) == len(buckets)
    assert path[-1] == pytest.approx(llr(Pentanomial.from_buckets(buckets), 0.0, 30.0))


# --- Error rates over synthetic tests -----------------------------------------------------
#
# A synthetic pair: with probability SHARED the deals decide it (each seat wins its leg: pair
# score 1, the duplicate pair's luck cancelling); otherwise the two legs are independent matches
# the candidate wins with probability w, loses with l and leaves void with VOID (a half). w is
# solved so that the expected match score is exactly L(elo): the model has the Elo it claims.
SHARED = 0.3
VOID = 0.04
RUNS = 400
CAP = 20_000
ELO0, ELO1 = 0.0, 60.0
ALPHA = BETA = 0.05


def pentanomial_probabilities(elo: float) -> list[float]:
    """The five bucket probabilities of the model above, with mean pair score L(elo)."""
    # (1 - SHARED) * (w + VOID / 2) + SHARED / 2 = L(elo)
    win = (elo_to_score(elo) - SHARED / 2) / (1 - SHARED) - VOID / 2
    loss = 1 - win - VOID
    leg = [loss, VOID, win]  # a leg's score 0, 1/2, 1 as buckets 0, 1, 2
    pair = [0.0] * 5
    for i, p in enumerate(leg):
        for j, q in enumerate(leg):
            pair[i + j] += (1 - SHARED) * p * q
    pair[2] += SHARED
    return pair


def run_synthetic_test(rng: random.Random, probs: list[float], params: SprtParams) -> Verdict:
    """One sequential test on pairs drawn from ``probs``, stopped as the service stops it."""
    counts = [0] * 5
    while True:
        counts[rng.choices(range(5), probs)[0]] += 1
        state = sprt_state(Pentanomial(tuple(counts)), params, CAP)
        if state.verdict is not None:
            return state.verdict


def binomial_band(rate: float, runs: int) -> tuple[float, float]:
    """Rate +- 3.3 standard deviations of a binomial proportion (about 1 in 1,000 to fall
    outside by chance; the runs are seeded, so the outcome is fixed)."""
    spread = 3.3 * math.sqrt(rate * (1 - rate) / runs)
    return rate - spread, rate + spread


def test_the_model_has_the_elo_it_claims() -> None:
    for elo in (ELO0, ELO1):
        probs = pentanomial_probabilities(elo)
        assert sum(probs) == pytest.approx(1.0)
        assert min(probs) > 0
        mean = sum(p * b / 4 for b, p in enumerate(probs))
        assert score_to_elo(mean) == pytest.approx(elo)


@pytest.mark.parametrize(
    ("true_elo", "expected", "rate"),
    [(ELO0, Verdict.H0, 1 - ALPHA), (ELO1, Verdict.H1, 1 - BETA)],
    ids=["at_elo0_h0_is_accepted_1_minus_alpha", "at_elo1_h1_is_accepted_1_minus_beta"],
)
def test_accept_rates_over_seeded_synthetic_tests(
    true_elo: float, expected: Verdict, rate: float
) -> None:
    """Over RUNS seeded tests at the true Elo of one hypothesis, that hypothesis is accepted
    about 1 - alpha (or 1 - beta) of the time: within 3.3 binomial standard deviations of it
    (+-0.036 for 400 runs at 0.95). Every run ends at a bound, none at the cap."""
    params = SprtParams(ELO0, ELO1, ALPHA, BETA)
    probs = pentanomial_probabilities(true_elo)
    rng = random.Random(1300 + int(true_elo))
    verdicts = [run_synthetic_test(rng, probs, params) for _ in range(RUNS)]
    accepted = sum(v is expected for v in verdicts) / RUNS
    low, high = binomial_band(rate, RUNS)
    assert Verdict.CAPPED not in verdicts
    assert low <= accepted <= high, f"accepted {expected} in {accepted:.3f} of {RUNS} runs"
