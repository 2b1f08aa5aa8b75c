"""RULES.md "Showdown after a knock": the defender's lay-offs and the knocker's arrangement.

Every case is settled through the public ``settle_knock`` and cross-checked with the brute-force
lay-off reference.
"""

from __future__ import annotations

import pytest
import reference_melds as ref
from rules_support import mask

from arena.cards import format_cards, parse_cards
from arena.rules import RuleSet, settle_knock
from arena.rules.melds import settle_layoffs

#: The knocker of most cases: A-2-3 of spades, three kings, 7-8-9 of hearts, 5c loose (5 points).
KNOCKER = "As 2s 3s Kd Kh Kc 7h 8h 9h 5c"

#: name: (knocker, defender, defender deadwood after lay-offs, cards laid off)
LAYOFF_CASES: dict[str, tuple[str, str, int, str]] = {
    "nothing fits": (KNOCKER, "Qs Qc Jd 9c 8d 6s 2d 3c 4h Ac", 63, ""),
    "fourth card on a three-card set": (KNOCKER, "Ks Qc Jd 9c 8d 6s 2d 3c 4h Ac", 53, "Ks"),
    "low end of a run": (KNOCKER, "6h Qc Jd 9c 8d 6s 2d 3c 4h Ac", 53, "6h"),
    "high end of a run": (KNOCKER, "Th Qc Jd 9c 8d 6s 2d 3c 4h Ac", 53, "Th"),
    "both ends of one run": (KNOCKER, "Th 6h Qc Jd 9c 8d 2d 3c 4c Ac", 47, "6h Th"),
    "chained below a run": (KNOCKER, "5h 6h Qc Jd 9c 8d 2d 3c Ac Ks", 43, "5h 6h Ks"),
    "chained above a run": (KNOCKER, "Th Jh Qc 9c 8d 2d 3c Ac 6s Qs", 49, "Th Jh"),
    "chained above an ace-low run": (KNOCKER, "4s 5s Qc Jd 9c 8d 2d 3c Ah 7d", 50, "4s 5s"),
    "a gap stops the chain": (KNOCKER, "5h Qc Jd 9c 8d 6s 2d 3c 4c Ac", 58, ""),
    "a card that fits a set or a run goes where it lets the chain go on": (
        "9c 9d 9s 6h 7h 8h 2c 3c 4c Kd",
        "9h Th Qs Jd 5d 5s 2s 3d Ah Ks",
        46,
        "9h Th",
    ),
    "defender breaks a four-set to lay off and chain": (
        "6h 7h 8h 2c 3c 4c Kd Ks Kh 5d",
        "9c 9d 9h 9s Th Qs Jd 2s 3d Ad",
        26,
        "9h Th",
    ),
    "two knocker runs in one suit, one card between them": (
        "2h 3h 4h 6h 7h 8h Kc Kd Ks Ac",
        "5h Qs Jd 9c 8d 2d 3c 4s 6c 7s",
        59,
        "5h",
    ),
    "a card stays in the defender's own set when laying it off costs more": (
        KNOCKER,
        "6h 6c 6d Qc Jd 9c 8d 2d 3c Ad",
        43,
        "",
    ),
}


@pytest.mark.parametrize(
    ("knocker", "defender", "left", "laid"), LAYOFF_CASES.values(), ids=LAYOFF_CASES.keys()
)
def test_layoffs(knocker: str, defender: str, left: int, laid: str) -> None:
    result = settle_knock(knocker, defender)
    assert result.defender_deadwood == left
    knocker_melds = [parse_cards(" ".join(map(str, m))) for m in result.knocker_melds]
    assert ref.layoff_deadwood(parse_cards(defender), knocker_melds) == left
    assert format_cards(lay.card for lay in result.layoffs) == format_cards(parse_cards(laid))
    # Every card of the defender is in exactly one place, and each place is sound.
    defender_cards = sorted(parse_cards(defender))
    placed = [c for m in result.defender_melds for c in m]
    placed += [lay.card for lay in result.layoffs] + list(result.defender_deadwood_cards)
    assert sorted(placed) == defender_cards
    assert all(ref.is_meld(m) for m in result.defender_melds)
    assert ref.value(result.defender_deadwood_cards) == left
    grown = [set(m) for m in result.knocker_melds]
    for lay in result.layoffs:
        grown[lay.meld_index].add(lay.card)
    assert all(ref.is_meld(g) for g in grown)


def test_no_layoffs_after_gin() -> None:
    # 4s 5s would chain onto A-2-3 of spades and 6h onto the hearts: not after gin.
    result = settle_knock("As 2s 3s Kd Kh Kc 7h 8h 9h Th", "4s 5s Qd Jd 9c 9d 2h 3h 6h Ac")
    assert result.outcome == "gin"
    assert result.layoffs == ()
    assert result.defender_deadwood == 59
    assert result.points == 59 + 25


def test_no_layoffs_after_big_gin() -> None:
    result = settle_knock("As 2s 3s 4s Kd Kh Kc 7h 8h 9h Th", "5s 6s Qd Jd 9c 9d 2h 3h 6h Ac")
    assert result.outcome == "big_gin"
    assert result.layoffs == ()
    assert result.defender_deadwood == 61
    assert result.points == 61 + 31


def test_declared_melds_must_be_melds() -> None:
    melds = [["As", "2s", "3s"], ["Kd", "Kh", "Kc"], ["6d", "7h", "8h"]]
    with pytest.raises(ValueError, match="not a meld"):
        settle_knock(
            "As 2s 3s Kd Kh Kc 7h 8h 6d 2c", "4s 5s Qd Jd 9c 9d 2h 3h 6h Ac", knocker_melds=melds
        )


def test_a_card_left_out_of_the_declared_melds_takes_no_layoff() -> None:
    # Declaring A-2-3 of spades without 4s makes 4s deadwood (a knock for 4, not gin):
    # the defender's 5s cannot go onto 4s, while 6h still fits the declared hearts.
    declared = [["As", "2s", "3s"], ["Kd", "Kh", "Kc"], ["7h", "8h", "9h"]]
    result = settle_knock(
        "As 2s 3s 4s Kd Kh Kc 7h 8h 9h", "5s 6h Qc Jd 9c 8d 2d 3c Ad Qs", knocker_melds=declared
    )
    assert (result.outcome, result.knocker_deadwood) == ("knock", 4)
    assert format_cards(lay.card for lay in result.layoffs) == "6h"
    assert result.defender_deadwood == 58


def test_knocker_deadwood_cards_take_no_layoffs() -> None:
    # The knocker's loose 5c is deadwood, not a meld: 4c and 6c cannot be laid off around it.
    result = settle_knock(KNOCKER, "5h 4c 6c Qs Jd 9c 8d 2d Ad 3h")
    assert result.layoffs == ()


def test_settle_layoffs_reports_a_consistent_split() -> None:
    knocker_melds = [mask("7h 8h 9h"), mask("Kc Kd Kh")]
    result = settle_layoffs(mask("5h 6h Ks Th Jh 2c 3c 4c 9s 9d"), knocker_melds)
    assert result.deadwood == 18
    laid = {str(lay.card) for lay in result.layoffs}
    assert laid == {"5h", "6h", "Ks", "Th", "Jh"}
    assert {lay.meld_index for lay in result.layoffs if str(lay.card) == "Ks"} == {1}


#: A knocker with two arrangements of 4 points: 2c 2d 2h as a set (Ah 3h loose) or Ah 2h 3h as
#: a run (2c 2d loose), with 9s-Ks either way.
TWO_WAY_KNOCKER = "2c 2d 2h Ah 3h 9s Ts Js Qs Ks"

#: name: (knocker, defender, knocker melds chosen, defender deadwood)
TIE_BREAK_CASES: dict[str, tuple[str, str, set[str], int]] = {
    "defender holds the fourth two: knocker shows the run": (
        TWO_WAY_KNOCKER,
        "2s Qc Jd 9c 8d 6c 5d 4s 3c Kh",
        {"Ah 2h 3h", "9s Ts Js Qs Ks"},
        67,
    ),
    "defender holds 4h 5h: knocker shows the set": (
        TWO_WAY_KNOCKER,
        "4h 5h Qc Jd 9c 8d 6c 5d 4s 3c",
        {"2c 2d 2h", "9s Ts Js Qs Ks"},
        64,
    ),
    "defender holds both: knocker shows the set, letting only 2 points go": (
        TWO_WAY_KNOCKER,
        "2s 4h Qc Jd 9c 8d 6c 5d 4s 3c",
        {"2c 2d 2h", "9s Ts Js Qs Ks"},
        59,
    ),
    "defender holds neither: the first arrangement in canonical order": (
        TWO_WAY_KNOCKER,
        "Kh Qc Jd 9c 8d 6c 5d 4s 3c Ad",
        {"2c 2d 2h", "9s Ts Js Qs Ks"},
        66,
    ),
}


@pytest.mark.parametrize(
    ("knocker", "defender", "melds", "left"), TIE_BREAK_CASES.values(), ids=TIE_BREAK_CASES.keys()
)
def test_knocker_arrangement_lets_the_defender_lay_off_least(
    knocker: str, defender: str, melds: set[str], left: int
) -> None:
    result = settle_knock(knocker, defender)
    assert {" ".join(map(str, m)) for m in result.knocker_melds} == {
        format_cards(parse_cards(m)) for m in melds
    }
    assert result.defender_deadwood == left
    assert ref.knocker_tiebreak_deadwood(parse_cards(knocker), parse_cards(defender)) == left


def test_declared_melds_override_the_tie_break() -> None:
    declared = [["Ah", "2h", "3h"], ["9s", "Ts", "Js", "Qs", "Ks"]]
    result = settle_knock(TWO_WAY_KNOCKER, "4h 5h Qc Jd 9c 8d 6c 5d 4s 3c", knocker_melds=declared)
    assert format_cards(lay.card for lay in result.layoffs) == "4h 5h"
    assert result.defender_deadwood == 55


def test_tie_break_is_deterministic() -> None:
    one = settle_knock(TWO_WAY_KNOCKER, "Kh Qc Jd 9c 8d 6c 5d 4s 3c Ad", RuleSet())
    two = settle_knock(TWO_WAY_KNOCKER, "Kh Qc Jd 9c 8d 6c 5d 4s 3c Ad", RuleSet())
    assert one == two
