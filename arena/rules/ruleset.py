"""The rule set: every number and choice of RULES.md as a field of one frozen value.

A rule set is validated when it is made (a bad value raises :class:`RuleSetError`, never falls
back to a default), travels with every match record, and round-trips through a plain dict.

>>> RuleSet().knock_limit, RuleSet.straight().knock_limit, RuleSet.oklahoma().target
(10, 0, 150)
>>> RuleSet.from_dict({"gin_bonus": 20}).gin_bonus
20
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar

__all__ = [
    "DeadHandDealer",
    "MatchScoring",
    "MisknockPolicy",
    "NextDealer",
    "RuleSet",
    "RuleSetError",
]


class RuleSetError(ValueError):
    """A rule set field has an unknown name or an invalid value."""


class MisknockPolicy(StrEnum):
    """What happens after a knock whose deadwood is over the limit."""

    OPEN_HAND = "open_hand"
    OPPONENT_MAY_ACCEPT = "opponent_may_accept"
    PENALTY_POINTS = "penalty_points"


class NextDealer(StrEnum):
    """Who deals after a scored hand."""

    ALTERNATE = "alternate"
    LOSER = "loser"
    WINNER = "winner"


class DeadHandDealer(StrEnum):
    """Who deals after a dead hand."""

    SAME = "same"
    OTHER = "other"


class MatchScoring(StrEnum):
    """How games are scored over a match."""

    #: One game after another, each to the target; a majority of ``best_of`` wins the match.
    GAMES = "games"
    #: Hollywood: ``best_of`` games scored at once from the same deals (three in the seeds).
    #: A win scores in every open game its winner has won a deal in, and in the first open
    #: game they have not (the first win in game one, the second in one and two, ...).
    HOLLYWOOD = "hollywood"


_ENUM_FIELDS: dict[str, type[StrEnum]] = {
    "misknock": MisknockPolicy,
    "next_dealer": NextDealer,
    "dead_hand_dealer": DeadHandDealer,
    "match_scoring": MatchScoring,
}


@dataclass(frozen=True, slots=True)
class RuleSet:
    """Gin Rummy rules; defaults are the arena's standard game (RULES.md)."""

    #: Deadwood allowed when knocking; 0 means gin only (straight gin).
    knock_limit: int = 10
    #: Oklahoma: the first upcard's deadwood value sets each hand's knock limit (face cards
    #: 10; an ace means gin only) in place of ``knock_limit``.
    upcard_sets_knock_limit: bool = False
    #: Oklahoma: a spade first upcard doubles every score of the hand, bonuses included.
    spade_upcard_doubles: bool = False
    #: House rule (seed 004): a spade on top of the discard pile when a hand is knocked (the
    #: card the knock card is laid on; for big gin, the top when it is declared) doubles that
    #: hand's score, bonuses included; with ``spade_upcard_doubles`` the two multiply.
    spade_discard_doubles: bool = False
    gin_bonus: int = 25
    undercut_bonus: int = 25
    #: Equal deadwood is an undercut (True) or a tie scoring nothing (False, early rules).
    undercut_on_tie: bool = True
    #: Bonus for big gin (eleven cards melded); ``None`` disables big gin.
    big_gin_bonus: int | None = 31
    #: Big gin after taking the top discard (True: the seeds' "draw" is either draw, from the
    #: stock or the discard pile, as their turn rules use the word); False: only after a
    #: stock draw.
    big_gin_after_taking_discard: bool = True
    #: Gin Rummy Association rule: the card just taken from the discard pile may be discarded.
    allow_discard_of_taken_card: bool = False
    #: The hand is dead when a discard leaves this many stock cards or fewer.
    dead_hand_stock: int = 2
    #: Before a hand dies, the opponent may take that discard, only to knock or go gin.
    last_discard_chance: bool = False
    dead_hand_dealer: DeadHandDealer = DeadHandDealer.SAME
    next_dealer: NextDealer = NextDealer.ALTERNATE
    misknock: MisknockPolicy = MisknockPolicy.OPEN_HAND
    #: Points to the opponent under the ``penalty_points`` misknock policy.
    misknock_penalty: int = 25
    #: Game target (cumulative hand points).
    target: int = 250
    #: Bonus to the player who reached the target first.
    game_bonus: int = 100
    #: The game bonus is multiplied by this when the loser scored nothing (shutout).
    shutout_multiplier: int = 2
    #: On a shutout the winner's whole final total (hand points and both bonuses) is
    #: multiplied by this (seed 000: blitz doubles the winner's score); 1 leaves it alone.
    shutout_total_multiplier: int = 1
    #: Box (line) bonus per hand won, for each player, at the end of a game.
    box_bonus: int = 25
    #: Games in a match (first to a majority wins).
    best_of: int = 5
    #: ``games`` (one after another) or ``hollywood`` (``best_of`` games scored at once).
    match_scoring: MatchScoring = MatchScoring.GAMES
    #: Time a bot has for each request, milliseconds.
    deadline_ms: int = 1000
    #: Faults a bot may commit in a match before it forfeits.
    max_strikes: int = 3
    #: Arena safeguard, not a rule of the seeds: a deal of this many actions ends as a dead
    #: hand. Passing cards back and forth through the discard pile never touches the stock,
    #: so without a cap two bots could keep a deal going forever. A normal deal has ~60-80.
    max_actions_per_deal: int = 400

    PRESETS: ClassVar[tuple[str, ...]] = ("standard", "oklahoma", "straight")

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _ENUM_FIELDS:
                enum_type = _ENUM_FIELDS[f.name]
                try:
                    object.__setattr__(self, f.name, enum_type(value))
                except ValueError:
                    allowed = ", ".join(m.value for m in enum_type)
                    raise RuleSetError(f"{f.name}={value!r} is not one of: {allowed}") from None
            elif f.type in ("bool",):
                if not isinstance(value, bool):
                    raise RuleSetError(f"{f.name}={value!r} must be true or false")
            elif f.name == "big_gin_bonus":
                if value is not None:
                    _check_int(f.name, value, 0)
            else:
                _check_int(f.name, value, _MINIMUM.get(f.name, 0))
        if self.knock_limit > 100:
            raise RuleSetError(f"knock_limit={self.knock_limit} is more than any hand's deadwood")
        if self.best_of % 2 == 0:
            raise RuleSetError(f"best_of={self.best_of} must be odd so a match has a winner")
        if self.dead_hand_stock > 29:
            raise RuleSetError(f"dead_hand_stock={self.dead_hand_stock} must be at most 29")

    @classmethod
    def standard(cls, **overrides: Any) -> RuleSet:
        """The arena's default rules."""
        return cls.from_dict(overrides)

    @classmethod
    def oklahoma(cls, **overrides: Any) -> RuleSet:
        """Oklahoma Gin: the upcard sets the knock limit, spades double, target 150."""
        return cls.from_dict(
            {
                "upcard_sets_knock_limit": True,
                "spade_upcard_doubles": True,
                "target": 150,
                **overrides,
            }
        )

    @classmethod
    def straight(cls, **overrides: Any) -> RuleSet:
        """Straight gin: no knocking, only gin ends a hand."""
        return cls.from_dict({"knock_limit": 0, **overrides})

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> RuleSet:
        """A preset by name: ``standard``, ``oklahoma`` or ``straight``."""
        if name not in cls.PRESETS:
            raise RuleSetError(f"unknown rule set preset {name!r}; choose one of {cls.PRESETS}")
        factory = getattr(cls, name)
        result: RuleSet = factory(**overrides)
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RuleSet:
        """Build from a mapping, rejecting unknown field names."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise RuleSetError(f"unknown rule set field(s): {', '.join(unknown)}")
        try:
            return cls(**data)
        except TypeError as exc:  # pragma: no cover - guarded by the check above
            raise RuleSetError(str(exc)) from None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of every field."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.value if isinstance(value, StrEnum) else value
        return out

    def replace(self, **changes: Any) -> RuleSet:
        """A copy with some fields changed (validated; unknown names raise RuleSetError)."""
        return type(self).from_dict({**self.to_dict(), **changes})

    @property
    def big_gin_allowed(self) -> bool:
        """Whether big gin ends a hand under these rules."""
        return self.big_gin_bonus is not None

    def knock_limit_for(self, upcard_value: int) -> int:
        """The knock limit of a hand whose first upcard has this deadwood value."""
        if not self.upcard_sets_knock_limit:
            return self.knock_limit
        return 0 if upcard_value == 1 else upcard_value


_MINIMUM = {
    "target": 1,
    "best_of": 1,
    "deadline_ms": 1,
    "max_strikes": 1,
    "shutout_multiplier": 1,
    "shutout_total_multiplier": 1,
    "max_actions_per_deal": 20,
}


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleSetError(f"{name}={value!r} must be an integer")
    if value < minimum:
        raise RuleSetError(f"{name}={value} must be at least {minimum}")
