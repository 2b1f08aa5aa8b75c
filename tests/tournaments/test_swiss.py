"""Swiss: pairing optimality against a brute-force oracle, byes, withdrawals, tie-breaks."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import drive, people, stronger_wins, win

from arena.tournaments import MatchResult, Plan, Status, Swiss
from arena.tournaments.standings import tally


def perfect_matchings(players: list[str | None]) -> Iterator[list[tuple[str | None, str | None]]]:
    """Every way to split an even list into pairs (None stands for the bye)."""
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for i, other in enumerate(rest):
        for tail in perfect_matchings(rest[:i] + rest[i + 1 :]):
            yield [(first, other), *tail]


def tiers(
    matching: Sequence[tuple[str | None, str | None]],
    order: list[str],
    scores: dict[str, float],
    met: Counter[frozenset[str]],
    byes: Counter[str],
) -> tuple[int, int, int, float]:
    """The documented criteria, most important first: rematches, second byes, how far the bye
    is from the bottom of the ranking, and the squared score gaps of the pairs."""
    rematches = second_byes = bye_distance = 0
    gaps = 0.0
    for x, y in matching:
        if x is None or y is None:
            alone = x if y is None else y
            assert alone is not None
            second_byes += byes[alone]
            bye_distance += len(order) - 1 - order.index(alone)
        else:
            rematches += met[frozenset((x, y))]
            gaps += (2 * (scores[x] - scores[y])) ** 2
    return rematches, second_byes, bye_distance, gaps


def check_round_is_optimal(plan: Plan, r: int) -> None:
    earlier = [p for p in plan.pairings if p.round < r]
    this = [p for p in plan.pairings if p.round == r]
    tallies = tally(plan.participants, earlier, 1.0)
    active = [x for p in this for x in (p.a, p.b) if x is not None]
    order = sorted(active, key=lambda x: (-tallies[x].score, tallies[x].seed))
    scores = {x: tallies[x].score for x in active}
    met: Counter[frozenset[str]] = Counter(
        frozenset((p.a, p.b)) for p in earlier if p.a is not None and p.b is not None
    )
    byes = Counter({x: tallies[x].byes for x in active})
    slots: list[str | None] = list(order) + ([None] if len(order) % 2 else [])
    best = min(tiers(m, order, scores, met, byes) for m in perfect_matchings(slots))
    chosen = [(p.a, p.b) for p in this]
    assert tiers(chosen, order, scores, met, byes) == best, f"round {r} is not optimal"


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(2, 9),
    extra_rounds=st.integers(-3, 2),
    seed=st.integers(0, 10**6),
    withdraw=st.sampled_from([0.0, 0.0, 0.1]),
)
def test_every_round_is_paired_optimally(
    n: int, extra_rounds: int, seed: int, withdraw: float
) -> None:
    rounds = max(1, n - 1 + extra_rounds)
    fmt = Swiss(rounds=rounds)
    out = drive(fmt, people(n), random.Random(seed), withdraw_chance=withdraw)
    final = out.final
    assert final.finished
    assert max(p.round for p in final.pairings) == rounds
    for r in range(1, rounds + 1):
        check_round_is_optimal(final, r)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 24), seed=st.integers(0, 10**6))
def test_no_rematch_and_nobody_sits_out_twice_in_a_short_event(n: int, seed: int) -> None:
    # Up to n // 2 rounds a pairing without rematches or second byes always exists (what is
    # left of the complete graph has degree at least half its size, so it has a perfect
    # matching, Dirac); the oracle test above covers longer events.
    rounds = max(1, min(n // 2, n.bit_length() + 1))
    final = drive(Swiss(rounds=rounds), people(n), random.Random(seed), batch=3).final
    met = Counter(frozenset((p.a, p.b)) for p in final.pairings if p.a and p.b)
    assert max(met.values()) == 1
    byes = Counter(p.a for p in final.pairings if p.status is Status.BYE)
    assert max(byes.values(), default=1) == 1
    assert len(byes) == (rounds if n % 2 else 0)


def test_first_round_is_top_half_against_bottom_half_and_the_last_seed_sits_out() -> None:
    plan = Swiss(rounds=3).plan(people(9))
    assert [(p.seeds, p.key) for p in plan.pairings] == [
        ((1, 5), "R1-1"), ((2, 6), "R1-2"), ((3, 7), "R1-3"), ((4, 8), "R1-4"),
        ((9, None), "R1-bye"),
    ]  # fmt: skip
    assert [r.number for r in plan.bracket[0].rounds] == [1]  # round 2 is not paired yet


def test_the_bye_goes_to_the_lowest_ranked_player_without_one() -> None:
    fmt = Swiss(rounds=2)
    plan = fmt.plan(people(5))
    assert plan.pairing("R1-bye").a == "s5"
    results = {m.key: stronger_wins(m) for m in plan.to_play()}
    plan = fmt.plan(people(5), results)
    # After round 1: s1, s2 and s5 (bye) have 1, s3 and s4 have 0. The lowest-ranked is s4.
    assert plan.pairing("R2-bye").a == "s4"
    results |= {m.key: win(m, 1) for m in plan.to_play()}
    assert fmt.plan(people(5), results).finished


def play_by_outcome(
    fmt: Swiss, n: int, outcome: Mapping[frozenset[str], str | None]
) -> tuple[Plan, dict[str, MatchResult]]:
    """Play a Swiss to the end where ``outcome[{x, y}]`` names the winner (None: a draw)."""
    results: dict[str, MatchResult] = {}
    plan = fmt.plan(people(n))
    while not plan.finished:
        for m in plan.to_play():
            w = outcome[frozenset(m.seats)]
            results[m.key] = (
                MatchResult(None, (2, 2), (0, 0)) if w is None else win(m, m.seats.index(w))
            )
        plan = fmt.plan(people(n), results)
    return plan, results


def test_tie_breaks_on_a_hand_checked_event() -> None:
    s1, s2, s3, s4 = people(4)
    outcome = {
        frozenset((s1, s2)): None,
        frozenset((s1, s3)): s1,
        frozenset((s1, s4)): s4,
        frozenset((s2, s3)): s2,
        frozenset((s2, s4)): s2,
        frozenset((s3, s4)): s3,
    }
    plan, _ = play_by_outcome(Swiss(rounds=3), 4, outcome)
    by = {s.participant: s for s in plan.standings}
    # Scores: s1 0.5+1+0, s2 0.5+1+1, s3 0+0+1, s4 1+0+0.
    assert [by[x].score for x in (s1, s2, s3, s4)] == [1.5, 2.5, 1.0, 1.0]
    # Buchholz: the opponents' scores. s1: 2.5+1+1; s2: 1.5+1+1; s3, s4: 1.5+2.5+1.
    assert [by[x].tiebreak("buchholz") for x in (s1, s2, s3, s4)] == [4.5, 3.5, 5.0, 5.0]
    # Sonneborn-Berger: beaten opponents' scores plus half the drawn ones'.
    # s1: s3 (1) + s2/2 (1.25); s2: s3 + s4 (2) + s1/2 (0.75); s3: s4 (1); s4: s1 (1.5).
    assert [by[x].tiebreak("sonneborn_berger") for x in (s1, s2, s3, s4)] == [
        2.25, 2.75, 1.0, 1.5,
    ]  # fmt: skip
    # s3 and s4 are level on score and Buchholz; Sonneborn-Berger puts s4 first even though s3
    # won their game: head to head comes after Sonneborn-Berger.
    assert [(s.rank, s.participant) for s in plan.standings] == [
        (1, s2), (2, s1), (3, s4), (4, s3),
    ]  # fmt: skip


def test_a_circle_of_wins_among_level_players_shares_the_rank() -> None:
    s1, s2, s3, s4 = people(4)
    outcome = {
        frozenset((s1, s2)): s1,
        frozenset((s1, s3)): s1,
        frozenset((s1, s4)): s1,
        frozenset((s2, s3)): s2,
        frozenset((s2, s4)): s4,
        frozenset((s3, s4)): s3,
    }
    plan, _ = play_by_outcome(Swiss(rounds=3), 4, outcome)
    # s2, s3 and s4 each have 1 point, Buchholz 5 and Sonneborn-Berger 1, and beat each other
    # in a circle, so head to head is 1 each too: they share third place, listed by seed.
    assert [(s.rank, s.participant) for s in plan.standings] == [
        (1, s1), (2, s2), (2, s3), (2, s4),
    ]  # fmt: skip
    assert {s.tiebreak("head_to_head") for s in plan.standings[1:]} == {1.0}


def test_a_withdrawn_player_is_walked_over_and_not_paired_again() -> None:
    fmt = Swiss(rounds=3)
    names = people(6)
    plan = fmt.plan(names)
    results = {m.key: stronger_wins(m) for m in plan.to_play()}
    plan = fmt.plan(names, results)
    quitter = "s3"
    theirs = next(p for p in plan.pairings if p.round == 2 and quitter in (p.a, p.b))
    plan = fmt.plan(names, results, {quitter})
    walkover = plan.pairing(theirs.key)
    assert walkover.status is Status.WALKOVER
    assert walkover.winner == (theirs.b if theirs.a == quitter else theirs.a)
    results |= {m.key: stronger_wins(m) for m in plan.to_play()}
    plan = fmt.plan(names, results, {quitter})
    third = [p for p in plan.pairings if p.round == 3]
    assert quitter not in {x for p in third for x in (p.a, p.b)}
    assert sum(p.status is Status.BYE for p in third) == 1  # five players left
    results |= {m.key: stronger_wins(m) for m in plan.to_play()}
    plan = fmt.plan(names, results, {quitter})
    assert plan.finished
    assert next(s for s in plan.standings if s.participant == quitter).withdrawn


def test_withdrawal_between_rounds_does_not_change_the_issued_round() -> None:
    """s1 finishes round 1 and withdraws while other games go on: round 2 still pairs s1 (as a
    walkover), exactly as it would have been paired had the withdrawal come later."""
    fmt = Swiss(rounds=3)
    names = people(4)
    plan = fmt.plan(names)
    first, second = plan.pairing("R1-1"), plan.pairing("R1-2")
    results = {first.key: stronger_wins(first.matches[0])}
    early = fmt.plan(names, results | {second.key: stronger_wins(second.matches[0])}, {"s1"})
    results[second.key] = stronger_wins(second.matches[0])
    late = fmt.plan(names, results)
    round2 = [(p.key, p.a, p.b) for p in late.pairings if p.round == 2]
    assert [(p.key, p.a, p.b) for p in early.pairings if p.round == 2] == round2
    assert any(p.status is Status.WALKOVER for p in early.pairings if p.round == 2)


def test_more_rounds_than_opponents_allows_rematches_and_still_finishes() -> None:
    final = drive(Swiss(rounds=5), people(3), random.Random(3)).final
    assert final.finished
    assert len([p for p in final.pairings if p.status is Status.BYE]) == 5


def test_everyone_withdrawn_still_finishes() -> None:
    fmt = Swiss(rounds=4)
    plan = fmt.plan(people(4), {}, people(4))  # withdrawn in seed order: s4 last
    assert plan.finished
    assert all(p.status in (Status.WALKOVER, Status.BYE) for p in plan.pairings)
    assert plan.champion == "s4"
