"""RULES.md "Cards": the text form, parsing, formatting, values and the deck."""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rules_support import examples

from arena.cards import (
    CARDS,
    Card,
    CardError,
    DuplicateCardError,
    HandSizeError,
    InvalidCardError,
    Rank,
    Suit,
    card_value,
    cards_to_mask,
    format_cards,
    full_deck,
    mask_to_cards,
    parse_card,
    parse_cards,
    parse_hand,
    parse_mask,
    shuffled_deck,
)

PARSE_CASES = {
    "canonical": ("As", "As"),
    "ten as T": ("Td", "Td"),
    "ten as 10": ("10h", "Th"),
    "ten as 10 upper suit": ("10H", "Th"),
    "lower case rank": ("kc", "Kc"),
    "upper case suit": ("7H", "7h"),
    "all upper": ("QS", "Qs"),
    "all lower": ("jd", "Jd"),
    "lower ten": ("tc", "Tc"),
    "surrounding space": (" 2c ", "2c"),
    "deuce": ("2s", "2s"),
}


@pytest.mark.parametrize(("token", "canonical"), PARSE_CASES.values(), ids=PARSE_CASES.keys())
def test_parse_card_accepts_text_forms_and_outputs_canonical(token: str, canonical: str) -> None:
    card = parse_card(token)
    assert str(card) == canonical
    assert card is parse_card(canonical)  # interned


BAD_TOKENS = {
    "empty": "",
    "rank only": "A",
    "unknown rank": "1s",
    "eleven": "11h",
    "unknown suit": "Ax",
    "joker": "Jk",
    "three characters": "Asd",
    "suit first": "sA",
    "word": "ace",
    "zero ten": "010h",
}


@pytest.mark.parametrize("token", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
def test_parse_card_rejects_bad_token_and_names_it(token: str) -> None:
    with pytest.raises(InvalidCardError) as info:
        parse_card(token)
    assert repr(token) in str(info.value)


@pytest.mark.parametrize("token", [5, None, 2.0, b"As"], ids=["int", "none", "float", "bytes"])
def test_parse_card_rejects_non_text(token: object) -> None:
    with pytest.raises(InvalidCardError):
        parse_card(token)  # type: ignore[arg-type]


def test_parse_card_passes_a_card_through() -> None:
    assert parse_card(CARDS[5]) is CARDS[5]


def test_bad_token_in_a_hand_names_that_token() -> None:
    with pytest.raises(InvalidCardError, match="'Xh'"):
        parse_cards("As 2s Xh 4s")


DUPLICATE_CASES = {
    "same text": "As 2s As",
    "different case": "As 2s as",
    "ten spelled two ways": "Th 10h 3c",
}


@pytest.mark.parametrize("text", DUPLICATE_CASES.values(), ids=DUPLICATE_CASES.keys())
def test_duplicate_cards_are_rejected(text: str) -> None:
    with pytest.raises(DuplicateCardError):
        parse_cards(text)


def test_card_errors_are_value_errors() -> None:
    for error in (InvalidCardError, DuplicateCardError, HandSizeError):
        assert issubclass(error, CardError)
    assert issubclass(CardError, ValueError)


def test_parse_cards_accepts_commas_and_iterables() -> None:
    assert (
        parse_cards("As,2s, 3s")
        == parse_cards(["As", "2s", "3s"])
        == parse_cards([CARDS[39], CARDS[40], CARDS[41]])
    )


HAND_SIZE_CASES = {
    "nine for ten": ("As 2s 3s 4s 5s 6s 7s 8s 9s", (10,)),
    "eleven for ten": ("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js", (10,)),
    "twelve for ten or eleven": ("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js Qs", (10, 11)),
    "empty": ("", (10,)),
}


@pytest.mark.parametrize(("text", "sizes"), HAND_SIZE_CASES.values(), ids=HAND_SIZE_CASES.keys())
def test_hand_size_is_checked(text: str, sizes: tuple[int, ...]) -> None:
    with pytest.raises(HandSizeError):
        parse_hand(text, sizes)


def test_hand_of_an_allowed_size_parses() -> None:
    assert len(parse_hand("As 2s 3s 4s 5s 6s 7s 8s 9s Ts Js", (10, 11))) == 11


def test_format_is_canonical_and_sorted_by_suit_then_rank() -> None:
    assert format_cards(parse_cards("Ks 10h 2c as Td")) == "2c Td Th As Ks"


VALUE_CASES = {
    "ace is one": ("Ac", 1),
    "two": ("2d", 2),
    "nine": ("9h", 9),
    "ten": ("Ts", 10),
    "jack": ("Jc", 10),
    "queen": ("Qd", 10),
    "king": ("Kh", 10),
}


@pytest.mark.parametrize(("text", "value"), VALUE_CASES.values(), ids=VALUE_CASES.keys())
def test_deadwood_value_of_a_card(text: str, value: int) -> None:
    card = parse_card(text)
    assert card.value == card_value(card) == value


def test_card_numbering_is_suit_times_thirteen_plus_rank() -> None:
    seven_h = parse_card("7h")
    assert int(seven_h) == 2 * 13 + 6
    assert seven_h.suit is Suit.HEARTS and seven_h.rank is Rank.SEVEN
    assert seven_h.mask == 1 << int(seven_h)
    assert repr(seven_h) == "Card('7h')"
    assert isinstance(seven_h, int)


def test_masks_round_trip() -> None:
    hand = parse_cards("Kc 2d As 7h")
    assert mask_to_cards(cards_to_mask(hand)) == tuple(sorted(hand))


def test_deck_has_52_distinct_cards() -> None:
    assert len(set(full_deck())) == 52
    assert {str(c) for c in CARDS} == {r + s for r in "A23456789TJQK" for s in "cdhs"}


def test_shuffled_deck_uses_only_the_injected_generator() -> None:
    one = shuffled_deck(random.Random(3))
    two = shuffled_deck(random.Random(3))
    assert one == two
    assert sorted(one) == list(CARDS)
    assert all(isinstance(c, Card) for c in one)


# --- the fast path to a mask (issue 10, part 5) ----------------------------------------------

#: Tokens of every kind parse_mask may meet: Cards, every accepted text form, and junk.
TOKENS = st.one_of(
    st.sampled_from(CARDS),
    st.sampled_from([str(c) for c in CARDS] + ["10h", "as", "TD", " 2c", "Xx", "", "1"]),
    st.integers(-1, 53),
    st.booleans(),
    st.none(),
)


def _outcome(fn: Callable[[], object]) -> tuple[str, object]:
    try:
        return ("value", fn())
    except CardError as exc:
        return (type(exc).__name__, str(exc))


@examples(300)
@given(tokens=st.lists(TOKENS, max_size=12), as_text=st.booleans())
def test_parse_mask_agrees_with_parse_cards_on_anything(tokens: list[Any], as_text: bool) -> None:
    given_ = " ".join(map(str, tokens)) if as_text else tokens
    fast = _outcome(lambda: parse_mask(given_))
    slow = _outcome(lambda: cards_to_mask(parse_cards(given_)))
    assert fast == slow


@pytest.mark.parametrize(
    "cards", [[CARDS[0], 0], [True], [5], (CARDS[1], CARDS[1]), ["As", CARDS[39]]]
)
def test_parse_mask_refuses_plain_ints_and_duplicates_by_name(cards: list[Any]) -> None:
    with pytest.raises(CardError) as info:
        parse_mask(cards)
    with pytest.raises(type(info.value), match=re.escape(str(info.value))):
        parse_cards(cards)


def test_parse_mask_takes_generators_and_comma_separated_text() -> None:
    assert parse_mask(c for c in CARDS[:3]) == 0b111
    assert parse_mask("Ac,2c, 3c") == 0b111


def _python_calls(fn: Callable[[], object]) -> int:
    """How many Python-level function calls ``fn`` makes (C calls not counted)."""
    calls = 0

    def count(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    sys.setprofile(count)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def test_deadwood_on_ten_cards_does_no_python_work_per_card() -> None:
    """The public deadwood() on parsed Cards once cost 2.55x OpenSpiel's C++ per hand, nearly
    all of it a Python call per card to parse and check it; now a hand is two dict-backed C
    loops (``benchmarks/bench_engine.py`` measures the time side by side)."""
    from arena.rules import deadwood  # noqa: PLC0415

    hand = list(CARDS[:10])
    text = " ".join(map(str, hand))
    # deadwood -> parse_mask -> deadwood_mask (and the lambda): no call per card.
    assert _python_calls(lambda: deadwood(hand)) <= 4
    assert _python_calls(lambda: deadwood(text)) <= 4
