"""Games and matches: who deals, which deck, how deals add up to a game and games to a match.

Two ways of scoring games over a match (``RuleSet.match_scoring``): ``games``, one game after
another (:func:`add_deal` folds a deal into the game in progress), and ``hollywood``, every game
of the match scored at once from the same deals (:class:`HollywoodScore`).

Randomness comes only from the match seed: the first dealer is a seeded cut (lowest card deals)
and every deal's deck is derived from ``(seed, game, deal)``, so a match replays exactly and a
second match on the same seed sees the same deals (duplicate play).

>>> deal_deck(42, 0, 0) == deal_deck(42, 0, 0), deal_deck(42, 0, 0) == deal_deck(42, 0, 1)
(True, False)
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.cards import CARDS, Card
from arena.rules.hand import DealResult
from arena.rules.ruleset import RuleSet
from arena.rules.scoring import GameScore

__all__ = [
    "Cut",
    "HollywoodScore",
    "add_deal",
    "cut_for_deal",
    "deal_deck",
    "first_dealer",
    "games_to_win",
]


def _rng(seed: int | str, *parts: object) -> random.Random:
    # String seeds hash with SHA-512 inside random.Random: stable across runs and platforms.
    return random.Random("gin-arena:" + ":".join(str(p) for p in (seed, *parts)))


def deal_deck(seed: int | str, game: int, deal: int) -> tuple[Card, ...]:
    """The deck order of deal ``deal`` of game ``game`` (both from 0) of a match."""
    deck = list(CARDS)
    _rng(seed, "deck", game, deal).shuffle(deck)
    return tuple(deck)


@dataclass(frozen=True, slots=True)
class Cut:
    """The seeded cut for the first deal: the cards each seat cut, and who deals."""

    cards: tuple[tuple[Card, Card], ...]
    dealer: int


def cut_for_deal(seed: int | str) -> Cut:
    """Each seat cuts a card; the lower rank deals; equal ranks cut again."""
    rng = _rng(seed, "cut")
    rounds = []
    while True:
        a, b = rng.sample(CARDS, 2)
        rounds.append((a, b))
        if a % 13 != b % 13:
            return Cut(tuple(rounds), 0 if a % 13 < b % 13 else 1)


def first_dealer(seed: int | str, game: int) -> int:
    """Dealer of a game's first deal: the cut for game 0, then alternating game by game."""
    return cut_for_deal(seed).dealer ^ (game & 1)


def games_to_win(rules: RuleSet) -> int:
    """Games needed to win the match (a majority of ``best_of``)."""
    return rules.best_of // 2 + 1


def add_deal(rules: RuleSet, score: GameScore, deal: DealResult) -> GameScore:
    """Fold one deal into a game's score: misknock penalties first, then the hand's points."""
    for seat in (0, 1):
        score = score.add(seat, deal.penalties[seat], rules.target)
    winner = deal.winner
    if winner is not None:
        score = score.add(winner, deal.points, rules.target).won_hand(winner)
    return GameScore(score.points, score.hands_won, score.reached_first, score.hands_played + 1)


@dataclass(frozen=True, slots=True)
class HollywoodScore:
    """Hollywood scoring: ``best_of`` games (three in the seeds) scored at once, deal by deal.

    A hand win scores in every open game in which its winner has already won a hand, and in
    the first open game in which they have not (seed 004: "in the first column in which he has
    not yet scored"; seed 000: the first win in game one, the second in games one and two, the
    third and later in all three). So a win always scores in some open game: a seat shut out
    of a game that has closed enters the next open one. Misknock penalty points go to the
    earliest open game. A game closes when a seat reaches the target in it and is settled like
    any game (:func:`final_totals`: game bonus, box bonus for the hands won *in that game*,
    shutout); the match is over when every game is closed. Games close in order (a game never
    holds fewer points for a seat than the next one), so the earliest open game is "the game in
    progress" to which a deal belongs.

    >>> from arena.rules.scoring import HandResult, Outcome, Role
    >>> win = DealResult(HandResult(Outcome.GIN, Role.KNOCKER, 30), knocker=0)
    >>> h = HollywoodScore.new(RuleSet(best_of=3))
    >>> [g.points for g in h.add(RuleSet(), win).add(RuleSet(), win).games]
    [(60, 0), (30, 0), (0, 0)]
    """

    games: tuple[GameScore, ...]
    #: Hands won so far by each seat, over the whole match.
    hand_wins: tuple[int, int] = (0, 0)

    @classmethod
    def new(cls, rules: RuleSet) -> HollywoodScore:
        """The empty score sheet: ``best_of`` games, all open."""
        return cls((GameScore(),) * rules.best_of)

    def open_games(self, target: int) -> list[int]:
        """Indices of the games nobody has reached the target in."""
        return [i for i, g in enumerate(self.games) if not g.over(target)]

    def current(self, target: int) -> int | None:
        """The earliest open game (the one a deal is recorded under), or None when all closed."""
        for i, g in enumerate(self.games):
            if not g.over(target):
                return i
        return None

    def add(self, rules: RuleSet, deal: DealResult) -> HollywoodScore:
        """Fold one deal into every open game it scores in."""
        target = rules.target
        open_now = self.open_games(target)
        if not open_now:
            raise ValueError("every game of the Hollywood match is over")
        games = list(self.games)
        first = open_now[0]
        for seat in (0, 1):
            games[first] = games[first].add(seat, deal.penalties[seat], target)
        wins = [self.hand_wins[0], self.hand_wins[1]]
        winner = deal.winner
        if winner is not None:
            wins[winner] += 1
            entered = [i for i in open_now if games[i].hands_won[winner]]
            entered += [i for i in open_now if not games[i].hands_won[winner]][:1]
            for i in entered:
                games[i] = games[i].add(winner, deal.points, target).won_hand(winner)
        for i in open_now:
            g = games[i]
            games[i] = GameScore(g.points, g.hands_won, g.reached_first, g.hands_played + 1)
        return HollywoodScore(tuple(games), (wins[0], wins[1]))

    def scored_in(self, before: HollywoodScore) -> tuple[int, ...]:
        """The games whose hand points changed from ``before`` to this sheet."""
        return tuple(i for i, (a, b) in enumerate(zip(before.games, self.games, strict=True))
                     if a.points != b.points)  # fmt: skip
