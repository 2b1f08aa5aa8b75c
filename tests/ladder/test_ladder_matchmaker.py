"""The matchmaker's policy (arena.ladder.matchmaker), as properties over many rounds.

Days are simulated round by round: each round's matches are added to the bots' counts for the
day (and, where the test says so, stay in flight for a few rounds), as the service does with
the stored matches. Every property is one sentence of the module's docstring.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.ladder import Entrant, LadderMatch, LadderPolicy, pace, plan_round


def test_importing_the_ladder_pulls_in_only_the_standard_library() -> None:
    code = textwrap.dedent(
        """
        import sys
        before = set(sys.modules)
        import arena.ladder
        new = {m.split(".")[0] for m in set(sys.modules) - before}
        print(sorted(new - set(sys.stdlib_module_names) - {"arena"}))
        print(sorted(m for m in set(sys.modules) - before if m.startswith("arena.")))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    foreign, arena = out.stdout.strip().splitlines()
    assert foreign == "[]"
    assert all(m.startswith("'arena.ladder") for m in arena.strip("[]").split(", ")), arena


@dataclass
class Day:
    """One UTC day of a ladder, round by round."""

    policy: LadderPolicy
    rounds: int
    ratings: dict[int, float]
    inactive: frozenset[int] = frozenset()
    rated: dict[int, int] = field(default_factory=dict)
    #: How many rounds a match stays in flight (0: it is over before the next round).
    flight_rounds: int = 0
    today: Counter[int] = field(default_factory=Counter)
    seat_a: Counter[int] = field(default_factory=Counter)
    #: (round it ends, bot) for each match in flight.
    flying: list[tuple[int, int]] = field(default_factory=list)
    played: list[list[LadderMatch]] = field(default_factory=list)

    def entrants(self, k: int) -> list[Entrant]:
        in_flight = Counter(bot for ends, bot in self.flying if ends > k)
        return [
            Entrant(
                bot,
                rating,
                rated_matches=self.rated.get(bot, 50),
                today=self.today[bot],
                seat_a_today=self.seat_a[bot],
                in_flight=in_flight[bot],
                active=bot not in self.inactive,
            )
            for bot, rating in self.ratings.items()
        ]

    def play_round(self, k: int, seed: int) -> tuple[list[Entrant], list[LadderMatch]]:
        entrants = self.entrants(k)
        matches = list(
            plan_round(entrants, self.policy, day_elapsed=(k + 1) / self.rounds, seed=seed)
        )
        for m in matches:
            self.today.update((m.seat_a, m.seat_b))
            self.seat_a[m.seat_a] += 1
            ends = k + 1 + self.flight_rounds
            self.flying += [(ends, m.seat_a), (ends, m.seat_b)]
        self.played.append(matches)
        return entrants, matches

    @property
    def active(self) -> list[int]:
        return [bot for bot in self.ratings if bot not in self.inactive]


policies = st.builds(
    LadderPolicy,
    matches_per_day=st.integers(2, 40),
    max_concurrent_per_bot=st.integers(2, 6),
    rating_window=st.sampled_from([50.0, 200.0, 800.0]),
    exploration=st.sampled_from([0.0, 0.2, 1.0]),
    duplicate_pairs=st.booleans(),
    provisional_matches=st.sampled_from([0, 10, 100]),
)


@st.composite
def days(draw: st.DrawFn, *, flight: bool) -> Day:
    policy = draw(policies)
    bots = draw(st.integers(0, 30))
    ratings = {b: draw(st.floats(800, 2400)) for b in range(1, bots + 1)}
    inactive = frozenset(draw(st.sets(st.sampled_from(sorted(ratings)))) if ratings else set())
    rounds = draw(st.integers(1, 3 * policy.matches_per_day))
    rated = {b: draw(st.integers(0, 30)) for b in ratings}
    return Day(
        policy,
        rounds,
        ratings,
        inactive,
        rated,
        flight_rounds=draw(st.integers(0, 3)) if flight else 0,
    )


def _legs_of(matches: list[LadderMatch]) -> dict[str, list[LadderMatch]]:
    pairs: dict[str, list[LadderMatch]] = defaultdict(list)
    for m in matches:
        pairs[m.key.rsplit(":", 1)[0]].append(m)
    return pairs


@given(days(flight=True), st.integers(0, 2**32))
def test_no_bot_plays_itself_or_two_pairs_in_a_round(day: Day, seed: int) -> None:
    rng = random.Random(seed)
    for k in range(day.rounds):
        _, matches = day.play_round(k, rng.getrandbits(32))
        assert all(m.seat_a != m.seat_b for m in matches)
        assert len({m.key for m in matches}) == len(matches)
        pairs = _legs_of(matches)
        bots = [bot for legs in pairs.values() for bot in (legs[0].seat_a, legs[0].seat_b)]
        assert len(bots) == len(set(bots)), "a bot in two pairs of one round"


@given(days(flight=True), st.integers(0, 2**32))
def test_only_active_bots_with_room_for_the_pair_are_scheduled(day: Day, seed: int) -> None:
    rng = random.Random(seed)
    policy = day.policy
    for k in range(day.rounds):
        entrants, matches = day.play_round(k, rng.getrandbits(32))
        before = {e.bot_id: e for e in entrants}
        target = pace(policy, (k + 1) / day.rounds)
        new = Counter(b for m in matches for b in (m.seat_a, m.seat_b))
        for bot, count in new.items():
            e = before[bot]
            assert e.active, f"bot {bot} is suspended or inactive"
            assert count == policy.legs
            assert e.today < target, "ahead of its pace for the day"
            assert e.today + count <= policy.matches_per_day, "over the day's budget"
            assert e.in_flight + count <= policy.max_concurrent_per_bot, "over the cap"
    assert all(day.today[bot] == 0 for bot in day.inactive)
    assert all(n <= policy.matches_per_day for n in day.today.values())


@given(days(flight=False), st.integers(0, 2**32))
def test_over_a_day_the_counts_of_active_bots_stay_within_two(day: Day, seed: int) -> None:
    rng = random.Random(seed)
    for k in range(day.rounds):
        day.play_round(k, rng.getrandbits(32))
        counts = [day.today[bot] for bot in day.active]
        if counts:
            assert max(counts) - min(counts) <= 2, (k, sorted(counts))


@given(days(flight=False), st.integers(0, 2**32))
def test_the_budget_is_spread_over_the_day(day: Day, seed: int) -> None:
    rng = random.Random(seed)
    for k in range(day.rounds):
        day.play_round(k, rng.getrandbits(32))
        allowed = pace(day.policy, (k + 1) / day.rounds) + day.policy.legs - 1
        assert all(n <= allowed for n in day.today.values()), (k, allowed, day.today)


@given(days(flight=True), st.integers(0, 2**32))
def test_pairs_are_duplicates_on_one_seed_with_seats_swapped(day: Day, seed: int) -> None:
    rng = random.Random(seed)
    for k in range(day.rounds):
        _, matches = day.play_round(k, rng.getrandbits(32))
        for pair, legs in _legs_of(matches).items():
            first = legs[0]
            assert pair == f"{first.seat_a}-{first.seat_b}"
            assert [m.leg for m in legs] == list(range(1, day.policy.legs + 1))
            if day.policy.duplicate_pairs:
                second = legs[1]
                assert second.seed == first.seed
                assert (second.seat_a, second.seat_b) == (first.seat_b, first.seat_a)


@given(days(flight=False), st.integers(0, 2**32))
def test_single_matches_give_seat_a_to_the_bot_that_sat_in_it_less(day: Day, seed: int) -> None:
    day.policy = replace(day.policy, duplicate_pairs=False)
    rng = random.Random(seed)
    for k in range(day.rounds):
        entrants, matches = day.play_round(k, rng.getrandbits(32))
        lead = {e.bot_id: 2 * e.seat_a_today - e.today for e in entrants}
        for m in matches:
            assert lead[m.seat_a] <= lead[m.seat_b]


def test_the_same_seed_plans_the_same_round_and_another_seed_another() -> None:
    rng = random.Random(5)
    bots = [Entrant(b, rng.uniform(1000, 2000), rated_matches=30) for b in range(1, 41)]
    policy = LadderPolicy()
    first = plan_round(bots, policy, day_elapsed=0.5, seed=9)
    assert plan_round(list(bots), policy, day_elapsed=0.5, seed=9) == first
    assert plan_round(bots, policy, day_elapsed=0.5, seed=10) != first


def _opponents(
    bot: Entrant, field_: list[Entrant], policy: LadderPolicy, rounds: int
) -> list[float]:
    """The rating of ``bot``'s opponent in each of ``rounds`` rounds. ``bot`` has no match
    today and the field two each, so it is the first to pick (fewest first)."""
    rating = {e.bot_id: e.rating for e in field_}
    met = []
    for seed in range(rounds):
        for m in plan_round([bot, *field_], policy, day_elapsed=1.0, seed=seed):
            if bot.bot_id in (m.seat_a, m.seat_b) and m.leg == 1:
                met.append(rating[m.seat_b if m.seat_a == bot.bot_id else m.seat_a])
    return met


#: A ladder of 200 established bots from 1000 to 2990, 10 points apart, two matches in today.
FIELD = [Entrant(b, 1000.0 + 10 * b, rated_matches=50, today=2) for b in range(200)]


def test_an_established_bot_meets_opponents_within_the_window_without_exploration() -> None:
    policy = LadderPolicy(exploration=0.0, rating_window=200.0)
    met = _opponents(Entrant(999, 2000.0, rated_matches=50), FIELD, policy, 200)
    assert len(met) == 200
    assert all(abs(r - 2000.0) <= 200.0 for r in met)
    assert len(set(met)) > 20  # drawn at random within it, not always the nearest


def test_with_nobody_in_the_window_the_nearest_is_met() -> None:
    policy = LadderPolicy(exploration=0.0, rating_window=50.0)
    met = _opponents(Entrant(999, 3300.0, rated_matches=50), FIELD, policy, 20)
    assert set(met) == {2990.0}


def test_exploration_makes_a_share_of_picks_outside_the_window() -> None:
    policy = LadderPolicy(exploration=0.5, rating_window=100.0)
    met = _opponents(Entrant(999, 2000.0, rated_matches=50), FIELD, policy, 400)
    outside = sum(abs(r - 2000.0) > 100.0 for r in met) / len(met)
    # Half the picks are drawn from all 200 (90% of them outside the window): about 0.45.
    assert 0.3 < outside < 0.6


def test_a_provisional_bot_meets_the_whole_range_of_the_ladder() -> None:
    policy = LadderPolicy(exploration=0.0, rating_window=200.0, provisional_matches=10)
    met = _opponents(Entrant(999, 2000.0, rated_matches=3), FIELD, policy, 200)
    assert min(met) < 1300.0 and max(met) > 2700.0
    assert sum(abs(r - 2000.0) > 200.0 for r in met) > 100


def test_a_provisional_bot_prefers_established_opponents() -> None:
    # One established bot (id 500, at 1500 like everyone) among 50 newcomers: drawn uniformly
    # it would be met 2% of the time; a provisional bot draws again (up to 8 times) while it
    # draws a newcomer, so it meets it about 15% of the time.
    field_ = [Entrant(b, 1500.0 + b / 100, rated_matches=0, today=2) for b in range(1, 51)]
    field_.append(Entrant(500, 1500.0, rated_matches=50, today=2))
    met = _opponents(Entrant(999, 1500.0, rated_matches=0), field_, LadderPolicy(), 400)
    assert len(met) == 400
    assert met.count(1500.0) > 30


def test_equality_comes_before_rating_two_far_apart_bots_still_play() -> None:
    bots = [Entrant(1, 1000.0, rated_matches=50), Entrant(2, 2500.0, rated_matches=50)]
    matches = plan_round(bots, LadderPolicy(exploration=0.0), day_elapsed=0.1, seed=1)
    assert {(m.seat_a, m.seat_b) for m in matches} == {(1, 2), (2, 1)}


def test_the_pace_allows_the_first_pair_of_the_day_at_once_and_the_budget_by_its_end() -> None:
    policy = LadderPolicy(matches_per_day=100)
    assert pace(policy, 1 / 288) == 1
    assert pace(policy, 0.5) == 50
    assert pace(policy, 1.0) == 100
    with pytest.raises(ValueError, match="day_elapsed"):
        pace(policy, 0.0)


def test_a_bot_entered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="bot 3 is entered twice"):
        plan_round([Entrant(3, 1500.0), Entrant(3, 1600.0)], LadderPolicy(), day_elapsed=1, seed=0)


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ({"max_concurrent_per_bot": 1}, "at least 2 with duplicate pairs"),
        ({"matches_per_day": 0}, "matches_per_day"),
        ({"exploration": 1.5}, "exploration"),
        ({"rating_window": 0.0}, "rating_window"),
        ({"provisional_matches": -1}, "provisional_matches"),
    ],
    ids=["cap-below-a-pair", "no-budget", "exploration", "window", "provisional"],
)
def test_a_policy_that_cannot_work_is_refused(numbers: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LadderPolicy(**numbers)  # type: ignore[arg-type]


def test_single_matches_fit_a_cap_of_one() -> None:
    policy = LadderPolicy(max_concurrent_per_bot=1, duplicate_pairs=False)
    bots = [Entrant(1, 1500.0), Entrant(2, 1500.0, in_flight=1), Entrant(3, 1550.0)]
    matches = plan_round(bots, policy, day_elapsed=1.0, seed=2)
    assert len(matches) == 1 and {matches[0].seat_a, matches[0].seat_b} == {1, 3}
