"""Single elimination: seeding, byes to the top seeds, match counts, third place, placings."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import drive, people, stronger_wins

from arena.tournaments import (
    DecidedBy,
    MatchResult,
    SingleElimination,
    Source,
    SourceKind,
    Status,
)
from arena.tournaments.single_elimination import bracket_size


def test_sixteen_seeds_pair_one_against_sixteen() -> None:
    plan = SingleElimination().plan(people(16))
    first = [(p.seeds, p.status) for p in plan.pairings if p.round == 1]
    seeds = [s for s, _ in first]
    assert seeds == [(1, 16), (8, 9), (4, 13), (5, 12), (2, 15), (7, 10), (3, 14), (6, 11)]
    assert all(status is Status.READY for _, status in first)
    names = [r.name for r in plan.bracket[0].rounds]
    assert names == ["Round of 16", "Quarter-finals", "Semi-finals", "Final"]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40))
def test_byes_go_to_the_top_seeds(n: int) -> None:
    plan = SingleElimination().plan(people(n))
    byes = sorted(p.seeds[0] or 0 for p in plan.pairings if p.status is Status.BYE)
    assert byes == list(range(1, bracket_size(n) - n + 1))
    for p in plan.pairings:
        if p.status is Status.BYE:
            assert p.winner == p.a and p.result is not None
            assert p.result.decided_by is DecidedBy.BYE


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 33), third_place=st.booleans(), seed=st.integers(0, 10**6))
def test_n_minus_one_matches_plus_one_for_third_place(n: int, third_place: bool, seed: int) -> None:
    fmt = SingleElimination(third_place=third_place)
    final = drive(fmt, people(n), random.Random(seed)).final
    played = [p for p in final.pairings if p.status is not Status.BYE]
    assert all(p.status is Status.DONE for p in played)
    assert len(played) == n - 1 + (third_place and n >= 4)
    champion = final.standings[0]
    assert champion.rank == 1 and champion.losses == 0 and final.champion == champion.participant
    assert sum(s.losses for s in final.standings) == len(played)


def test_favourites_reach_the_semi_finals_and_placings_follow_the_exit_round() -> None:
    fmt = SingleElimination()
    final = drive(fmt, people(8), random.Random(1), result=lambda _, m: stronger_wins(m)).final
    semis = [(p.a, p.b) for p in final.pairings if p.round == 2]
    assert semis == [("s1", "s4"), ("s2", "s3")]
    assert final.pairing("R3-1").winner == "s1"
    ranks = [(s.rank, s.participant) for s in final.standings]
    assert ranks == [
        (1, "s1"), (2, "s2"), (3, "s3"), (3, "s4"), (5, "s5"), (5, "s6"), (5, "s7"), (5, "s8"),
    ]  # fmt: skip


def test_third_place_match_between_the_semi_final_losers() -> None:
    fmt = SingleElimination(third_place=True)
    out = drive(fmt, people(6), random.Random(2), result=lambda _, m: stronger_wins(m))
    third = out.final.pairing("3P")
    assert (third.a, third.b, third.winner) == ("s4", "s3", "s3")
    assert third.sources == (
        Source(SourceKind.LOSER, key="R2-1"),
        Source(SourceKind.LOSER, key="R2-2"),
    )
    assert [s.rank for s in out.final.standings] == [1, 2, 3, 4, 5, 5]
    assert [s.name for s in out.final.bracket] == ["main", "third_place"]
    # While the semi-finals are unplayed the third-place match waits.
    assert out.plans[0].pairing("3P").status is Status.WAITING


def test_no_third_place_match_with_three_players() -> None:
    plan = SingleElimination(third_place=True).plan(people(3))
    assert "3P" not in plan


def test_bracket_links_say_who_feeds_whom() -> None:
    plan = SingleElimination().plan(people(5))
    assert plan.pairing("R1-2").winner_to == "R2-1"
    assert plan.pairing("R2-1").sources == (
        Source(SourceKind.WINNER, key="R1-1"),
        Source(SourceKind.WINNER, key="R1-2"),
    )
    assert plan.pairing("R3-1").winner_to is None
    # Seed 1 has a bye, so it is already known in round 2; seed 4 v 5 is still to play.
    r2 = plan.pairing("R2-1")
    assert (r2.a, r2.b, r2.status) == ("s1", None, Status.WAITING)


@pytest.mark.parametrize(("games", "points", "winner", "how"), [
    ((2, 3), (300, 450), "s1", DecidedBy.GAMES),  # s1 won both matches
    ((3, 2), (500, 300), "s2", DecidedBy.POINTS),  # 5 games each; s2 800 points to 750
    ((3, 2), (450, 300), "s1", DecidedBy.SEED),  # level on everything: the better seed
])  # fmt: skip
def test_duplicate_knockout_always_decides(
    games: tuple[int, int], points: tuple[int, int], winner: str, how: DecidedBy
) -> None:
    fmt = SingleElimination(duplicate=True)
    results = {
        "R1-1.1": MatchResult("s1", (3, 2), (450, 300)),
        # The second match has the seats swapped: (s2, s1).
        "R1-1.2": MatchResult("s2" if games[0] > games[1] else "s1", games, points),
    }
    pairing = fmt.plan(people(2), results).pairing("R1-1")
    assert pairing.status is Status.DONE
    assert pairing.result is not None
    assert (pairing.winner, pairing.result.decided_by) == (winner, how)


def test_a_drawn_single_match_in_a_knockout_goes_to_games_then_seed() -> None:
    fmt = SingleElimination()
    level = fmt.plan(people(2), {"R1-1": MatchResult(None, (2, 2), (100, 100))})
    assert level.champion == "s1"
    both_forfeit = MatchResult(None, forfeited=frozenset({"s1", "s2"}))
    plan = fmt.plan(people(2), {"R1-1": both_forfeit})
    assert plan.champion == "s1" and plan.finished
