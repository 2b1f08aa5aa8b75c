"""Withdrawals: remaining pairings become walkovers, results already in stand, nothing stalls."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import drive, people, stronger_wins

from arena.tournaments import (
    DecidedBy,
    DoubleElimination,
    PlanError,
    RoundRobin,
    SingleElimination,
    Status,
    make_format,
)

FORMATS = [
    ("round_robin", {}),
    ("double_round_robin", {"duplicate": True}),
    ("single_elimination", {"third_place": True}),
    ("double_elimination", {}),
    ("double_elimination", {"reset": False, "duplicate": True}),
    ("swiss", {"rounds": 4}),
    ("gauntlet", {}),
]


@settings(max_examples=30, deadline=None)
@given(
    case=st.sampled_from(FORMATS),
    n=st.integers(2, 12),
    seed=st.integers(0, 10**6),
    chance=st.sampled_from([0.05, 0.2, 0.6]),
)
def test_random_withdrawals_never_stall_an_event(
    case: tuple[str, dict[str, object]], n: int, seed: int, chance: float
) -> None:
    name, options = case
    out = drive(
        make_format(name, **options), people(n), random.Random(seed), withdraw_chance=chance
    )
    assert out.final.finished
    for p in out.final.pairings:
        if p.status is Status.WALKOVER:
            assert p.result is not None and p.result.decided_by is DecidedBy.WALKOVER
            assert p.loser in out.withdrawn


def test_a_withdrawn_top_seed_is_walked_over_after_its_bye() -> None:
    fmt = SingleElimination()
    plan = fmt.plan(people(3), {}, ["s1"])
    assert plan.pairing("R1-1").status is Status.BYE  # the bye still advances s1
    results = {"R1-2": stronger_wins(plan.pairing("R1-2").matches[0])}
    plan = fmt.plan(people(3), results, ["s1"])
    final = plan.pairing("R2-1")
    assert (final.a, final.b, final.status, final.winner) == ("s1", "s2", Status.WALKOVER, "s2")
    assert plan.finished and plan.champion == "s2"
    assert not plan.to_play()


def test_a_withdrawal_mid_bracket_sends_the_quitter_down_and_out() -> None:
    fmt = DoubleElimination()
    names = people(4)
    plan = fmt.plan(names)
    results = {m.key: stronger_wins(m) for m in plan.to_play()}  # W1: s1 and s2 win
    plan = fmt.plan(names, results, ["s2"])  # s2 stops answering before W2
    assert plan.pairing("W2-1").status is Status.WALKOVER and plan.pairing("W2-1").winner == "s1"
    assert plan.pairing("L1-1").status is Status.READY  # s4 v s3 is unaffected
    results |= {m.key: stronger_wins(m) for m in plan.to_play()}
    plan = fmt.plan(names, results, ["s2"])
    assert plan.pairing("L2-1").status is Status.WALKOVER  # s3 v s2: walkover to s3
    results |= {m.key: stronger_wins(m) for m in plan.to_play()}
    plan = fmt.plan(names, results, ["s2"])
    assert plan.finished and plan.champion == "s1"
    assert [(s.rank, s.participant) for s in plan.standings] == [
        (1, "s1"), (2, "s3"), (3, "s2"), (4, "s4"),
    ]  # fmt: skip


def test_results_already_in_stand_after_a_withdrawal() -> None:
    fmt = RoundRobin()
    plan = fmt.plan(people(4))
    first = plan.pairings[0]
    results = {first.key: stronger_wins(first.matches[0])}
    assert first.a is not None
    plan = fmt.plan(people(4), results, [first.a])
    assert plan.pairing(first.key).status is Status.DONE
    others = [p for p in plan.pairings if first.a in (p.a, p.b) and p.key != first.key]
    assert all(p.status is Status.WALKOVER for p in others)
    assert not {first.a} & {x for m in plan.to_play() for x in m.seats}


def test_two_withdrawn_players_meeting_the_later_withdrawal_wins() -> None:
    fmt = SingleElimination()
    plan = fmt.plan(people(2), {}, ["s2", "s1"])
    assert plan.pairing("R1-1").winner == "s1"
    plan = fmt.plan(people(2), {}, ["s1", "s2"])
    assert plan.pairing("R1-1").winner == "s2"


@pytest.mark.parametrize(
    ("withdrawn", "message"),
    [(["zed"], "not participants"), ({"s1", "s2"}, "ordered"), ("s1", "not one string")],
)
def test_bad_withdrawals_are_refused(withdrawn: object, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        RoundRobin().plan(people(3), {}, withdrawn)  # type: ignore[arg-type]
