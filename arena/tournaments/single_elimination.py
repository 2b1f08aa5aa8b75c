"""Single elimination: a seeded knockout bracket, byes to the top seeds, optional third place.

Participants come best seed first. The bracket has the next power of two of slots, filled in
the standard order (1 v 16, 8 v 9, 4 v 13, ...); the missing seeds are byes, so they fall to
the top seeds. Keys: ``R{round}-{index}`` (the final is the last round's ``-1``) and ``3P`` for
the third-place match (only with four or more participants: there must be two semi-final
losers). Placings: champion 1, runner-up 2, then third-place winner 3 and loser 4, or both
semi-final losers 3; earlier losers share the rank of their round.

>>> plan = SingleElimination().plan(["s1", "s2", "s3"])
>>> [(p.key, p.a, p.b, p.status.value) for p in plan.pairings]
[('R1-1', 's1', None, 'bye'), ('R1-2', 's2', 's3', 'ready'), ('R2-1', 's1', None, 'waiting')]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournaments import knockout
from arena.tournaments._common import Context, check_bool
from arena.tournaments.knockout import Node, from_seed, loser_of, seeding_order, winner_of
from arena.tournaments.model import BracketRound, BracketSection, MatchResult, Pairing, Plan

__all__ = ["SingleElimination", "bracket_size", "round_name"]


def bracket_size(n: int) -> int:
    """The smallest power of two holding ``n`` participants.

    >>> bracket_size(5), bracket_size(8), bracket_size(2)
    (8, 8, 2)
    """
    size = 1
    while size < n:
        size *= 2
    return size


def round_name(players_left: int) -> str:
    """Final, Semi-finals, Quarter-finals, then Round of N."""
    return {2: "Final", 4: "Semi-finals", 8: "Quarter-finals"}.get(
        players_left, f"Round of {players_left}"
    )


@dataclass(frozen=True, slots=True)
class SingleElimination:
    """Knockout: lose once and you are out."""

    third_place: bool = False
    duplicate: bool = False

    def __post_init__(self) -> None:
        check_bool("single_elimination", "third_place", self.third_place)
        check_bool("single_elimination", "duplicate", self.duplicate)

    @property
    def name(self) -> str:
        return "single_elimination"

    def options(self) -> dict[str, Any]:
        return {"third_place": self.third_place, "duplicate": self.duplicate}

    def nodes(self, n: int) -> tuple[Node, ...]:
        """The bracket for ``n`` participants, in play order."""
        size = bracket_size(n)
        depth = size.bit_length() - 1
        third = self.third_place and n >= 4
        order = seeding_order(size)
        nodes: list[Node] = []
        for r in range(1, depth + 1):
            count = size >> r
            for i in range(1, count + 1):
                if r == 1:
                    sources = (from_seed(order[2 * i - 2]), from_seed(order[2 * i - 1]))
                else:
                    sources = (winner_of(f"R{r - 1}-{2 * i - 1}"), winner_of(f"R{r - 1}-{2 * i}"))
                final = r == depth
                semi_to_third = third and r == depth - 1
                nodes.append(
                    Node(
                        f"R{r}-{i}",
                        "main",
                        r,
                        sources,
                        loser_level=None if semi_to_third else 2 * r,
                        winner_level=2 * depth + 1 if final else None,
                    )
                )
        if third:
            semis = (loser_of(f"R{depth - 1}-1"), loser_of(f"R{depth - 1}-2"))
            level = 2 * (depth - 1)
            nodes.append(Node("3P", "third_place", depth, semis, level, level + 1))
        return tuple(nodes)

    def plan(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None = None,
        withdrawn: Collection[str] = (),
        seed: int = 0,
    ) -> Plan:
        """Plan the bracket from the results so far (see the module docstring)."""
        ctx = Context(participants, results, withdrawn, seed, self.duplicate)
        n = len(ctx.participants)
        return knockout.plan(self, self.nodes(n), ctx, lambda pairings: _sections(n, pairings))


def _sections(n: int, pairings: Sequence[Pairing]) -> tuple[BracketSection, ...]:
    """The main bracket's rounds (named by players left), then the third-place match."""
    size = bracket_size(n)
    depth = size.bit_length() - 1
    main = tuple(
        BracketRound(
            r,
            round_name(size >> (r - 1)),
            tuple(p.key for p in pairings if p.section == "main" and p.round == r),
        )
        for r in range(1, depth + 1)
    )
    sections = [BracketSection("main", main)]
    if any(p.key == "3P" for p in pairings):
        third = BracketRound(depth, "Third place", ("3P",))
        sections.append(BracketSection("third_place", (third,)))
    return tuple(sections)
