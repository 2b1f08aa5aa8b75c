"""Cards: the 52-card deck, the text form (``As``, ``Td``) and card sets as bit masks.

A :class:`Card` is a small ``int`` (``suit * 13 + rank``), so it hashes, sorts and indexes
cheaply; the 52 instances are interned and parsing always returns one of them. A set of cards
(a hand) is also available as a 52-bit mask, bit ``suit * 13 + rank``, which is what the meld
search works on.

>>> parse_card("10h")
Card('Th')
>>> str(parse_card("as"))
'As'
>>> format_cards(parse_cards("Kd 2c As"))
'2c Kd As'
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from enum import IntEnum
from typing import Final

__all__ = [
    "CARDS",
    "RANKS",
    "SUITS",
    "Card",
    "CardError",
    "DuplicateCardError",
    "HandSizeError",
    "InvalidCardError",
    "Rank",
    "Suit",
    "card_value",
    "cards_to_mask",
    "format_cards",
    "full_deck",
    "mask_to_cards",
    "parse_card",
    "parse_cards",
    "parse_hand",
    "parse_mask",
    "shuffled_deck",
]

RANKS: Final = "A23456789TJQK"
SUITS: Final = "cdhs"


class Suit(IntEnum):
    """The four suits, in the order of the text form ``cdhs``."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


class Rank(IntEnum):
    """Ranks, ace low (``A`` is 0, ``K`` is 12)."""

    ACE = 0
    TWO = 1
    THREE = 2
    FOUR = 3
    FIVE = 4
    SIX = 5
    SEVEN = 6
    EIGHT = 7
    NINE = 8
    TEN = 9
    JACK = 10
    QUEEN = 11
    KING = 12


class CardError(ValueError):
    """Base class of every error about cards or hands; names the offending token."""


class InvalidCardError(CardError):
    """A token is not a card."""


class DuplicateCardError(CardError):
    """The same card appears twice in a hand."""


class HandSizeError(CardError):
    """A hand has the wrong number of cards."""


_VALUES: Final = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)


class Card(int):
    """One card: ``int(card) == suit * 13 + rank``. Use :func:`parse_card` or :data:`CARDS`."""

    __slots__ = ()

    @property
    def rank(self) -> Rank:
        """The rank (ace low)."""
        return Rank(self % 13)

    @property
    def suit(self) -> Suit:
        """The suit."""
        return Suit(self // 13)

    @property
    def value(self) -> int:
        """Deadwood value: ace 1, two to ten face value, J/Q/K 10."""
        return _VALUES[self % 13]

    @property
    def mask(self) -> int:
        """The card's bit in a hand mask."""
        return 1 << self

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card({_NAMES[self]!r})"


_NAMES: Final = tuple(RANKS[i % 13] + SUITS[i // 13] for i in range(52))
#: The 52 interned cards, indexed by ``suit * 13 + rank``.
CARDS: Final[tuple[Card, ...]] = tuple(Card(i) for i in range(52))
_BY_NAME: Final[dict[str, Card]] = {}
for _card in CARDS:
    _name = _NAMES[_card]
    for _r in {_name[0], _name[0].lower()}:
        for _s in {_name[1], _name[1].upper()}:
            _BY_NAME[_r + _s] = _card
    if _name[0] == "T":
        _BY_NAME["10" + _name[1]] = _card
        _BY_NAME["10" + _name[1].upper()] = _card
#: Each card's bit, by the card itself and by every text form parsing accepts (no whitespace):
#: the fast path of :func:`parse_mask`.
_BIT: Final[dict[str | Card, int]] = {card: 1 << card for card in CARDS}
_BIT.update((name, 1 << card) for name, card in _BY_NAME.items())
_BIT_OF: Final = _BIT.__getitem__
_TOKEN_TYPES: Final = frozenset((Card, str))
#: Deadwood value by card index.
CARD_VALUES: Final[tuple[int, ...]] = tuple(_VALUES[i % 13] for i in range(52))


def card_value(card: int) -> int:
    """Deadwood value of a card (ace 1, face cards 10)."""
    return _VALUES[card % 13]


def parse_card(token: str | Card) -> Card:
    """Parse ``As``, ``td``, ``10H`` ...; raise :class:`InvalidCardError` naming the token."""
    if isinstance(token, Card):
        return token
    if isinstance(token, str):
        card = _BY_NAME.get(token.strip())
        if card is not None:
            return card
    raise InvalidCardError(
        f"{token!r} is not a card: expected a rank from {RANKS} (or 10) and a suit from {SUITS}"
    )


def parse_cards(cards: str | Iterable[str | Card]) -> tuple[Card, ...]:
    """Parse a space- or comma-separated string, or an iterable of tokens, rejecting duplicates."""
    tokens = cards.replace(",", " ").split() if isinstance(cards, str) else list(cards)
    out: list[Card] = []
    seen: set[Card] = set()
    for token in tokens:
        card = parse_card(token)
        if card in seen:
            raise DuplicateCardError(f"card {card} appears more than once")
        seen.add(card)
        out.append(card)
    return tuple(out)


def parse_mask(cards: str | Iterable[str | Card]) -> int:
    """The 52-bit mask of cards given as :func:`parse_cards` takes them, with the same checks.

    The fast path behind the public ``deadwood()``: each token's bit comes from one dict
    lookup and the bits are summed; the sum has one bit per token exactly when no card repeats
    (a repeated bit carries). Anything unusual (an unknown token, padding, a duplicate, a plain
    ``int``) goes through :func:`parse_cards`, which names the offending token.

    >>> parse_mask("As 2c") == (1 << 39) | (1 << 1)
    True
    """
    kind = type(cards)
    tokens: Sequence[str | Card]
    if kind is list or kind is tuple:  # the common case first: no copy
        tokens = cards  # type: ignore[assignment]
    elif isinstance(cards, str):
        tokens = (cards.replace(",", " ") if "," in cards else cards).split()
    else:
        tokens = list(cards)
    try:
        mask: int = sum(map(_BIT_OF, tokens))
    except (KeyError, TypeError):
        return cards_to_mask(parse_cards(tokens))
    # The type check keeps refusing plain ints (and bools), which hash like the Card keys.
    if mask.bit_count() != len(tokens) or not _TOKEN_TYPES.issuperset(map(type, tokens)):
        return cards_to_mask(parse_cards(tokens))
    return mask


def parse_hand(cards: str | Iterable[str | Card], sizes: Sequence[int]) -> tuple[Card, ...]:
    """Parse cards and check that their number is one of ``sizes``."""
    parsed = parse_cards(cards)
    if len(parsed) not in sizes:
        want = " or ".join(str(s) for s in sizes)
        raise HandSizeError(
            f"a hand of {len(parsed)} cards ({format_cards(parsed)}); expected {want}"
        )
    return parsed


def format_cards(cards: Iterable[int]) -> str:
    """Canonical text of a set of cards, sorted by suit (c, d, h, s) then rank."""
    return " ".join(_NAMES[c] for c in sorted(cards))


def cards_to_mask(cards: Iterable[int]) -> int:
    """The 52-bit mask of a set of cards."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def _byte_table() -> tuple[tuple[tuple[Card, ...], ...], ...]:
    """For each byte position of a mask (7 of them), the cards of each byte value."""
    tables = []
    for pos in range(7):
        row = []
        for value in range(256):
            row.append(
                tuple(CARDS[pos * 8 + b] for b in range(8) if value >> b & 1 and pos * 8 + b < 52)
            )
        tables.append(tuple(row))
    return tuple(tables)


_BYTE_CARDS: Final = _byte_table()


def mask_to_cards(mask: int) -> tuple[Card, ...]:
    """The cards of a mask, in index order."""
    t = _BYTE_CARDS
    return (
        t[0][mask & 255]
        + t[1][(mask >> 8) & 255]
        + t[2][(mask >> 16) & 255]
        + t[3][(mask >> 24) & 255]
        + t[4][(mask >> 32) & 255]
        + t[5][(mask >> 40) & 255]
        + t[6][(mask >> 48) & 255]
    )


def full_deck() -> tuple[Card, ...]:
    """The 52 cards in index order."""
    return CARDS


def shuffled_deck(rng: random.Random) -> tuple[Card, ...]:
    """A deck shuffled by the injected generator (never the global one)."""
    deck = list(CARDS)
    rng.shuffle(deck)
    return tuple(deck)
