"""Round robin: everyone meets everyone once (or twice, seats swapped, with ``double``).

The schedule is the circle method: with an odd field a phantom is added, fixed in place, and
whoever faces it has the bye, so each participant sits out exactly once per cycle. Each round
nobody appears twice. Seats balance: every participant has seat a within one of as often as
seat b. The second cycle of a double round robin repeats the first with seats swapped.

Every pairing is ready from the start (rounds give an order, not a gate); an executor may run
them in round order to spread each bot's load. Keys: ``R{round}-{board}`` and ``R{round}-bye``.
Ranking: score, then head to head among the tied, Sonneborn-Berger, game difference, point
difference; byes score nothing here.

>>> plan = RoundRobin().plan(["a", "b", "c"])
>>> [(p.key, p.a, p.b) for p in plan.pairings][:4]
[('R1-1', 'a', 'b'), ('R1-bye', 'c', None), ('R2-1', 'c', 'a'), ('R2-bye', 'b', None)]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournaments._common import Context, check_bool
from arena.tournaments.model import BracketRound, BracketSection, MatchResult, Pairing, Plan
from arena.tournaments.standings import (
    GAME_DIFFERENCE,
    HEAD_TO_HEAD,
    POINT_DIFFERENCE,
    SONNEBORN_BERGER,
    rank,
    tally,
)

__all__ = ["RoundRobin", "circle_schedule"]

#: Round robin ranking criteria after the score.
CRITERIA = (HEAD_TO_HEAD, SONNEBORN_BERGER, GAME_DIFFERENCE, POINT_DIFFERENCE)


def circle_schedule(n: int) -> list[list[tuple[int, int | None]]]:
    """One cycle for ``n`` players (indices, best seed first): rounds of (seat a, seat b)
    pairs, boards ordered by their better seed, the bye (None) last.

    The ring starts so that round 1 is top half against bottom half (1 v 3, 2 v 4 of four),
    with the bye of an odd field to the last seed.

    >>> circle_schedule(4)
    [[(0, 2), (1, 3)], [(3, 0), (2, 1)], [(0, 1), (3, 2)]]
    """
    if n < 2:
        raise ValueError("a round robin needs at least two players")
    m = n + n % 2
    half = m // 2
    ring: list[int | None] = [None] * m
    if n % 2:
        ring[half] = n - 1
        for i in range(1, half):
            ring[i], ring[m - i] = i - 1, i - 1 + half - 1
    else:
        ring[0], ring[half] = 0, half
        for i in range(1, half):
            ring[i], ring[m - i] = i, i + half
    fixed, others = ring[0], ring[1:]
    rounds: list[list[tuple[int, int | None]]] = []
    for r in range(m - 1):
        now = [fixed, *others[r:], *others[:r]]
        games: list[tuple[int, int]] = []
        for i in range(1, half):
            x, y = now[i], now[m - i]
            assert x is not None and y is not None
            games.append((x, y))
        x, y = now[0], now[half]
        assert y is not None
        if x is not None:
            games.append((x, y) if r % 2 == 0 else (y, x))
        games.sort(key=min)
        byes: list[tuple[int, int | None]] = [] if x is not None else [(y, None)]
        rounds.append([*games, *byes])
    return rounds


@dataclass(frozen=True, slots=True)
class RoundRobin:
    """All against all; ``double`` plays a second cycle with seats swapped."""

    double: bool = False
    duplicate: bool = False

    def __post_init__(self) -> None:
        check_bool("round_robin", "double", self.double)
        check_bool("round_robin", "duplicate", self.duplicate)

    @property
    def name(self) -> str:
        return "double_round_robin" if self.double else "round_robin"

    def options(self) -> dict[str, Any]:
        return {"duplicate": self.duplicate}

    def plan(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None = None,
        withdrawn: Collection[str] = (),
        seed: int = 0,
    ) -> Plan:
        """Every pairing of the schedule, settled as far as the results allow."""
        ctx = Context(participants, results, withdrawn, seed, self.duplicate)
        people = ctx.participants
        cycle = circle_schedule(len(people))
        schedule = cycle + [[(b, a) for a, b in rnd if b is not None] + [
            (a, b) for a, b in rnd if b is None
        ] for rnd in cycle] if self.double else cycle  # fmt: skip
        pairings: list[Pairing] = []
        rounds: list[BracketRound] = []
        for r, games in enumerate(schedule, start=1):
            keys: list[str] = []
            board = 0
            for x, y in games:
                if y is None:
                    key = f"R{r}-bye"
                    pairings.append(ctx.bye(key, "rounds", r, people[x]))
                else:
                    board += 1
                    key = f"R{r}-{board}"
                    pairings.append(
                        ctx.pairing(key, "rounds", r, people[x], people[y], decisive=False)
                    )
                keys.append(key)
            rounds.append(BracketRound(r, f"Round {r}", tuple(keys)))
        ctx.check_all_used()
        standings = rank(tally(people, pairings), CRITERIA, ctx.out)
        return Plan(
            self.name,
            self.options(),
            people,
            ctx.withdrawn,
            tuple(pairings),
            standings,
            (BracketSection("rounds", tuple(rounds)),),
            all(p.is_settled for p in pairings),
        )
