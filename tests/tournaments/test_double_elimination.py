"""Double elimination: both brackets, the grand final and its reset, counts for any field."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import drive, people, stronger_wins, win

from arena.tournaments import DoubleElimination, Match, Plan, Status


def losses(plan: Plan) -> Counter[str]:
    out: Counter[str] = Counter()
    for p in plan.pairings:
        if p.status in (Status.DONE, Status.WALKOVER) and p.loser is not None:
            out[p.loser] += 1
    return out


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 34), reset=st.booleans(), seed=st.integers(0, 10**6))
def test_two_n_minus_two_matches_or_one_more_for_the_reset(n: int, reset: bool, seed: int) -> None:
    fmt = DoubleElimination(reset=reset)
    final = drive(fmt, people(n), random.Random(seed), batch=2).final
    played = [p for p in final.pairings if p.status not in (Status.BYE, Status.SKIPPED)]
    gf1 = final.pairing("GF1")
    reset_played = reset and gf1.winner == gf1.b
    assert len(played) == 2 * n - 2 + reset_played
    assert ("GF2" in final) == reset
    if reset:
        assert final.pairing("GF2").status is (Status.DONE if reset_played else Status.SKIPPED)
    lost = losses(final)
    champion = final.champion
    assert champion is not None and final.standings[0].participant == champion
    for x in people(n):
        if x == champion:
            assert lost[x] == (1 if gf1.winner == gf1.b else 0)
        elif not reset and x == gf1.a and gf1.winner == gf1.b:
            assert lost[x] == 1  # no reset: the winners-bracket champion is out after one loss
        else:
            assert lost[x] == 2


def test_four_favourites_finish_in_seed_order_without_a_reset() -> None:
    fmt = DoubleElimination()
    out = drive(fmt, people(4), random.Random(0), result=lambda _, m: stronger_wins(m))
    final = out.final
    summary = [(p.key, p.a, p.b, p.winner, p.status.value) for p in final.pairings]
    assert summary == [
        ("W1-1", "s1", "s4", "s1", "done"),
        ("W1-2", "s2", "s3", "s2", "done"),
        ("W2-1", "s1", "s2", "s1", "done"),
        ("L1-1", "s4", "s3", "s3", "done"),
        ("L2-1", "s3", "s2", "s2", "done"),
        ("GF1", "s1", "s2", "s1", "done"),
        ("GF2", "s1", "s2", None, "skipped"),
    ]
    assert [(s.rank, s.participant) for s in final.standings] == [
        (1, "s1"), (2, "s2"), (3, "s3"), (4, "s4"),
    ]  # fmt: skip
    assert [s.name for s in final.bracket] == ["winners", "losers", "final"]
    links = {p.key: (p.winner_to, p.loser_to) for p in final.pairings}
    assert links["W1-1"] == ("W2-1", "L1-1")
    assert links["W2-1"] == ("GF1", "L2-1")
    assert links["L2-1"] == ("GF1", None)
    assert links["GF1"] == (None, None)
    assert [r.name for r in final.bracket[1].rounds] == ["Losers round 1", "Losers final"]


def test_reset_is_played_only_when_the_losers_bracket_champion_wins_the_first_final() -> None:
    fmt = DoubleElimination()
    results = {"W1-1": win(Match("W1-1", "W1-1", ("s1", "s2"), 0), 0)}
    plan = fmt.plan(people(2), results)
    gf1 = plan.pairing("GF1")
    assert (gf1.a, gf1.b, gf1.status) == ("s1", "s2", Status.READY)
    assert plan.pairing("GF2").status is Status.WAITING
    results["GF1"] = win(gf1.matches[0], 1)  # the losers-bracket champion s2 wins
    plan = fmt.plan(people(2), results)
    gf2 = plan.pairing("GF2")
    assert (gf2.a, gf2.b, gf2.status) == ("s1", "s2", Status.READY)
    assert not plan.finished and [s.rank for s in plan.standings] == [1, 1]
    results["GF2"] = win(gf2.matches[0], 1)
    plan = fmt.plan(people(2), results)
    assert plan.finished and plan.champion == "s2"
    assert [r.name for r in plan.bracket[-1].rounds] == ["Grand final", "Grand final reset"]


def test_without_reset_the_first_final_decides() -> None:
    fmt = DoubleElimination(reset=False)
    plan = fmt.plan(people(2))
    assert [p.key for p in plan.pairings] == ["W1-1", "GF1"]
    results = {"W1-1": win(plan.pairing("W1-1").matches[0], 0)}
    gf1 = fmt.plan(people(2), results).pairing("GF1")
    results["GF1"] = win(gf1.matches[0], 1)
    plan = fmt.plan(people(2), results)
    assert plan.finished and plan.champion == "s2"


def test_losers_drop_in_reversed_order_to_avoid_an_early_rematch() -> None:
    fmt = DoubleElimination()
    final = drive(fmt, people(8), random.Random(0), result=lambda _, m: stronger_wins(m)).final
    # W1: 1v8, 4v5, 2v7, 3v6; W2 losers s4 and s3 drop into L2 crossed over.
    assert [(p.a, p.b) for p in final.pairings if p.key.startswith("L2-")] == [
        ("s5", "s3"),
        ("s6", "s4"),
    ]
    met: Counter[frozenset[str]] = Counter()
    for p in final.pairings:
        if p.a and p.b and p.status is Status.DONE and p.key not in ("L4-1", "GF1"):
            met[frozenset((p.a, p.b))] += 1
    # With favourites winning nobody meets twice before the losers final (s3 v s2 again).
    assert max(met.values()) == 1
    assert (final.pairing("L4-1").a, final.pairing("L4-1").b) == ("s3", "s2")


def test_byes_in_the_losers_bracket_for_a_field_of_five() -> None:
    plan = DoubleElimination().plan(people(5))
    statuses = {p.key: p.status for p in plan.pairings}
    assert statuses["W1-1"] is Status.BYE and statuses["W1-2"] is Status.READY
    # L1-2 would pair the losers of two byes: nobody ever comes, so it is an empty bye.
    empty = plan.pairing("L1-2")
    assert (empty.a, empty.b, empty.status, empty.winner) == (None, None, Status.BYE, None)
    assert plan.pairing("L1-1").status is Status.WAITING  # the loser of W1-2 gets a bye there
