"""Meld arithmetic the house strategies share (the ``strong`` family of
:mod:`arena.bots.strategies` and :mod:`arena.bots.expert`): the cards that meld with a card, and
which melds to declare when knocking (among the least-deadwood arrangements of the hand, the one
that leaves the opponent the fewest lay-off spots)."""

from __future__ import annotations

from arena.cards import mask_to_cards
from arena.rules.melds import RANK_MASKS, best_arrangements

__all__ = ["fewest_layoff_spots", "neighbours"]


def neighbours(card: int) -> int:
    """Cards that would meld with ``card``: same rank, and one or two ranks away in its suit."""
    rank = card % 13
    base = card - rank
    m = RANK_MASKS[rank] & ~(1 << card)
    for d in (-2, -1, 1, 2):
        if 0 <= rank + d < 13:
            m |= 1 << (base + rank + d)
    return m


def fewest_layoff_spots(hand: int, live: int) -> list[list[str]] | None:
    """The melds to declare for ``hand`` (a card mask): among its least-deadwood arrangements,
    the one that leaves the fewest spots where a ``live`` card (one the opponent may hold) lays
    off; None when there is no choice to make."""
    options = best_arrangements(hand)
    if len(options) < 2:
        return None

    def spots(melds: tuple[int, ...]) -> int:
        total = 0
        for meld in melds:
            low = meld & -meld
            first = low.bit_length() - 1
            if meld & ~RANK_MASKS[first % 13] == 0:
                total += (RANK_MASKS[first % 13] & ~meld & live).bit_count()
            else:
                top = meld.bit_length() - 1
                if first % 13 > 0:
                    total += (live >> (first - 1)) & 1
                if top % 13 < 12:
                    total += (live >> (top + 1)) & 1
        return total

    best = min(options, key=lambda arr: spots(arr.melds))
    return [[str(c) for c in mask_to_cards(m)] for m in best.melds]
