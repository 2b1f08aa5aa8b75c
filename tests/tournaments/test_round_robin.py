"""Round robin: the circle schedule, byes, seats, standings and tie-breaks."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import check_plan, drive, people, win

from arena.tournaments import MatchResult, Plan, RoundRobin, Status
from arena.tournaments.round_robin import circle_schedule


def pairs_of(plan: Plan) -> list[tuple[str, str]]:
    return [(p.a, p.b) for p in plan.pairings if p.a is not None and p.b is not None]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 17), double=st.booleans())
def test_each_pair_meets_once_or_twice_with_seats_swapped(n: int, double: bool) -> None:
    fmt = RoundRobin(double=double)
    plan = fmt.plan(people(n))
    check_plan(fmt, plan)
    meetings = Counter(pairs_of(plan))
    for x in people(n):
        for y in people(n):
            if x < y:
                both = meetings[(x, y)] + meetings[(y, x)]
                assert both == (2 if double else 1)
                if double:
                    assert meetings[(x, y)] == meetings[(y, x)] == 1
    assert all(p.status in (Status.READY, Status.BYE) for p in plan.pairings)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 17), double=st.booleans())
def test_byes_rotate_fairly_and_seats_balance(n: int, double: bool) -> None:
    plan = RoundRobin(double=double).plan(people(n))
    cycles = 2 if double else 1
    rounds = {p.round for p in plan.pairings}
    assert len(rounds) == cycles * (n - 1 if n % 2 == 0 else n)
    byes = Counter(p.a for p in plan.pairings if p.status is Status.BYE)
    if n % 2:
        assert byes == dict.fromkeys(people(n), cycles)
        assert all(sum(p.round == r and p.b is None for p in plan.pairings) == 1 for r in rounds)
    else:
        assert not byes
    seat_a = Counter(a for a, _ in pairs_of(plan))
    seat_b = Counter(b for _, b in pairs_of(plan))
    for x in people(n):
        assert abs(seat_a[x] - seat_b[x]) <= (0 if double else 1)


def test_circle_schedule_first_round_is_top_half_against_bottom_half() -> None:
    assert circle_schedule(8)[0] == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert circle_schedule(5)[0] == [(0, 2), (1, 3), (4, None)]  # the last seed sits out


def test_keys_are_round_and_board_with_the_bye_last() -> None:
    plan = RoundRobin().plan(people(5))
    assert [p.key for p in plan.pairings if p.round == 1] == ["R1-1", "R1-2", "R1-bye"]
    assert plan.bracket[0].name == "rounds"
    assert [r.name for r in plan.bracket[0].rounds] == [f"Round {r}" for r in range(1, 6)]


def test_double_round_robin_second_cycle_mirrors_the_first() -> None:
    plan = RoundRobin(double=True).plan(people(4))
    first = [(p.round, p.a, p.b) for p in plan.pairings if p.round <= 3]
    second = [(p.round - 3, p.b, p.a) for p in plan.pairings if p.round > 3]
    assert first == second
    assert plan.format == "double_round_robin"


def play_all(plan: Plan, outcome: Mapping[frozenset[str], str | None]) -> dict[str, MatchResult]:
    """Results for every ready pairing: ``outcome[{x, y}]`` is the winner, None a draw."""
    results: dict[str, MatchResult] = {}
    for p in plan.pairings:
        for m in p.matches:
            w = outcome[frozenset(m.seats)]
            results[m.key] = (
                MatchResult(None, (2, 2), (300, 300)) if w is None else win(m, m.seats.index(w))
            )
    return results


def test_head_to_head_breaks_a_tie_on_score() -> None:
    s1, s2, s3, s4 = people(4)
    outcome = {
        frozenset((s1, s2)): s2,
        frozenset((s1, s3)): s1,
        frozenset((s1, s4)): s1,
        frozenset((s2, s3)): s3,
        frozenset((s2, s4)): s2,
        frozenset((s3, s4)): s4,
    }
    fmt = RoundRobin()
    plan = fmt.plan(people(4), play_all(fmt.plan(people(4)), outcome))
    assert plan.finished
    table = [(s.rank, s.participant, s.score) for s in plan.standings]
    assert table == [(1, s2, 2.0), (2, s1, 2.0), (3, s4, 1.0), (4, s3, 1.0)]
    by = {s.participant: s for s in plan.standings}
    assert by[s2].tiebreak("head_to_head") == 1.0
    assert by[s1].tiebreak("head_to_head") == 0.0
    # Sonneborn-Berger: s1 beat s3 and s4 (1 + 1); s2 beat s1 (2) and s4 (1).
    assert by[s1].tiebreak("sonneborn_berger") == 2.0
    assert by[s2].tiebreak("sonneborn_berger") == 3.0
    assert plan.champion == s2


def test_draws_score_half_a_point_and_a_perfect_tie_shares_the_rank() -> None:
    fmt = RoundRobin()
    everyone_draws = {frozenset((x, y)): None for x in people(3) for y in people(3) if x != y}
    plan = fmt.plan(people(3), play_all(fmt.plan(people(3)), everyone_draws))
    assert plan.finished
    assert [(s.rank, s.score, s.draws, s.byes) for s in plan.standings] == [(1, 1.0, 2, 1)] * 3
    assert [s.participant for s in plan.standings] == people(3)  # level: listed by seed
    assert plan.champion is None


@pytest.mark.parametrize("n", [2, 3, 6, 9])
def test_random_round_robins_finish_with_every_pairing_settled(n: int) -> None:
    fmt = RoundRobin(double=n == 3)
    out = drive(fmt, people(n), random.Random(n))
    final = out.final
    assert final.finished
    wins = sum(s.wins for s in final.standings)
    losses = sum(s.losses for s in final.standings)
    assert wins <= losses  # a double forfeit is a loss for both
    assert sum(s.played for s in final.standings) == 2 * len(
        [p for p in final.pairings if p.status is not Status.BYE]
    )
