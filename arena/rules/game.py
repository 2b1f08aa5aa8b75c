"""Games and matches: who deals, which deck, how deals add up to a game and games to a match.

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

__all__ = ["Cut", "add_deal", "cut_for_deal", "deal_deck", "first_dealer", "games_to_win"]


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
