"""Swiss system: a fixed number of rounds, each paired from the scores so far.

Round ``r`` is paired once every pairing of round ``r - 1`` is settled, from those results only,
so an issued round never changes. Players are ranked for pairing by score, then seed. The
pairing is a minimum-cost perfect matching (:mod:`arena.tournaments._matching`) whose costs
are ordered strictly, each criterion outweighing all later ones together:

1. rematches (avoided whenever any pairing without one exists);
2. second byes (nobody gets two while it can be avoided);
3. the bye goes to the lowest-ranked player without one;
4. score differences between opponents (pair within score groups; floaters as close as can be);
5. within a score group, top half against bottom half (1 v 5, 2 v 6, ... in a group of 8).

A bye scores 1. Seat a goes to whoever has had it less, ties alternating by round.
Withdrawals: a withdrawn player's pending pairing becomes a walkover and, once they have lost
one, they are not paired again. (A player withdrawn after finishing round ``r`` but before
round ``r + 1`` was paired is still paired in ``r + 1``, as a walkover: pairings depend only on
results and the order of withdrawals, never on when one arrived, so an issued round stays.)

Standings: score, Buchholz, Sonneborn-Berger, head to head, game and point difference.
Keys: ``R{round}-{board}`` (board 1 is the top pairing) and ``R{round}-bye``.

>>> plan = Swiss(rounds=3).plan(["p1", "p2", "p3", "p4", "p5"])
>>> [(p.key, p.a, p.b) for p in plan.pairings]
[('R1-1', 'p1', 'p3'), ('R1-2', 'p2', 'p4'), ('R1-bye', 'p5', None)]
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournaments._common import Context, check_bool
from arena.tournaments._matching import max_weight_matching
from arena.tournaments.model import (
    BracketRound,
    BracketSection,
    FormatError,
    MatchResult,
    Pairing,
    Plan,
    Status,
)
from arena.tournaments.standings import (
    BUCHHOLZ,
    GAME_DIFFERENCE,
    HEAD_TO_HEAD,
    POINT_DIFFERENCE,
    SONNEBORN_BERGER,
    rank,
    tally,
)

__all__ = ["Swiss", "pair_round"]

#: Swiss ranking criteria after the score.
CRITERIA = (BUCHHOLZ, SONNEBORN_BERGER, HEAD_TO_HEAD, GAME_DIFFERENCE, POINT_DIFFERENCE)
BYE_POINTS = 1.0


def pair_round(
    order: Sequence[str],
    scores: Mapping[str, float],
    meetings: Mapping[frozenset[str], int],
    byes: Mapping[str, int],
) -> list[tuple[str, str | None]]:
    """Pair players ranked best first: pairs (higher-ranked, lower-ranked) by board, then the
    bye as ``(player, None)``. See the module docstring for the criteria.

    >>> pair_round(["a", "b", "c", "d"], dict.fromkeys("abcd", 0.0), {}, {})
    [('a', 'c'), ('b', 'd')]
    """
    m = len(order)
    if m < 2:
        return [(p, None) for p in order]
    index = {p: i for i, p in enumerate(order)}
    met = frozenset(
        (index[x], index[y], count)
        for pair, count in meetings.items()
        if count and len(pair) == 2 and all(p in index for p in pair)
        for x, y in [sorted(pair, key=index.__getitem__)]
    )
    mate = _pair_indices(
        tuple(round(2 * scores[p]) for p in order),
        met,
        tuple(byes.get(p, 0) for p in order),
    )
    out: list[tuple[str, str | None]] = [
        (order[i], order[mate[i]]) for i in range(m) if i < mate[i] < m
    ]
    if m % 2:
        out.append((order[mate[m]], None))
    return out


@functools.lru_cache(maxsize=256)
def _pair_indices(
    half_points: tuple[int, ...], met: frozenset[tuple[int, int, int]], byes: tuple[int, ...]
) -> tuple[int, ...]:
    """The matching for players ``0 .. m-1`` (ranked), vertex ``m`` being the bye if m is odd.

    Pure and deterministic, so it is memoised: replanning a Swiss event recomputes every
    earlier round from the same inputs, and only the newest round costs a matching.
    """
    m = len(half_points)
    bye = m if m % 2 else -1
    meetings = {(i, j): count for i, j, count in met}
    group: dict[int, list[int]] = {}
    for i, h in enumerate(half_points):
        group.setdefault(h, []).append(i)
    where = {i: (members.index(i), len(members)) for members in group.values() for i in members}
    costs: list[tuple[int, int, tuple[int, ...]]] = []
    for i in range(m):
        pi, gi = where[i]
        for j in range(i + 1, m):
            pj = where[j][0]
            gap = (half_points[i] - half_points[j]) ** 2
            shape = abs(2 * (pj - pi) - gi) if gap == 0 else (gi - 1 - pi) + pj
            costs.append((i, j, (meetings.get((i, j), 0), 0, 0, gap, shape)))
        if bye >= 0:
            costs.append((i, bye, (0, byes[i], m - 1 - i, 0, 0)))
    mate = max_weight_matching(m + (bye >= 0), _weights(costs, (m + 1) // 2))
    if any(v < 0 for v in mate):
        raise AssertionError("Swiss pairing left a player unpaired")
    return tuple(mate)


def _weights(
    costs: Sequence[tuple[int, int, tuple[int, ...]]], edges_in_matching: int
) -> list[tuple[int, int, int]]:
    """Fold tiered costs into positive weights whose maximum matching is lexicographically
    cheapest: each tier's scale exceeds the largest total all later tiers can reach."""
    tiers = len(costs[0][2])
    top = [max(c[2][t] for c in costs) for t in range(tiers)]
    scale = [1] * tiers
    reach = 0
    for t in reversed(range(tiers)):
        scale[t] = reach + 1
        reach += edges_in_matching * top[t] * scale[t]
    total = {(i, j): sum(v * s for v, s in zip(c, scale, strict=True)) for i, j, c in costs}
    ceiling = edges_in_matching * max(total.values()) + 1
    return [(i, j, ceiling - cost) for (i, j), cost in total.items()]


@dataclass(frozen=True, slots=True)
class Swiss:
    """``rounds`` rounds of score-group pairing without rematches."""

    rounds: int
    duplicate: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.rounds, int) or isinstance(self.rounds, bool) or self.rounds < 1:
            raise FormatError(f"swiss: rounds must be a positive int, not {self.rounds!r}")
        check_bool("swiss", "duplicate", self.duplicate)

    @property
    def name(self) -> str:
        return "swiss"

    def options(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "duplicate": self.duplicate}

    def plan(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None = None,
        withdrawn: Collection[str] = (),
        seed: int = 0,
    ) -> Plan:
        """Every round paired so far, and the next one once the last is settled."""
        ctx = Context(participants, results, withdrawn, seed, self.duplicate)
        people = ctx.participants
        pairings: list[Pairing] = []
        rounds: list[BracketRound] = []
        dropped: set[str] = set()
        finished = True
        for r in range(1, self.rounds + 1):
            this_round = self._pair(r, ctx, pairings, dropped)
            pairings.extend(this_round)
            rounds.append(BracketRound(r, f"Round {r}", tuple(p.key for p in this_round)))
            if not all(p.is_settled for p in this_round):
                finished = False
                break
            for p in this_round:
                if p.status is Status.WALKOVER and p.loser is not None:
                    dropped.add(p.loser)
        ctx.check_all_used()
        standings = rank(tally(people, pairings, BYE_POINTS), CRITERIA, ctx.out)
        return Plan(
            self.name,
            self.options(),
            people,
            ctx.withdrawn,
            tuple(pairings),
            standings,
            (BracketSection("rounds", tuple(rounds)),),
            finished,
        )

    def _pair(
        self, r: int, ctx: Context, earlier: Sequence[Pairing], dropped: set[str]
    ) -> list[Pairing]:
        people = ctx.participants
        tallies = tally(people, earlier, BYE_POINTS)
        active = [p for p in people if p not in dropped]
        order = sorted(active, key=lambda p: (-tallies[p].score, ctx.seed_of[p]))
        meetings: Counter[frozenset[str]] = Counter()
        seat_a: Counter[str] = Counter()
        for p in earlier:
            if p.a is not None and p.b is not None:
                meetings[frozenset((p.a, p.b))] += 1
                seat_a[p.a] += 1
        scores = {p: tallies[p].score for p in people}
        byes = {p: tallies[p].byes for p in people}
        out: list[Pairing] = []
        board = 0
        for x, y in pair_round(order, scores, meetings, byes):
            if y is None:
                out.append(ctx.bye(f"R{r}-bye", "rounds", r, x))
                continue
            board += 1
            if seat_a[x] != seat_a[y]:
                a, b = (x, y) if seat_a[x] < seat_a[y] else (y, x)
            else:
                a, b = (x, y) if r % 2 else (y, x)
            out.append(ctx.pairing(f"R{r}-{board}", "rounds", r, a, b, decisive=False))
        return out
