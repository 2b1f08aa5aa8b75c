"""Scoring: a hand's outcome and points, a game to the target, and a match of games.

Everything here is a pure function of values: a :class:`HandResult` from a showdown, a
:class:`GameScore` folded over hands, and the bonuses that settle a game.

>>> r = score_showdown(RuleSet(), Outcome.KNOCK, knocker_deadwood=8, defender_deadwood=8)
>>> r.outcome.value, r.winner.value, r.points
('undercut', 'defender', 25)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum

from arena.cards import Card
from arena.rules.melds import Layoff
from arena.rules.ruleset import NextDealer, RuleSet

__all__ = [
    "GameResult",
    "GameScore",
    "HandResult",
    "Outcome",
    "Role",
    "final_totals",
    "score_showdown",
]


class Outcome(StrEnum):
    """How a hand ended."""

    KNOCK = "knock"
    UNDERCUT = "undercut"
    GIN = "gin"
    BIG_GIN = "big_gin"
    DEAD = "dead"
    TIE = "tie"


class Role(StrEnum):
    """The two sides of a showdown."""

    KNOCKER = "knocker"
    DEFENDER = "defender"


@dataclass(frozen=True, slots=True)
class HandResult:
    """The settlement of a showdown (or a dead hand), relative to knocker and defender."""

    outcome: Outcome
    winner: Role | None
    points: int
    knocker_deadwood: int = 0
    defender_deadwood: int = 0
    #: Points multiplier of the hand (2 for an Oklahoma spade upcard).
    multiplier: int = 1
    knocker_melds: tuple[tuple[Card, ...], ...] = ()
    knocker_deadwood_cards: tuple[Card, ...] = ()
    defender_melds: tuple[tuple[Card, ...], ...] = ()
    defender_deadwood_cards: tuple[Card, ...] = ()
    layoffs: tuple[Layoff, ...] = field(default=())


def score_showdown(
    rules: RuleSet,
    kind: Outcome,
    *,
    knocker_deadwood: int,
    defender_deadwood: int,
    multiplier: int = 1,
) -> HandResult:
    """Outcome, winner and points of a knock, gin or big gin (RULES.md scoring table)."""
    kdw, ddw = knocker_deadwood, defender_deadwood
    if kind is Outcome.GIN:
        outcome, winner, points = Outcome.GIN, Role.KNOCKER, ddw + rules.gin_bonus
    elif kind is Outcome.BIG_GIN:
        assert rules.big_gin_bonus is not None
        outcome, winner, points = Outcome.BIG_GIN, Role.KNOCKER, ddw + rules.big_gin_bonus
    elif ddw > kdw:
        outcome, winner, points = Outcome.KNOCK, Role.KNOCKER, ddw - kdw
    elif ddw == kdw and not rules.undercut_on_tie:
        outcome, winner, points = Outcome.TIE, None, 0
    else:
        outcome, winner, points = Outcome.UNDERCUT, Role.DEFENDER, kdw - ddw + rules.undercut_bonus
    return HandResult(outcome, winner, points * multiplier, kdw, ddw, multiplier)


@dataclass(frozen=True, slots=True)
class GameScore:
    """A game in progress: cumulative hand points and hands won, per seat (0 and 1)."""

    points: tuple[int, int] = (0, 0)
    hands_won: tuple[int, int] = (0, 0)
    #: The seat that first reached the target, once one has.
    reached_first: int | None = None
    hands_played: int = 0

    def add(self, seat: int, points: int, target: int) -> GameScore:
        """Credit points to a seat (a hand's score or a misknock penalty)."""
        if points == 0:
            return self
        pts = list(self.points)
        pts[seat] += points
        reached = self.reached_first
        if reached is None and pts[seat] >= target:
            reached = seat
        return replace(self, points=(pts[0], pts[1]), reached_first=reached)

    def won_hand(self, seat: int) -> GameScore:
        """Count a hand won (for the box bonus)."""
        won = list(self.hands_won)
        won[seat] += 1
        return replace(self, hands_won=(won[0], won[1]))

    def over(self, target: int) -> bool:
        """Whether a seat has reached the target."""
        return self.reached_first is not None or max(self.points) >= target


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game: each seat's hand points, bonuses, final totals and the winner."""

    winner: int
    points: tuple[int, int]
    totals: tuple[int, int]
    game_bonus: tuple[int, int]
    box_bonus: tuple[int, int]
    hands_won: tuple[int, int]
    shutout: bool

    @property
    def net(self) -> int:
        """The payout of the game (seed 004): the winner's final total less the loser's."""
        return self.totals[self.winner] - self.totals[1 - self.winner]


def final_totals(rules: RuleSet, score: GameScore) -> GameResult:
    """Settle a finished game: game bonus (doubled on a shutout), box bonus, the winner.

    On a shutout the game bonus is multiplied by ``shutout_multiplier`` and then the
    reacher's whole total by ``shutout_total_multiplier``. The winner is the higher final
    total (so the box bonus can beat the player who reached the target first); equal totals
    go to the player who reached the target first.

    >>> s = GameScore(points=(260, 0), hands_won=(5, 0), reached_first=0)
    >>> final_totals(RuleSet(), s).totals
    (585, 0)
    """
    reacher = score.reached_first
    if reacher is None:
        raise ValueError("the game is not over: nobody has reached the target")
    loser = 1 - reacher
    shutout = score.points[loser] == 0
    bonus = rules.game_bonus * (rules.shutout_multiplier if shutout else 1)
    game_bonus = (bonus, 0) if reacher == 0 else (0, bonus)
    box = (score.hands_won[0] * rules.box_bonus, score.hands_won[1] * rules.box_bonus)
    totals = (
        score.points[0] + game_bonus[0] + box[0],
        score.points[1] + game_bonus[1] + box[1],
    )
    if shutout and rules.shutout_total_multiplier != 1:
        scaled = totals[reacher] * rules.shutout_total_multiplier
        totals = (scaled, totals[1]) if reacher == 0 else (totals[0], scaled)
    if totals[0] != totals[1]:
        winner = 0 if totals[0] > totals[1] else 1
    else:
        winner = reacher
    return GameResult(winner, score.points, totals, game_bonus, box, score.hands_won, shutout)


def next_dealer(rules: RuleSet, dealer: int, winner: int | None, dead: bool) -> int:
    """The dealer of the next hand in a game."""
    if dead:
        return dealer if rules.dead_hand_dealer == "same" else 1 - dealer
    if winner is None or rules.next_dealer is NextDealer.ALTERNATE:
        return 1 - dealer
    if rules.next_dealer is NextDealer.WINNER:
        return winner
    return 1 - winner
