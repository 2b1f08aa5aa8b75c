"""RULES.md "Melds and deadwood": named hands with known least deadwood, melds, best discards
and big gin. Every expected value is also checked against the slow reference search."""

from __future__ import annotations

import pytest
import reference_melds as ref
from rules_support import mask

from arena.cards import InvalidCardError, format_cards, mask_to_cards, parse_cards
from arena.rules import arrange, best_arrangements, best_discard, deadwood, is_meld
from arena.rules.melds import best_discard_mask, deadwood_mask, value_mask

MELD_CASES = {
    "ace-low run A-2-3": ("As 2s 3s", True),
    "run of four": ("5h 6h 7h 8h", True),
    "run from ace to king": ("Ac 2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc Kc", True),
    "run J-Q-K": ("Jd Qd Kd", True),
    "Q-K-A is not a run (ace low only)": ("Qs Ks As", False),
    "K-A-2 is not a run (no wrap)": ("Ks As 2s", False),
    "run with a gap": ("5h 6h 8h", False),
    "consecutive ranks, mixed suits": ("3c 4d 5h", False),
    "set of three": ("7c 7d 7h", True),
    "set of four": ("7c 7d 7h 7s", True),
    "pair": ("7c 7d", False),
    "single card": ("7c", False),
    "no cards": ("", False),
    "set with an intruder": ("7c 7d 8c", False),
    "set of three plus a run card": ("7c 7d 7h 8h", False),
    "ten spelled 10 in a run": ("8h 9h 10h", True),
}


@pytest.mark.parametrize(("text", "expected"), MELD_CASES.values(), ids=MELD_CASES.keys())
def test_is_meld(text: str, expected: bool) -> None:
    assert is_meld(text) is expected
    assert ref.is_meld(parse_cards(text)) is expected


#: name: (hand, least deadwood, the melds of the first least-deadwood arrangement or None)
DEADWOOD_CASES: dict[str, tuple[str, int, set[str] | None]] = {
    "gin of one long run": ("As 2s 3s 4s 5s 6s 7s 8s 9s Ts", 0, {"As 2s 3s 4s 5s 6s 7s 8s 9s Ts"}),
    "style example": ("As 2s 3s Kd Kh Kc 7h 8h 9h Tc", 10, {"As 2s 3s", "Kc Kd Kh", "7h 8h 9h"}),
    "ace-low run counts": ("Ah 2h 3h Kc Kd Ks 5c 6c 7c 9d", 9, None),
    "Q-K-A is deadwood": ("Qh Kh Ah 2c 3c 4c 5d 6d 7d 9s", 30, None),
    "K-A-2 does not wrap": ("Kh Ah 2h 3c 4c 5c 7d 8d 9d Js", 23, None),
    "no melds at all": ("Kc Qd Jh Ts 9c 8d 7h 6s 5c 4d", 79, set()),
    "face cards count ten": ("Kc Qc Jd Jh 2s 3s 4s 5s 6s 7s", 40, None),
    "card in a set and a run: run wins": (
        "7c 7d 7h 8h 9h Kc Kd Ks 2s 3s",
        19,
        {"7h 8h 9h", "Kc Kd Ks"},
    ),
    "card in a set and a run: longer run wins": (
        "6h 7c 7d 7h 8h 9h Kc Kd Ks 2s",
        16,
        {"6h 7h 8h 9h", "Kc Kd Ks"},
    ),
    "card in a set and a run: set wins": (
        "Ac Ad Ah 2h 3h 4h 2c 2d 5s 9s",
        18,
        {"Ac Ad Ah", "2h 3h 4h"},
    ),
    "four-set better split into a three-set and a run": (
        "7c 7d 7h 7s 8s 9s Kd Qd 2c 3h",
        25,
        {"7c 7d 7h", "7s 8s 9s"},
    ),
    "four-set kept whole": ("7c 7d 7h 7s 2c 3d 4h 5s Kc Qh", 34, {"7c 7d 7h 7s"}),
    "long run split between two sets": (
        "3c 3d 3h 4h 5h 6h 7h 7c 7d Ks",
        10,
        {"3c 3d 3h", "4h 5h 6h", "7c 7d 7h"},
    ),
    "two four-sets broken for a run": ("8c 8d 8h 8s 9c 9d 9h 9s Tc Th", 10, None),
    "four-set and a run sharing a rank": ("4h 5h 6h 5c 5d 5s 6c 6d Ts Js", 24, None),
    "two overlapping runs in one suit and a set": (
        "3s 4s 5s 6s 7s 5c 5d 9c 9d 9h",
        10,
        {"3s 4s 5s 6s 7s", "9c 9d 9h"},
    ),
    "overlapping candidate runs and sets on both ends": (
        "2d 3d 4d 5d 6d 2c 2h 6c 6h Kd",
        10,
        None,
    ),
    "three sets and a single": ("Kc Kd Kh Qc Qd Qh 4c 4d 4s 9h", 9, None),
    "gin with a four-set and runs": ("Jc Jd Jh Js 2c 3c 4c 8h 9h Th", 0, None),
}


@pytest.mark.parametrize(
    ("text", "least", "melds"), DEADWOOD_CASES.values(), ids=DEADWOOD_CASES.keys()
)
def test_least_deadwood(text: str, least: int, melds: set[str] | None) -> None:
    assert deadwood(text) == least
    assert deadwood_mask(mask(text)) == least
    assert ref.deadwood(parse_cards(text)) == least
    arrangement = arrange(text)
    assert arrangement.deadwood == least
    assert value_mask(arrangement.deadwood_cards) == least
    if melds is not None:
        got = {" ".join(str(c) for c in m) for m in arrangement.meld_cards()}
        assert got == {format_cards(parse_cards(m)) for m in melds}


def test_every_least_arrangement_is_listed_once() -> None:
    # The run may be 8c 9c Tc or 8h 9h Th, the other eight cards in two three-sets either way.
    found = best_arrangements(mask("8c 8d 8h 8s 9c 9d 9h 9s Tc Th"))
    assert len({a.melds for a in found}) == len(found)
    assert all(a.deadwood == 10 for a in found)
    assert {format_cards(mask_to_cards(a.deadwood_cards)) for a in found} == {"Tc", "Th"}


def test_deadwood_accepts_cards_and_strings() -> None:
    assert deadwood(parse_cards("As 2s 3s Kc")) == deadwood(["As", "2s", "3s", "Kc"]) == 10


def test_deadwood_rejects_bad_cards() -> None:
    with pytest.raises(InvalidCardError):
        deadwood("As 2s 3z")


#: name: (eleven cards, the only best discard or None when several tie, deadwood left)
DISCARD_CASES: dict[str, tuple[str, str | None, int]] = {
    "doc example": ("As 2s 3s Kd Kh Kc 7h 8h 9h Tc 5d", "Tc", 5),
    "discard to gin": ("As 2s 3s 4s Kd Kh Kc 7h 8h 9h Qc", "Qc", 0),
    "discard the end of a long run to gin": ("As 2s 3s 4s Kd Kh Kc 7h 8h 9h Th", None, 0),
    "discard from a four-set to keep a run": ("Kc Kd Kh Ks Qs Js 2h 3h 4h 5d 6d", "6d", 5),
    "big gin: any card of a long meld keeps gin": ("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc", None, 0),
    "all deadwood: shed the highest": ("Kc Qd Jh 9s 8c 7d 6h 4s 3c 2d As", None, 60),
}


@pytest.mark.parametrize(("text", "card", "left"), DISCARD_CASES.values(), ids=DISCARD_CASES.keys())
def test_best_discard(text: str, card: str | None, left: int) -> None:
    chosen, dw = best_discard(text)
    assert dw == left
    assert ref.best_discard_deadwood(parse_cards(text)) == left
    remaining = [c for c in parse_cards(text) if str(c) != chosen]
    assert len(remaining) == 10
    assert deadwood(remaining) == left
    if card is not None:
        assert chosen == card


def test_best_discard_respects_an_excluded_card() -> None:
    hand = mask("As 2s 3s 4s Kd Kh Kc 7h 8h 9h Qc")
    card, dw = best_discard_mask(hand, exclude=mask("Qc"))
    assert str(card) != "Qc"
    assert dw == 10  # the best other discard is 4s, leaving the queen


BIG_GIN_CASES = {
    "one run of eleven": ("2c 3c 4c 5c 6c 7c 8c 9c Tc Jc Qc", True),
    "two four-runs and a set": ("As 2s 3s 4s 5c 5d 5h 5s 9h Th Jh", True),
    "four-set, four-run, three-run": ("Kc Kd Kh Ks 2h 3h 4h 5h 8d 9d Td", True),
    "ten melded and one over": ("As 2s 3s 4s Kd Kh Kc 7h 8h 9h Qc", False),
    "melds overlap only by sharing a card": ("7c 7d 7h 7s 8s 9s 8h 9h Ks Kh Kd", False),
}


@pytest.mark.parametrize(("text", "big"), BIG_GIN_CASES.values(), ids=BIG_GIN_CASES.keys())
def test_big_gin_detection(text: str, big: bool) -> None:
    assert len(parse_cards(text)) == 11
    assert (deadwood(text) == 0) is big
    assert (ref.deadwood(parse_cards(text)) == 0) is big
