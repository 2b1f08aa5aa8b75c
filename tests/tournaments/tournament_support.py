"""Test helpers for the tournament planners: random results, driving an event to its end, and
the invariants every plan must keep (checked after every step of every playout)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from arena.tournaments import Format, Match, MatchResult, Plan, Status

KNOCKOUT = ("single_elimination", "double_elimination")


def people(n: int) -> list[str]:
    """Participants ``s1 .. sn`` in seed order."""
    return [f"s{i}" for i in range(1, n + 1)]


def win(match: Match, seat: int, games: tuple[int, int] | None = None) -> MatchResult:
    """A result where seat ``seat`` of ``match`` won (3 games to 1 unless given)."""
    if games is None:
        games = (3, 1) if seat == 0 else (1, 3)
    return MatchResult(match.seats[seat], games=games, points=(games[0] * 100, games[1] * 100))


def random_result(rng: random.Random, match: Match, draws: bool = True) -> MatchResult:
    """A plausible random result: usually a best-of-five win, sometimes a forfeit or a draw."""
    roll = rng.random()
    if roll < 0.05:
        quitter = rng.randrange(2)
        return MatchResult(
            match.seats[1 - quitter], games=(0, 0), forfeited=frozenset({match.seats[quitter]})
        )
    if draws and roll < 0.10:
        return MatchResult(None, games=(2, 2), points=(300, 300))
    seat = rng.randrange(2)
    games = [rng.randrange(3), rng.randrange(3)]
    games[seat] = 3
    points = (rng.randrange(0, 600), rng.randrange(0, 600))
    return MatchResult(match.seats[seat], games=(games[0], games[1]), points=points)


def stronger_wins(match: Match) -> MatchResult:
    """The better seed (lower number in ``sN``) always wins."""
    a, b = match.seats
    seat = 0 if int(a[1:]) < int(b[1:]) else 1
    return win(match, seat)


@dataclass
class Playout:
    """A whole event driven through ``plan()``: every plan along the way, and the inputs."""

    plans: list[Plan] = field(default_factory=list)
    results: dict[str, MatchResult] = field(default_factory=dict)
    withdrawn: list[str] = field(default_factory=list)

    @property
    def final(self) -> Plan:
        return self.plans[-1]


def drive(
    fmt: Format,
    participants: list[str],
    rng: random.Random,
    *,
    withdraw_chance: float = 0.0,
    result: Callable[[random.Random, Match], MatchResult] | None = None,
    seed: int = 0,
    batch: int = 1,
) -> Playout:
    """Feed results (one random playable match at a time, or ``batch`` at once) until the
    event finishes, checking every plan and every transition. Fails if it stalls."""
    out = Playout()
    plan = fmt.plan(participants, {}, (), seed)
    check_plan(fmt, plan)
    out.plans.append(plan)
    limit = 8 * len(participants) ** 2 + 20
    while not plan.finished:
        playable = plan.to_play()
        assert playable, f"stalled: {[(p.key, p.status.value) for p in plan.pairings]}"
        for match in rng.sample(playable, min(batch, len(playable))):
            make = result or (lambda r, m: random_result(r, m, draws=fmt.name not in KNOCKOUT))
            out.results[match.key] = make(rng, match)
        if withdraw_chance and rng.random() < withdraw_chance:
            quitter = rng.choice(participants)
            if quitter not in out.withdrawn:
                out.withdrawn.append(quitter)
        new = fmt.plan(participants, out.results, out.withdrawn, seed)
        check_plan(fmt, new)
        check_transition(plan, new)
        out.plans.append(new)
        plan = new
        assert len(out.plans) < limit, "event does not terminate"
    assert not plan.to_play()
    return out


def check_plan(fmt: Format, plan: Plan) -> None:
    """Invariants of any single plan."""
    keys = [p.key for p in plan.pairings]
    assert len(keys) == len(set(keys)), "duplicate pairing keys"
    in_bracket = [k for s in plan.bracket for r in s.rounds for k in r.pairings]
    assert in_bracket == keys, "bracket order must list every pairing once, in plan order"
    for section in plan.bracket:
        for rnd in section.rounds:
            seen: Counter[str] = Counter()
            for key in rnd.pairings:
                p = plan.pairing(key)
                seen.update(x for x in (p.a, p.b) if x is not None)
            assert max(seen.values(), default=1) == 1, f"someone plays twice in {rnd.name}"
    for p in plan.pairings:
        assert p.a is None or p.a != p.b
        if p.status in (Status.READY, Status.DONE):
            assert p.a is not None and p.b is not None
            check_matches(fmt, p.key, p.a, p.b, p.matches)
        else:
            assert not p.matches
        if p.status is Status.DONE:
            assert all(m.result is not None for m in p.matches)
        if p.is_settled and p.status is not Status.SKIPPED:
            assert p.result is not None
            if fmt.name in KNOCKOUT and p.a is not None and p.b is not None:
                assert p.result.winner in (p.a, p.b), "knockouts always decide a winner"
        if p.status is Status.WALKOVER:
            assert {p.a, p.b} & set(plan.withdrawn)
    ranked = [s.participant for s in plan.standings]
    assert sorted(ranked) == sorted(plan.participants)
    for i, s in enumerate(plan.standings):
        assert s.rank == i + 1 or (i > 0 and s.rank == plan.standings[i - 1].rank)
        assert s.withdrawn == (s.participant in plan.withdrawn)
    if plan.finished:
        assert all(p.is_settled for p in plan.pairings)
        assert not plan.to_play()


def check_matches(fmt: Format, key: str, a: str, b: str, matches: tuple[Match, ...]) -> None:
    """One match with the pairing's seats, or two with seats swapped and a shared seed."""
    if fmt.duplicate:
        assert [m.key for m in matches] == [f"{key}.1", f"{key}.2"]
        assert [m.seats for m in matches] == [(a, b), (b, a)]
        assert matches[0].seed == matches[1].seed
    else:
        assert [m.key for m in matches] == [key]
        assert matches[0].seats == (a, b)
    assert all(m.pairing == key for m in matches)


def check_transition(old: Plan, new: Plan) -> None:
    """Keys never disappear and an issued pairing is never re-paired."""
    for p in old.pairings:
        assert p.key in new, f"{p.key} disappeared"
        q = new.pairing(p.key)
        assert (q.section, q.round, q.sources) == (p.section, p.round, p.sources)
        if p.status is Status.WAITING:
            assert p.a is None or q.a == p.a
            assert p.b is None or q.b == p.b
            continue
        assert (q.a, q.b) == (p.a, p.b), f"{p.key} re-paired"
        if p.is_settled:
            assert q == p, f"{p.key} changed after it was settled"
        else:
            assert [(m.key, m.seats, m.seed) for m in q.matches] in (
                [(m.key, m.seats, m.seed) for m in p.matches],
                [],  # became a walkover
            )


def played(plan: Plan) -> Iterator[tuple[str, str]]:
    """Every (a, b) pairing that has two sides and is done or a walkover."""
    for p in plan.pairings:
        if p.status in (Status.DONE, Status.WALKOVER) and p.a is not None and p.b is not None:
            yield p.a, p.b
