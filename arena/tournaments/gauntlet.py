"""Gauntlet: one challenger against each member of a field, once.

The challenger defaults to the first participant; the field is everyone else, in order. Pairing
``G{i}`` meets the i-th field member in round ``i``, the challenger in seat a for odd ``i``
and seat b for even ``i`` (with ``duplicate`` both seats anyway). All pairings are ready at
once; the rounds only order them. Standings rank by percentage score (so the challenger's
many pairings and a field member's one compare fairly), then game and point difference.

>>> plan = Gauntlet(challenger="new").plan(["old1", "new", "old2"])
>>> [(p.key, p.a, p.b) for p in plan.pairings]
[('G1', 'new', 'old1'), ('G2', 'old2', 'new')]
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.tournaments._common import Context, check_bool
from arena.tournaments.model import (
    BracketRound,
    BracketSection,
    FormatError,
    MatchResult,
    Pairing,
    Plan,
    PlanError,
)
from arena.tournaments.standings import GAME_DIFFERENCE, PERCENTAGE, POINT_DIFFERENCE, rank, tally

__all__ = ["Gauntlet"]


@dataclass(frozen=True, slots=True)
class Gauntlet:
    """``challenger`` (default: the first participant) plays every other participant once."""

    challenger: str | None = None
    duplicate: bool = False

    def __post_init__(self) -> None:
        who = self.challenger
        if who is not None and (not isinstance(who, str) or not who):
            raise FormatError(f"gauntlet: challenger must be a participant id, not {who!r}")
        check_bool("gauntlet", "duplicate", self.duplicate)

    @property
    def name(self) -> str:
        return "gauntlet"

    def options(self) -> dict[str, Any]:
        return {"challenger": self.challenger, "duplicate": self.duplicate}

    def plan(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None = None,
        withdrawn: Collection[str] = (),
        seed: int = 0,
    ) -> Plan:
        """The challenger's pairing with every field member, settled as far as possible."""
        ctx = Context(participants, results, withdrawn, seed, self.duplicate)
        people = ctx.participants
        challenger = people[0] if self.challenger is None else self.challenger
        if challenger not in people:
            raise PlanError(f"gauntlet: challenger {challenger!r} is not a participant")
        field = [p for p in people if p != challenger]
        pairings: list[Pairing] = []
        for i, opponent in enumerate(field, start=1):
            a, b = (challenger, opponent) if i % 2 else (opponent, challenger)
            pairings.append(ctx.pairing(f"G{i}", "gauntlet", i, a, b, decisive=False))
        ctx.check_all_used()
        criteria = (GAME_DIFFERENCE, POINT_DIFFERENCE)
        standings = rank(tally(people, pairings), criteria, ctx.out, lead=PERCENTAGE)
        rounds = tuple(BracketRound(p.round, f"Round {p.round}", (p.key,)) for p in pairings)
        return Plan(
            self.name,
            self.options(),
            people,
            ctx.withdrawn,
            tuple(pairings),
            standings,
            (BracketSection("gauntlet", rounds),),
            all(p.is_settled for p in pairings),
        )
