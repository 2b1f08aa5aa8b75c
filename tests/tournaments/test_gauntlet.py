"""Gauntlet: one challenger against every member of the field."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import drive, people, win

from arena.tournaments import Gauntlet, PlanError, Status


def test_the_challenger_meets_each_member_of_the_field_once_seats_alternating() -> None:
    plan = Gauntlet(challenger="s3").plan(people(5))
    assert [(p.key, p.a, p.b) for p in plan.pairings] == [
        ("G1", "s3", "s1"),
        ("G2", "s2", "s3"),
        ("G3", "s3", "s4"),
        ("G4", "s5", "s3"),
    ]
    assert all(p.status is Status.READY for p in plan.pairings)
    assert [p.round for p in plan.pairings] == [1, 2, 3, 4]
    assert [s.name for s in plan.bracket] == ["gauntlet"]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 20), pick=st.integers(0, 19), duplicate=st.booleans(), seed=st.integers())
def test_one_pairing_per_field_member_and_the_event_finishes(
    n: int, pick: int, duplicate: bool, seed: int
) -> None:
    challenger = people(n)[pick % n]
    fmt = Gauntlet(challenger=challenger, duplicate=duplicate)
    final = drive(fmt, people(n), random.Random(seed), batch=3).final
    assert final.finished
    opponents = [p.b if p.a == challenger else p.a for p in final.pairings]
    assert opponents == [x for x in people(n) if x != challenger]
    seats_a = [p.a == challenger for p in final.pairings]
    assert seats_a == [i % 2 == 0 for i in range(n - 1)]
    assert all(p.status is Status.DONE for p in final.pairings)


def test_the_challenger_defaults_to_the_first_participant() -> None:
    plan = Gauntlet().plan(people(3))
    assert all("s1" in (p.a, p.b) for p in plan.pairings)
    assert plan.options == {"challenger": None, "duplicate": False}


def test_an_unknown_challenger_is_refused() -> None:
    with pytest.raises(PlanError, match="not a participant"):
        Gauntlet(challenger="nobody").plan(people(3))


def test_standings_rank_by_percentage() -> None:
    fmt = Gauntlet()
    plan = fmt.plan(people(4))
    # The challenger s1 beats s2 and s3 and loses to s4: 2/3 against s4's 1/1.
    results = {}
    for p in plan.pairings:
        (m,) = p.matches
        winner = "s4" if p.key == "G3" else "s1"
        results[m.key] = win(m, m.seats.index(winner))
    final = fmt.plan(people(4), results)
    assert final.finished
    table = [(s.rank, s.participant, s.score, s.tiebreak("percentage")) for s in final.standings]
    assert table == [
        (1, "s4", 1.0, 1.0),
        (2, "s1", 2.0, 2 / 3),
        (3, "s2", 0.0, 0.0),
        (3, "s3", 0.0, 0.0),
    ]


@pytest.mark.parametrize("n", [2, 5, 12])
def test_random_gauntlets_finish(n: int) -> None:
    final = drive(Gauntlet(), people(n), random.Random(n), withdraw_chance=0.1).final
    assert final.finished
    assert len(final.pairings) == n - 1
