"""Melds, deadwood, the best discard and lay-offs: exact and fast.

Hands are 52-bit masks (bit ``suit * 13 + rank``, see :mod:`arena.cards`). The search rests on
two facts:

* Within one suit, using runs only, the best arrangement is unique: every maximal block of three
  or more consecutive ranks is melded, nothing else can be. A table over the 8,192 suit masks
  gives that deadwood in one lookup.
* Sets only matter for ranks held three or four times (at most three such ranks in eleven
  cards). Each such rank is either left to the runs, melded as a four-set, or melded as one of
  the four three-sets (the fourth card left to a run). Trying every choice and looking up the
  four suits is exact.

Most hands hold no triple at all, so the minimum deadwood is four table lookups.

>>> deadwood("As 2s 3s Kd Kh Kc 7h 8h 9h Tc")
10
>>> best_discard("As 2s 3s Kd Kh Kc 7h 8h 9h Tc 5d")
('Tc', 5)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from arena.cards import CARD_VALUES, CARDS, Card, mask_to_cards, parse_mask

__all__ = [
    "Arrangement",
    "InvalidMeldError",
    "Layoff",
    "LayoffResult",
    "arrange",
    "best_arrangements",
    "best_discard",
    "best_discard_mask",
    "deadwood",
    "deadwood_cards_mask",
    "deadwood_mask",
    "is_meld",
    "meld_mask_is_valid",
    "min_discard_deadwood_mask",
    "settle_layoffs",
    "value_mask",
]

SUIT_BITS: Final = 13
SUIT_FULL: Final = (1 << SUIT_BITS) - 1
_RANK_VALUES: Final = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
#: The four cards of each rank, as one mask.
RANK_MASKS: Final = tuple(sum(1 << (s * SUIT_BITS + r) for s in range(4)) for r in range(SUIT_BITS))


class InvalidMeldError(ValueError):
    """Declared melds are not melds, overlap, or use cards not in the hand."""


def _build_tables() -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per 13-bit suit mask: value sum, run-only deadwood, and the mask of cards in runs."""
    values = [0] * (1 << SUIT_BITS)
    run_dw = [0] * (1 << SUIT_BITS)
    run_cards = [0] * (1 << SUIT_BITS)
    for m in range(1, 1 << SUIT_BITS):
        low = m & -m
        values[m] = values[m ^ low] + _RANK_VALUES[low.bit_length() - 1]
        # Cards in a run: bits with two neighbours on one side or one on each side.
        a = m & (m >> 1) & (m >> 2)  # starts of three in a row
        in_runs = a | (a << 1) | (a << 2)
        run_cards[m] = in_runs & SUIT_FULL
        run_dw[m] = 0  # filled below once values are complete
    for m in range(1 << SUIT_BITS):
        run_dw[m] = values[m & ~run_cards[m]]
    return tuple(values), tuple(run_dw), tuple(run_cards)


SUIT_VALUE, RUN_DEADWOOD, RUN_CARDS = _build_tables()


def value_mask(mask: int) -> int:
    """Sum of the deadwood values of every card in the mask."""
    return (
        SUIT_VALUE[mask & SUIT_FULL]
        + SUIT_VALUE[(mask >> 13) & SUIT_FULL]
        + SUIT_VALUE[(mask >> 26) & SUIT_FULL]
        + SUIT_VALUE[mask >> 39]
    )


def _triples(a: int, b: int, c: int, d: int) -> int:
    """Ranks (13-bit) held in at least three suits."""
    return (a & b & (c | d)) | (c & d & (a | b))


def _set_choices(a: int, b: int, c: int, d: int, rank: int) -> list[tuple[int, int, int, int, int]]:
    """Ways to use one rank held three or four times: (a, b, c, d, set_mask) after removal."""
    bit = 1 << rank
    held = [(x >> rank) & 1 for x in (a, b, c, d)]
    all_set = sum(held[s] << (s * SUIT_BITS + rank) for s in range(4))
    nb = ~bit
    choices = [(a & nb, b & nb, c & nb, d & nb, all_set)]
    if sum(held) == 4:
        for keep in range(4):
            suits = [a, b, c, d]
            for s in range(4):
                if s != keep:
                    suits[s] &= nb
            choices.append((*suits, all_set & ~(1 << (keep * SUIT_BITS + rank))))  # type: ignore[arg-type]
    return choices


def deadwood_mask(mask: int) -> int:
    """Minimum deadwood of a hand given as a mask (any number of cards)."""
    a = mask & SUIT_FULL
    b = (mask >> 13) & SUIT_FULL
    c = (mask >> 26) & SUIT_FULL
    d = mask >> 39
    t = (a & b & (c | d)) | (c & d & (a | b))
    if not t:
        return RUN_DEADWOOD[a] + RUN_DEADWOOD[b] + RUN_DEADWOOD[c] + RUN_DEADWOOD[d]
    return _deadwood_with_sets(a, b, c, d, t)


def deadwood_cards_mask(mask: int) -> int:
    """Cards that are deadwood in some least-deadwood arrangement (0 if unsure).

    Exact and cheap for hands without three of a rank (runs only); with a triple it answers 0,
    which callers read as "no card known to be free".
    """
    a = mask & SUIT_FULL
    b = (mask >> 13) & SUIT_FULL
    c = (mask >> 26) & SUIT_FULL
    d = mask >> 39
    if (a & b & (c | d)) | (c & d & (a | b)):
        return 0
    return (
        (a & ~RUN_CARDS[a])
        | (b & ~RUN_CARDS[b]) << 13
        | (c & ~RUN_CARDS[c]) << 26
        | (d & ~RUN_CARDS[d]) << 39
    )


def _deadwood_with_sets(a: int, b: int, c: int, d: int, t: int) -> int:
    low = t & -t
    rest = t ^ low
    # Leave the rank to the runs.
    if rest:
        best = _deadwood_with_sets(a, b, c, d, rest)
    else:
        best = RUN_DEADWOOD[a] + RUN_DEADWOOD[b] + RUN_DEADWOOD[c] + RUN_DEADWOOD[d]
    if best == 0:
        return 0
    nb = ~low
    a1, b1, c1, d1 = a & nb, b & nb, c & nb, d & nb
    options = [(a1, b1, c1, d1)]
    if a & b & c & d & low:  # four of a kind: also each three-set leaving one card to a run
        options += [(a, b1, c1, d1), (a1, b, c1, d1), (a1, b1, c, d1), (a1, b1, c1, d)]
    for w, x, y, z in options:
        if rest:
            v = _deadwood_with_sets(w, x, y, z, rest)
        else:
            v = RUN_DEADWOOD[w] + RUN_DEADWOOD[x] + RUN_DEADWOOD[y] + RUN_DEADWOOD[z]
        if v < best:
            best = v
            if best == 0:
                return 0
    return best


def deadwood(cards: str | Iterable[str | Card]) -> int:
    """Minimum deadwood of any hand, cards as text or :class:`Card`.

    >>> deadwood("7c 7d 7s 7h 8h 9h Kd Qd Jd 2c")
    2
    """
    return deadwood_mask(parse_mask(cards))


def min_discard_deadwood_mask(mask: int, exclude: int = 0) -> int:
    """Least deadwood left by discarding one card (not one in ``exclude``) from the mask."""
    best = 999
    m = mask & ~exclude
    while m:
        low = m & -m
        m ^= low
        v = deadwood_mask(mask ^ low)
        if v < best:
            best = v
            if v == 0:
                break
    return best


def best_discard_mask(mask: int, exclude: int = 0) -> tuple[Card, int]:
    """A discard leaving the least deadwood (ties: the highest card) and that deadwood."""
    best_card = -1
    best = 999
    m = mask & ~exclude
    if not m:
        raise ValueError("no card may be discarded")
    while m:
        low = m & -m
        m ^= low
        v = deadwood_mask(mask ^ low)
        card = low.bit_length() - 1
        if v < best or (v == best and _discard_key(card) > _discard_key(best_card)):
            best, best_card = v, card
    return CARDS[best_card], best


def _discard_key(card: int) -> tuple[int, int]:
    if card < 0:
        return (-1, -1)
    return (CARD_VALUES[card], card % 13)


def best_discard(cards11: str | Iterable[str | Card]) -> tuple[str, int]:
    """From eleven cards, a discard leaving the least deadwood, and that deadwood."""
    card, dw = best_discard_mask(parse_mask(cards11))
    return str(card), dw


# --- arrangements ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Arrangement:
    """A way to lay out a hand: disjoint melds and the deadwood left over."""

    melds: tuple[int, ...]
    deadwood_cards: int
    deadwood: int

    def meld_cards(self) -> tuple[tuple[Card, ...], ...]:
        """The melds as card tuples."""
        return tuple(mask_to_cards(m) for m in self.melds)


def _runs_of_suit(suit: int, suit_mask: int) -> list[int]:
    """The maximal runs (3+) in one suit mask, as full 52-bit masks."""
    in_runs = RUN_CARDS[suit_mask]
    runs = []
    while in_runs:
        low = in_runs & -in_runs
        block = top = low
        while (top << 1) & in_runs:
            top <<= 1
            block |= top
        in_runs &= ~block
        runs.append(block << (suit * SUIT_BITS))
    return runs


def best_arrangements(mask: int) -> list[Arrangement]:
    """Every arrangement of least deadwood (runs kept whole; distinct by melded cards and sets).

    Splitting a long run into shorter ones changes neither deadwood nor lay-offs, so runs are
    given as maximal blocks.
    """
    suits = [(mask >> (s * SUIT_BITS)) & SUIT_FULL for s in range(4)]
    triples = _triples(*suits)
    results: list[tuple[int, int, tuple[int, ...]]] = []

    def walk(rest: int, a: int, b: int, c: int, d: int, sets: tuple[int, ...]) -> None:
        if not rest:
            dw = RUN_DEADWOOD[a] + RUN_DEADWOOD[b] + RUN_DEADWOOD[c] + RUN_DEADWOOD[d]
            runs = tuple(r for s, sm in enumerate((a, b, c, d)) for r in _runs_of_suit(s, sm))
            results.append((dw, 0, sets + runs))
            return
        low = rest & -rest
        rank = low.bit_length() - 1
        walk(rest ^ low, a, b, c, d, sets)
        for w, x, y, z, set_mask in _set_choices(a, b, c, d, rank):
            walk(rest ^ low, w, x, y, z, (*sets, set_mask))

    walk(triples, suits[0], suits[1], suits[2], suits[3], ())
    best = min(r[0] for r in results)
    out: dict[tuple[int, ...], Arrangement] = {}
    for dw, _, melds in results:
        if dw != best:
            continue
        key = tuple(sorted(melds))
        melded = 0
        for m in key:
            melded |= m
        out[key] = Arrangement(key, mask & ~melded, dw)
    return [out[k] for k in sorted(out)]


def arrange(cards: str | Iterable[str | Card]) -> Arrangement:
    """One least-deadwood arrangement (the first in canonical order).

    >>> a = arrange("As 2s 3s Kd Kh Kc 7h 8h 9h Tc")
    >>> a.deadwood, [" ".join(map(str, m)) for m in a.meld_cards()]
    (10, ['7h 8h 9h', 'Kc Kd Kh', 'As 2s 3s'])
    """
    return best_arrangements(parse_mask(cards))[0]


def meld_mask_is_valid(meld: int) -> bool:
    """Whether a mask is one meld: a set of 3-4 of a rank or a run of 3+ in a suit."""
    n = meld.bit_count()
    if n < 3:
        return False
    for r in range(SUIT_BITS):
        if meld & ~RANK_MASKS[r] == 0:
            return n <= 4
    for s in range(4):
        suit = (meld >> (s * SUIT_BITS)) & SUIT_FULL
        if suit << (s * SUIT_BITS) == meld:
            low = suit & -suit
            return suit + low == low << n  # n consecutive bits
    return False


def is_meld(cards: str | Iterable[str | Card]) -> bool:
    """Whether the cards form one meld.

    >>> is_meld("Qs Ks As"), is_meld("As 2s 3s"), is_meld("7c 7d 7h 7s")
    (False, True, True)
    """
    return meld_mask_is_valid(parse_mask(cards))


def check_declared_melds(hand: int, melds: Sequence[int]) -> int:
    """Validate declared melds against a hand mask; return the mask of melded cards."""
    used = 0
    for meld in melds:
        if not meld_mask_is_valid(meld):
            raise InvalidMeldError(f"{_fmt(meld)} is not a meld")
        if meld & ~hand:
            raise InvalidMeldError(f"meld {_fmt(meld)} uses {_fmt(meld & ~hand)}, not in the hand")
        if meld & used:
            raise InvalidMeldError(f"card(s) {_fmt(meld & used)} are in more than one meld")
        used |= meld
    return used


def _fmt(mask: int) -> str:
    return " ".join(str(c) for c in mask_to_cards(mask))


# --- lay-offs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Layoff:
    """A defender card laid off onto one of the knocker's melds (index into those melds)."""

    card: Card
    meld_index: int


@dataclass(frozen=True, slots=True)
class LayoffResult:
    """The defender's best showdown: their melds, lay-offs and remaining deadwood."""

    deadwood: int
    melds: tuple[int, ...]
    layoffs: tuple[Layoff, ...]
    deadwood_cards: int


def _layoff_slots(defender: int, knocker_melds: Sequence[int]) -> list[list[tuple[int, int]]]:
    """For each end of each knocker meld, the chains of defender cards it can take.

    Each slot lists (cards mask, meld index) options; at most one option per slot is used.
    """
    slots: list[list[tuple[int, int]]] = []
    for idx, meld in enumerate(knocker_melds):
        low = meld & -meld
        first = low.bit_length() - 1
        if meld & ~RANK_MASKS[first % SUIT_BITS] == 0:  # a set
            if meld.bit_count() == 3:
                missing = RANK_MASKS[first % SUIT_BITS] & ~meld
                if defender & missing:
                    slots.append([(missing, idx)])
            continue
        suit = first // SUIT_BITS
        lo_rank = first % SUIT_BITS
        hi_rank = meld.bit_length() - 1 - suit * SUIT_BITS
        for ranks in (range(lo_rank - 1, -1, -1), range(hi_rank + 1, SUIT_BITS)):
            chains = _chain(defender, suit, ranks, idx)
            if chains:
                slots.append(chains)
    return slots


def _chain(defender: int, suit: int, ranks: range, idx: int) -> list[tuple[int, int]]:
    """Growing runs of defender cards outward from one end of a run: each is a lay-off."""
    chains: list[tuple[int, int]] = []
    chain = 0
    for r in ranks:
        bit = 1 << (suit * SUIT_BITS + r)
        if not defender & bit:
            break
        chain |= bit
        chains.append((chain, idx))
    return chains


def settle_layoffs(defender: int, knocker_melds: Sequence[int]) -> LayoffResult:
    """The defender's least deadwood, laying off onto the knocker's melds (chains included)."""
    slots = _layoff_slots(defender, knocker_melds)
    best: tuple[int, int, tuple[tuple[int, int], ...]] = (deadwood_mask(defender), 0, ())
    options = [[(0, -1), *slot] for slot in slots]
    for combo in itertools.product(*options):
        laid = 0
        ok = True
        for cards, _ in combo:
            if laid & cards:
                ok = False
                break
            laid |= cards
        if not ok or not laid:
            continue
        dw = deadwood_mask(defender & ~laid)
        if dw < best[0] or (dw == best[0] and laid.bit_count() < best[1]):
            best = (dw, laid.bit_count(), tuple(c for c in combo if c[1] >= 0))
    laid_total = 0
    layoffs: list[Layoff] = []
    for cards, idx in best[2]:
        laid_total |= cards
        layoffs.extend(Layoff(card, idx) for card in mask_to_cards(cards))
    rest = defender & ~laid_total
    arrangement = best_arrangements(rest)[0] if rest else Arrangement((), 0, 0)
    return LayoffResult(
        deadwood=arrangement.deadwood,
        melds=arrangement.melds,
        layoffs=tuple(sorted(layoffs, key=lambda lay: (lay.meld_index, lay.card))),
        deadwood_cards=arrangement.deadwood_cards,
    )


def knocker_melds_for(knocker: int, defender: int, allow_layoffs: bool) -> Arrangement:
    """The knocker's arrangement when none was declared.

    Least deadwood; among ties the one that leaves the defender the most deadwood after
    lay-offs; then the first in canonical order.
    """
    candidates = best_arrangements(knocker)
    if len(candidates) == 1 or not allow_layoffs:
        return candidates[0]
    return max(
        enumerate(candidates),
        key=lambda ic: (settle_layoffs(defender, ic[1].melds).deadwood, -ic[0]),
    )[1]
