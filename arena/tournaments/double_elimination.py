"""Double elimination: out after two losses; winners and losers brackets and a grand final.

The winners bracket is the seeded single-elimination bracket (byes to the top seeds). Its
losers drop into the losers bracket: round 1 losers meet each other in ``L1``; the losers of
winners round ``j`` meet the survivors of the losers bracket in ``L{2j-2}``, in reversed or
half-swapped order to delay rematches; the odd losers rounds halve the field. The
winners-bracket champion (seat a) meets the losers-bracket champion (seat b) in ``GF1``; with
``reset`` a second final ``GF2`` is played only if the losers-bracket champion won ``GF1`` (else
``GF2`` is ``skipped``). Every participant but the champion loses twice, so there are ``2n-2``
pairings that are not byes, or ``2n-1`` when the reset is played.

Keys: ``W{round}-{index}``, ``L{round}-{index}``, ``GF1``, ``GF2``. Placings: champion 1, grand
final loser 2, losers final loser 3, and so on back through the losers rounds.

>>> plan = DoubleElimination().plan(["a", "b"])
>>> [(p.key, p.status.value) for p in plan.pairings]
[('W1-1', 'ready'), ('GF1', 'waiting'), ('GF2', 'waiting')]
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournaments import knockout
from arena.tournaments._common import Context, check_bool
from arena.tournaments.knockout import Node, from_seed, loser_of, seeding_order, winner_of
from arena.tournaments.model import BracketRound, BracketSection, MatchResult, Pairing, Plan
from arena.tournaments.single_elimination import bracket_size

__all__ = ["DoubleElimination"]


def _drop_order(j: int, m: int) -> list[int]:
    """Which winners-round-``j`` pairing's loser enters each of the ``m`` losers slots."""
    if j % 2 == 0:
        return [m - i for i in range(m)]
    return [(i + m // 2) % m + 1 for i in range(m)]


@dataclass(frozen=True, slots=True)
class DoubleElimination:
    """Knockout with a second life: a losers bracket and a grand final (with ``reset``)."""

    reset: bool = True
    duplicate: bool = False

    def __post_init__(self) -> None:
        check_bool("double_elimination", "reset", self.reset)
        check_bool("double_elimination", "duplicate", self.duplicate)

    @property
    def name(self) -> str:
        return "double_elimination"

    def options(self) -> dict[str, Any]:
        return {"reset": self.reset, "duplicate": self.duplicate}

    def nodes(self, n: int) -> tuple[Node, ...]:
        """The whole bracket for ``n`` participants, in play order within each section."""
        return _nodes(n, self.reset)

    def plan(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None = None,
        withdrawn: Collection[str] = (),
        seed: int = 0,
    ) -> Plan:
        """Plan both brackets and the final from the results so far."""
        ctx = Context(participants, results, withdrawn, seed, self.duplicate)
        return knockout.plan(self, self.nodes(len(ctx.participants)), ctx, _sections)


@functools.lru_cache(maxsize=64)
def _nodes(n: int, reset: bool) -> tuple[Node, ...]:
    """The bracket depends only on the field size and the reset option, so it is built once."""
    size = bracket_size(n)
    depth = size.bit_length() - 1
    order = seeding_order(size)
    nodes: list[Node] = []
    for r in range(1, depth + 1):
        for i in range(1, (size >> r) + 1):
            if r == 1:
                sources = (from_seed(order[2 * i - 2]), from_seed(order[2 * i - 1]))
            else:
                sources = (winner_of(f"W{r - 1}-{2 * i - 1}"), winner_of(f"W{r - 1}-{2 * i}"))
            nodes.append(Node(f"W{r}-{i}", "winners", r, sources))
    if depth >= 2:
        for i in range(1, (size >> 2) + 1):
            pair = (loser_of(f"W1-{2 * i - 1}"), loser_of(f"W1-{2 * i}"))
            nodes.append(Node(f"L1-{i}", "losers", 1, pair, loser_level=1))
    for j in range(2, depth + 1):
        m = size >> j
        drop, feed = 2 * j - 2, 2 * j - 3
        for i, w in enumerate(_drop_order(j, m), start=1):
            pair = (winner_of(f"L{feed}-{i}"), loser_of(f"W{j}-{w}"))
            nodes.append(Node(f"L{drop}-{i}", "losers", drop, pair, loser_level=drop))
        if j < depth:
            for i in range(1, m // 2 + 1):
                pair = (winner_of(f"L{drop}-{2 * i - 1}"), winner_of(f"L{drop}-{2 * i}"))
                nodes.append(Node(f"L{drop + 1}-{i}", "losers", drop + 1, pair, drop + 1))
    champions = (
        winner_of(f"W{depth}-1"),
        loser_of("W1-1") if depth == 1 else winner_of(f"L{2 * depth - 2}-1"),
    )
    out, top = 2 * depth - 1, 2 * depth
    nodes.append(Node("GF1", "final", 1, champions, out, top, resettable=reset))
    if reset:
        nodes.append(Node("GF2", "final", 2, champions, out, top, reset_of="GF1"))
    return tuple(nodes)


def _sections(pairings: Sequence[Pairing]) -> tuple[BracketSection, ...]:
    names = {
        "winners": ("Winners round {}", "Winners final"),
        "losers": ("Losers round {}", "Losers final"),
        "final": ("Grand final", "Grand final reset"),
    }
    sections: list[BracketSection] = []
    for section, (each, last) in names.items():
        keys: dict[int, list[str]] = {}
        for p in pairings:
            if p.section == section:
                keys.setdefault(p.round, []).append(p.key)
        if not keys:
            continue
        final_round = max(keys)
        rounds = []
        for r in sorted(keys):
            if section == "final":
                label = each if r == 1 else last
            else:
                label = last if r == final_round else each.format(r)
            rounds.append(BracketRound(r, label, tuple(keys[r])))
        sections.append(BracketSection(section, tuple(rounds)))
    return tuple(sections)
