"""A slow, obviously-correct reference for melds, deadwood, the best discard and lay-offs.

Nothing here shares code with :mod:`arena.rules.melds` beyond the card numbering: every meld of a
hand is listed by brute force, arrangements are found by a plain recursive search for disjoint
melds, and lay-offs by trying every subset of the defender's cards and every way to hang them on
the knocker's melds. It is exponential and only meant for cross-checking the fast engine.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from functools import lru_cache

from arena.cards import card_value

Meld = frozenset[int]


def value(cards: Iterable[int]) -> int:
    """Sum of deadwood values."""
    return sum(card_value(c) for c in cards)


def rank_of(card: int) -> int:
    return card % 13


def suit_of(card: int) -> int:
    return card // 13


def is_set(cards: Iterable[int]) -> bool:
    cs = list(cards)
    return 3 <= len(cs) <= 4 and len({rank_of(c) for c in cs}) == 1


def is_run(cards: Iterable[int]) -> bool:
    cs = sorted(cards)
    if len(cs) < 3 or len({suit_of(c) for c in cs}) != 1:
        return False
    ranks = [rank_of(c) for c in cs]
    return ranks == list(range(ranks[0], ranks[0] + len(ranks)))


def is_meld(cards: Iterable[int]) -> bool:
    cs = list(cards)
    return is_set(cs) or is_run(cs)


def all_melds(hand: Iterable[int]) -> list[Meld]:
    """Every meld (set or run of any length) made of cards of the hand."""
    cards = sorted(set(hand))
    melds: list[Meld] = []
    for r in range(13):
        same = [c for c in cards if rank_of(c) == r]
        for size in (3, 4):
            melds.extend(frozenset(combo) for combo in itertools.combinations(same, size))
    held = set(cards)
    for s in range(4):
        for lo in range(13):
            for hi in range(lo + 2, 13):
                run = [s * 13 + r for r in range(lo, hi + 1)]
                if all(c in held for c in run):
                    melds.append(frozenset(run))
                else:
                    break
    return melds


def arrangements(hand: Iterable[int]) -> Iterator[tuple[Meld, ...]]:
    """Every set of disjoint melds (including the empty one), each exactly once."""
    melds = sorted(all_melds(hand), key=sorted)

    def walk(
        start: int, used: frozenset[int], chosen: tuple[Meld, ...]
    ) -> Iterator[tuple[Meld, ...]]:
        yield chosen
        for i in range(start, len(melds)):
            m = melds[i]
            if not m & used:
                yield from walk(i + 1, used | m, (*chosen, m))

    yield from walk(0, frozenset(), ())


@lru_cache(maxsize=200_000)
def _deadwood(hand: frozenset[int]) -> int:
    best = value(hand)
    for chosen in arrangements(hand):
        melded = frozenset().union(*chosen) if chosen else frozenset()
        best = min(best, value(hand - melded))
    return best


def deadwood(hand: Iterable[int]) -> int:
    """Minimum deadwood over all arrangements."""
    return _deadwood(frozenset(hand))


def best_arrangements(hand: Iterable[int]) -> set[frozenset[Meld]]:
    """Every least-deadwood arrangement, with contiguous runs of one suit merged.

    Splitting a run in two changes nothing (deadwood or lay-offs), so arrangements are compared
    with each suit's touching runs joined into one.
    """
    cards = frozenset(hand)
    best = deadwood(cards)
    out: set[frozenset[Meld]] = set()
    for chosen in arrangements(cards):
        melded = frozenset().union(*chosen) if chosen else frozenset()
        if value(cards - melded) == best:
            out.add(merge_runs(chosen))
    return out


def merge_runs(melds: Iterable[Meld]) -> frozenset[Meld]:
    """Join runs of one suit that touch end to end."""
    sets = [m for m in melds if is_set(m)]
    runs = sorted((sorted(m) for m in melds if not is_set(m)), key=lambda r: r[0])
    merged: list[list[int]] = []
    for run in runs:
        if merged and suit_of(merged[-1][-1]) == suit_of(run[0]) and merged[-1][-1] + 1 == run[0]:
            merged[-1].extend(run)
        else:
            merged.append(list(run))
    return frozenset([*sets, *(frozenset(r) for r in merged)])


def best_discard_deadwood(hand: Iterable[int], exclude: Iterable[int] = ()) -> int:
    """Least deadwood left after discarding one card not in ``exclude``."""
    cards = frozenset(hand)
    banned = set(exclude)
    return min(deadwood(cards - {c}) for c in cards if c not in banned)


# --- lay-offs -------------------------------------------------------------------------------


def can_lay_off(cards: Iterable[int], knocker_melds: Iterable[Iterable[int]]) -> bool:
    """Whether all these defender cards can be hung on the knocker's melds at once.

    Each card goes onto one meld; every meld with its added cards must still be one meld (a set
    of at most four, or a run with no gap: chained lay-offs included).
    """
    cards = sorted(cards)
    melds = [frozenset(m) for m in knocker_melds]
    if not cards:
        return True
    options: list[list[int]] = []
    for card in cards:
        targets = [
            i
            for i, m in enumerate(melds)
            if (is_set(m) and rank_of(card) == rank_of(next(iter(m))))
            or (is_run(m) and suit_of(card) == suit_of(next(iter(m))))
        ]
        if not targets:
            return False
        options.append(targets)
    for assignment in itertools.product(*options):
        grown = [set(m) for m in melds]
        for card, target in zip(cards, assignment, strict=True):
            grown[target].add(card)
        if all(is_meld(g) for g in grown):
            return True
    return False


def layoff_deadwood(defender: Iterable[int], knocker_melds: Iterable[Iterable[int]]) -> int:
    """The defender's least deadwood: any own melds, any feasible lay-offs of the rest."""
    hand = frozenset(defender)
    melds = [frozenset(m) for m in knocker_melds]
    # Only cards of a set's rank or a run's suit can ever be laid off.
    candidates = sorted(
        c
        for c in hand
        if any(
            (is_set(m) and rank_of(c) == rank_of(next(iter(m))))
            or (is_run(m) and suit_of(c) == suit_of(next(iter(m))))
            for m in melds
        )
    )
    best = deadwood(hand)
    for size in range(1, len(candidates) + 1):
        for laid in itertools.combinations(candidates, size):
            rest = hand - frozenset(laid)
            # Laying off only lowers deadwood by the laid cards' values; skip hopeless subsets.
            if deadwood(rest) < best and can_lay_off(laid, melds):
                best = deadwood(rest)
    return best


def knocker_tiebreak_deadwood(knocker: Iterable[int], defender: Iterable[int]) -> int:
    """The defender's deadwood under the knocker's best arrangement (RULES.md showdown 1).

    Among the knocker's least-deadwood arrangements, the one that lets the defender lay off
    least, i.e. leaves the defender the most deadwood.
    """
    return max(layoff_deadwood(defender, arrangement) for arrangement in best_arrangements(knocker))
