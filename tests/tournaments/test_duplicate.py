"""Duplicate pairings: two matches on the same deals with seats swapped, and how they combine."""

from __future__ import annotations

import random

import pytest
from tournament_support import drive, people

from arena.tournaments import (
    DecidedBy,
    MatchResult,
    RoundRobin,
    Status,
    Swiss,
    combine,
    make_format,
    match_keys,
    match_seed,
)

A, B = "ann", "bob"

# (name, first match (ann in seat a), second match (bob in seat a), better, winner, how)
CASES = [
    ("more games over both", MatchResult(A, (3, 1), (400, 200)), MatchResult(B, (3, 2), (410, 390)),
     None, A, DecidedBy.GAMES),
    ("games level, more points", MatchResult(A, (3, 2), (300, 280)),
     MatchResult(B, (3, 2), (350, 290)), None, B, DecidedBy.POINTS),
    ("level on everything is a draw", MatchResult(A, (3, 2), (300, 200)),
     MatchResult(B, (3, 2), (300, 200)), None, None, DecidedBy.DRAW),
    ("level in a knockout: better seed", MatchResult(A, (3, 2), (300, 200)),
     MatchResult(B, (3, 2), (300, 200)), B, B, DecidedBy.SEED),
    ("a forfeit loses even when ahead on games", MatchResult(A, (3, 0), (500, 0)),
     MatchResult(B, (0, 0), (0, 0), frozenset({A})), None, B, DecidedBy.FORFEIT),
    ("both forfeit: both lose", MatchResult(B, (0, 0), forfeited=frozenset({A})),
     MatchResult(A, (0, 0), forfeited=frozenset({B})), None, None, DecidedBy.FORFEIT),
]  # fmt: skip


@pytest.mark.parametrize(
    ("first", "second", "better", "winner", "how"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_combination_rule(
    first: MatchResult,
    second: MatchResult,
    better: str | None,
    winner: str | None,
    how: DecidedBy,
) -> None:
    outcome = combine(A, B, first, second, better=better)
    assert (outcome.winner, outcome.decided_by) == (winner, how)


def test_totals_are_summed_from_each_sides_point_of_view() -> None:
    outcome = combine(A, B, MatchResult(A, (3, 1), (400, 200)), MatchResult(B, (3, 2), (410, 390)))
    assert outcome.games == (3 + 2, 1 + 3)
    assert outcome.points == (400 + 390, 200 + 410)


def test_a_single_match_winner_stands_and_a_single_forfeit_loses() -> None:
    assert combine(A, B, MatchResult(B, (1, 3))).winner == B
    forfeit = combine(A, B, MatchResult(B, (2, 0), forfeited=frozenset({A})))
    assert (forfeit.winner, forfeit.decided_by) == (B, DecidedBy.FORFEIT)


def test_keys_and_shared_seed() -> None:
    assert match_keys("R1-1", False) == ("R1-1",)
    assert match_keys("GF1", True) == ("GF1.1", "GF1.2")
    assert match_seed(1, "R1-1") != match_seed(2, "R1-1")


@pytest.mark.parametrize(
    "name",
    ["round_robin", "double_round_robin", "single_elimination", "double_elimination", "gauntlet"],
)
def test_duplicate_doubles_the_matches_with_seats_swapped(name: str) -> None:
    single = make_format(name)
    double = make_format(name, duplicate=True)
    n = 6
    plain = single.plan(people(n))
    dup = double.plan(people(n))
    assert len(dup.to_play()) == 2 * len(plain.to_play())
    for p in dup.ready():
        first, second = p.matches
        assert second.seats == first.seats[::-1] and first.seed == second.seed
        assert (first.key, second.key) == (f"{p.key}.1", f"{p.key}.2")
    final = drive(double, people(n), random.Random(4)).final  # checks every plan on the way
    done = [p for p in final.pairings if p.status is Status.DONE]
    assert all(len(p.matches) == 2 for p in done)


def test_a_half_played_pairing_stays_ready_with_one_match_left() -> None:
    fmt = RoundRobin(duplicate=True)
    plan = fmt.plan(people(2))
    first, second = plan.pairing("R1-1").matches
    plan = fmt.plan(people(2), {first.key: MatchResult(first.seats[0], (3, 0))})
    pairing = plan.pairing("R1-1")
    assert pairing.status is Status.READY and pairing.result is None
    assert [m.key for m in plan.to_play()] == [second.key]


def test_swiss_pairs_by_combined_results() -> None:
    fmt = Swiss(rounds=2, duplicate=True)
    plan = fmt.plan(people(4))
    results = {}
    for m in plan.to_play():
        # The higher seed wins every duplicate match 3-2 from either seat.
        top = min(m.seats, key=lambda x: int(x[1:]))
        games = (3, 2) if m.seats[0] == top else (2, 3)
        results[m.key] = MatchResult(top, games)
    plan = fmt.plan(people(4), results)
    # Winners meet winners; seat a alternates by round when both have had it equally often.
    assert [(p.a, p.b) for p in plan.pairings if p.round == 2] == [("s2", "s1"), ("s4", "s3")]
