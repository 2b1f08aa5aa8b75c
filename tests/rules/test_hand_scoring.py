"""RULES.md "Scoring a hand", the Oklahoma and straight gin variants, and misknocks in
``settle_knock``, through the stable public names of ARCHITECTURE.md."""

from __future__ import annotations

from typing import Any

import pytest

import arena.rules as public
from arena.cards import parse_cards
from arena.rules import MisknockError, Outcome, Role, RuleSet, settle_knock
from arena.rules.scoring import score_showdown

#: Knocks for 5 (5c loose): As 2s 3s | Kd Kh Kc | 7h 8h 9h.
KNOCK5 = "As 2s 3s Kd Kh Kc 7h 8h 9h 5c"
#: Knocks for 7 (7c loose), the same melds.
KNOCK7 = "As 2s 3s Kd Kh Kc 7h 8h 9h 7c"
#: Knocks for exactly 10 (Jc loose).
KNOCK10 = "As 2s 3s Kd Kh Kc 7h 8h 9h Jc"
#: Gin: As 2s 3s | Kd Kh Kc | 7h 8h 9h Th.
GIN = "As 2s 3s Kd Kh Kc 7h 8h 9h Th"
#: Big gin: eleven cards, As-4s | Kd Kh Kc | 7h-Th.
BIG_GIN = "As 2s 3s 4s Kd Kh Kc 7h 8h 9h Th"

#: Defender hands against KNOCK5/KNOCK7 (after lay-offs: 4s 5s onto the spades, Th onto hearts).
DEFENDER_44 = "4s 5s Qd Jd 9c 9d 2h 3h Th Ac"
DEFENDER_1 = "4c 4d 4h Qs Js Ts 5d 6d 7d Ad"
DEFENDER_5 = "4c 4d 4h Qs Js Ts 5d 6d 7d 5h"
#: 6h laid off onto 7h 8h 9h leaves nothing.
DEFENDER_0_BY_LAYOFF = "4c 4d 4h Qs Js Ts 5d 6d 7d 6h"
#: Against GIN/BIG_GIN: 59 (resp. 61) with no lay-off allowed.
DEFENDER_59 = "4s 5s Qd Jd 9c 9d 2h 3h 6h Ac"
DEFENDER_61 = "5s 6s Qd Jd 9c 9d 2h 3h 6h Ac"
DEFENDER_GIN = "4c 4d 4h Qs Js Ts 5d 6d 7d 8d"

#: name: (knocker, defender, rule overrides, outcome, winner, points, knocker dw, defender dw)
SCORING_TABLE: dict[str, tuple[str, str, dict[str, Any], str, str | None, int, int, int]] = {
    "knock: defender has more": (KNOCK5, DEFENDER_44, {}, "knock", "knocker", 39, 5, 44),
    "knock at exactly the limit": (KNOCK10, DEFENDER_44, {}, "knock", "knocker", 34, 10, 44),
    "undercut: defender has less": (KNOCK5, DEFENDER_1, {}, "undercut", "defender", 29, 5, 1),
    "undercut on a tie": (KNOCK5, DEFENDER_5, {}, "undercut", "defender", 25, 5, 5),
    "undercut thanks to a lay-off": (
        KNOCK5,
        DEFENDER_0_BY_LAYOFF,
        {},
        "undercut",
        "defender",
        30,
        5,
        0,
    ),
    "undercut bonus 10": (
        KNOCK5,
        DEFENDER_1,
        {"undercut_bonus": 10},
        "undercut",
        "defender",
        14,
        5,
        1,
    ),
    "undercut bonus 20": (
        KNOCK5,
        DEFENDER_1,
        {"undercut_bonus": 20},
        "undercut",
        "defender",
        24,
        5,
        1,
    ),
    "tie without undercut_on_tie scores nothing": (
        KNOCK5,
        DEFENDER_5,
        {"undercut_on_tie": False},
        "tie",
        None,
        0,
        5,
        5,
    ),
    "undercut_on_tie false still undercuts on less": (
        KNOCK5,
        DEFENDER_1,
        {"undercut_on_tie": False},
        "undercut",
        "defender",
        29,
        5,
        1,
    ),
    "gin: full deadwood plus 25": (GIN, DEFENDER_59, {}, "gin", "knocker", 84, 0, 59),
    "gin bonus 20": (GIN, DEFENDER_59, {"gin_bonus": 20}, "gin", "knocker", 79, 0, 59),
    "gin is never undercut": (GIN, DEFENDER_GIN, {}, "gin", "knocker", 25, 0, 0),
    "big gin: full deadwood plus 31": (BIG_GIN, DEFENDER_61, {}, "big_gin", "knocker", 92, 0, 61),
    "big gin bonus 50": (
        BIG_GIN,
        DEFENDER_61,
        {"big_gin_bonus": 50},
        "big_gin",
        "knocker",
        111,
        0,
        61,
    ),
    "straight gin: gin scores as usual": (
        GIN,
        DEFENDER_59,
        {"knock_limit": 0},
        "gin",
        "knocker",
        84,
        0,
        59,
    ),
}


@pytest.mark.parametrize(
    ("knocker", "defender", "overrides", "outcome", "winner", "points", "kdw", "ddw"),
    SCORING_TABLE.values(),
    ids=SCORING_TABLE.keys(),
)
def test_scoring_table(
    knocker: str,
    defender: str,
    overrides: dict[str, Any],
    outcome: str,
    winner: str | None,
    points: int,
    kdw: int,
    ddw: int,
) -> None:
    result = settle_knock(knocker, defender, RuleSet(**overrides))
    assert result.outcome == outcome
    assert result.winner == winner
    assert result.points == points
    assert (result.knocker_deadwood, result.defender_deadwood) == (kdw, ddw)
    assert result.multiplier == 1


#: name: (kind, knocker dw, defender dw, overrides, outcome, winner, points) for score_showdown.
TABLE_ROWS: dict[str, tuple[Outcome, int, int, dict[str, Any], Outcome, Role | None, int]] = {
    "knock wins by the difference": (Outcome.KNOCK, 3, 20, {}, Outcome.KNOCK, Role.KNOCKER, 17),
    "knock by one point": (Outcome.KNOCK, 9, 10, {}, Outcome.KNOCK, Role.KNOCKER, 1),
    "undercut by one": (Outcome.KNOCK, 10, 9, {}, Outcome.UNDERCUT, Role.DEFENDER, 26),
    "undercut on tie": (Outcome.KNOCK, 7, 7, {}, Outcome.UNDERCUT, Role.DEFENDER, 25),
    "tie scores nothing without undercut_on_tie": (
        Outcome.KNOCK,
        7,
        7,
        {"undercut_on_tie": False},
        Outcome.TIE,
        None,
        0,
    ),
    "gin": (Outcome.GIN, 0, 30, {}, Outcome.GIN, Role.KNOCKER, 55),
    "gin against nothing": (Outcome.GIN, 0, 0, {}, Outcome.GIN, Role.KNOCKER, 25),
    "big gin": (Outcome.BIG_GIN, 0, 30, {}, Outcome.BIG_GIN, Role.KNOCKER, 61),
    "big gin 50": (
        Outcome.BIG_GIN,
        0,
        30,
        {"big_gin_bonus": 50},
        Outcome.BIG_GIN,
        Role.KNOCKER,
        80,
    ),
}


@pytest.mark.parametrize(
    ("kind", "kdw", "ddw", "overrides", "outcome", "winner", "points"),
    TABLE_ROWS.values(),
    ids=TABLE_ROWS.keys(),
)
def test_score_showdown_rows(
    kind: Outcome,
    kdw: int,
    ddw: int,
    overrides: dict[str, Any],
    outcome: Outcome,
    winner: Role | None,
    points: int,
) -> None:
    rules = RuleSet(**overrides)
    result = score_showdown(rules, kind, knocker_deadwood=kdw, defender_deadwood=ddw)
    assert (result.outcome, result.winner, result.points) == (outcome, winner, points)
    doubled = score_showdown(rules, kind, knocker_deadwood=kdw, defender_deadwood=ddw, multiplier=2)
    assert doubled.points == 2 * points


# --- misknocks and illegal big gin --------------------------------------------------------------

MISKNOCK_CASES: dict[str, tuple[str, dict[str, Any], str | None]] = {
    "one over the default limit": (KNOCK10, {"knock_limit": 9}, None),
    "standard limit 10 is exceeded by 11": ("As 2s 3s Kd Kh Kc 7h 8h 5c 6d", {}, None),
    "straight gin refuses any deadwood": (KNOCK5, {"knock_limit": 0}, None),
    "straight preset refuses any deadwood": (KNOCK5, {"__preset": "straight"}, None),
    "oklahoma: 7 over a six upcard": (KNOCK7, {"__preset": "oklahoma"}, "6d"),
    "oklahoma: ace upcard means gin only": (KNOCK5, {"__preset": "oklahoma"}, "Ad"),
}


@pytest.mark.parametrize(
    ("knocker", "overrides", "upcard"), MISKNOCK_CASES.values(), ids=MISKNOCK_CASES.keys()
)
def test_knock_over_the_limit_is_a_misknock(
    knocker: str, overrides: dict[str, Any], upcard: str | None
) -> None:
    preset = overrides.pop("__preset", "standard")
    rules = RuleSet.preset(preset, **overrides)
    with pytest.raises(MisknockError, match="over the knock limit"):
        settle_knock(knocker, DEFENDER_44, rules, upcard=upcard)


def test_misknock_error_is_a_value_error() -> None:
    assert issubclass(MisknockError, ValueError)


def test_misknock_uses_the_declared_melds() -> None:
    # Best arrangement: 5 points. Declared without the kings: 35, over the limit.
    declared = [["As", "2s", "3s"], ["7h", "8h", "9h"]]
    with pytest.raises(MisknockError):
        settle_knock(KNOCK5, DEFENDER_44, knocker_melds=declared)
    # Declared melds within the limit are used even when not the best: a knock for 4, not gin.
    result = settle_knock(
        "As 2s 3s 4s Kd Kh Kc 7h 8h 9h",
        "5c Qd Jd 9c 9d 2h 3h Th Ac 6c",
        knocker_melds=[["As", "2s", "3s"], ["Kd", "Kh", "Kc"], ["7h", "8h", "9h"]],
    )
    assert (result.outcome, result.knocker_deadwood, result.defender_deadwood) == ("knock", 4, 55)


def test_big_gin_needs_all_eleven_melded() -> None:
    with pytest.raises(MisknockError, match="not big gin"):
        settle_knock("As 2s 3s 4s Kd Kh Kc 7h 8h 9h Jc", DEFENDER_61)


def test_big_gin_can_be_disabled() -> None:
    with pytest.raises(MisknockError, match="not allowed"):
        settle_knock(BIG_GIN, DEFENDER_61, RuleSet(big_gin_bonus=None))


def test_ten_melded_cards_are_gin_not_big_gin() -> None:
    assert settle_knock(GIN, DEFENDER_59).outcome == "gin"


HAND_ERRORS: dict[str, tuple[str, str]] = {
    "knocker of nine cards": ("As 2s 3s Kd Kh Kc 7h 8h 9h", DEFENDER_44),
    "knocker of twelve cards": (BIG_GIN + " Qc", DEFENDER_61),
    "defender of eleven cards": (KNOCK5, DEFENDER_44 + " Kc"),
    "a card in both hands": (KNOCK5, "As 5s Qd Jd 9c 9d 2h 3h Th Ac"),
    "a bad card": (KNOCK5, "4s 5s Qd Jd 9c 9d 2h 3h Th Zz"),
}


@pytest.mark.parametrize(("knocker", "defender"), HAND_ERRORS.values(), ids=HAND_ERRORS.keys())
def test_settle_knock_rejects_bad_hands(knocker: str, defender: str) -> None:
    with pytest.raises(ValueError):
        settle_knock(knocker, defender)


# --- Oklahoma -----------------------------------------------------------------------------------

#: name: (knocker, defender, upcard, outcome, points)
OKLAHOMA_CASES: dict[str, tuple[str, str, str, str, int]] = {
    "seven upcard allows 7": (KNOCK7, DEFENDER_44, "7d", "knock", 37),
    "face card upcard counts ten": (KNOCK10, DEFENDER_44, "Qd", "knock", 34),
    "jack upcard counts ten": (KNOCK10, DEFENDER_44, "Jc", "knock", 34),
    "ten upcard counts ten": (KNOCK10, DEFENDER_44, "Td", "knock", 34),
    "ace upcard: gin is still allowed": (GIN, DEFENDER_59, "Ad", "gin", 84),
    "spade upcard doubles a knock": (KNOCK7, DEFENDER_44, "7s", "knock", 74),
    "spade upcard doubles the gin bonus too": (GIN, DEFENDER_59, "Ks", "gin", 168),
    "spade upcard doubles the undercut bonus too": (KNOCK5, DEFENDER_1, "9s", "undercut", 58),
    "spade upcard doubles big gin": (BIG_GIN, DEFENDER_61, "Qs", "big_gin", 184),
    "spade ace: gin only, doubled": (GIN, DEFENDER_59, "As", "gin", 168),
}


@pytest.mark.parametrize(
    ("knocker", "defender", "upcard", "outcome", "points"),
    OKLAHOMA_CASES.values(),
    ids=OKLAHOMA_CASES.keys(),
)
def test_oklahoma(knocker: str, defender: str, upcard: str, outcome: str, points: int) -> None:
    result = settle_knock(knocker, defender, RuleSet.oklahoma(), upcard=upcard)
    assert result.outcome == outcome
    assert result.points == points
    assert result.multiplier == (2 if upcard.endswith("s") else 1)


def test_oklahoma_needs_the_upcard() -> None:
    with pytest.raises(ValueError, match="upcard"):
        settle_knock(KNOCK5, DEFENDER_44, RuleSet.oklahoma())


def test_upcard_is_ignored_by_standard_rules() -> None:
    plain = settle_knock(KNOCK5, DEFENDER_44)
    assert settle_knock(KNOCK5, DEFENDER_44, upcard="As") == plain


def test_oklahoma_preset() -> None:
    rules = RuleSet.oklahoma()
    assert rules.upcard_sets_knock_limit and rules.spade_upcard_doubles
    assert rules.target == 150
    assert [rules.knock_limit_for(v) for v in (1, 2, 7, 10)] == [0, 2, 7, 10]


def test_straight_preset() -> None:
    rules = RuleSet.straight()
    assert rules.knock_limit == 0
    assert rules.knock_limit_for(7) == 0


# --- the stable public names --------------------------------------------------------------------


def test_stable_names_exist_with_their_meanings() -> None:
    for name in ("RuleSet", "deadwood", "best_discard", "settle_knock", "MisknockError"):
        assert hasattr(public, name), name
    defaults = public.RuleSet()
    assert defaults.knock_limit == 10
    assert (defaults.gin_bonus, defaults.undercut_bonus, defaults.big_gin_bonus) == (25, 25, 31)
    assert defaults.undercut_on_tie is True
    assert (
        public.RuleSet(
            knock_limit=0,
            gin_bonus=20,
            undercut_bonus=10,
            undercut_on_tie=False,
            big_gin_bonus=None,
        ).big_gin_allowed
        is False
    )
    with pytest.raises(AttributeError):
        defaults.knock_limit = 5  # type: ignore[misc]
    assert issubclass(public.MisknockError, ValueError)
    assert public.deadwood(["As", "2s", "3s"]) == 0
    card, left = public.best_discard("As 2s 3s Kd Kh Kc 7h 8h 9h Tc 5d")
    assert isinstance(card, str) and type(left) is int


def test_settle_knock_result_fields_are_plain_strings_and_ints() -> None:
    result = settle_knock(KNOCK5, DEFENDER_44, RuleSet())
    assert result.outcome == "knock" and isinstance(result.outcome, str)
    assert result.winner == "knocker" and isinstance(result.winner, str)
    assert type(result.points) is int
    assert str(result.outcome) == "knock"
    tie = settle_knock(KNOCK5, DEFENDER_5, RuleSet(undercut_on_tie=False))
    assert tie.outcome == "tie" and tie.winner is None


def test_settle_knock_accepts_cards_and_keyword_melds() -> None:
    result = settle_knock(
        parse_cards(KNOCK5),
        list(DEFENDER_44.split()),
        rules=RuleSet(),
        knocker_melds=[parse_cards("As 2s 3s"), ["Kd", "Kh", "Kc"], ("7h", "8h", "9h")],
        upcard=None,
    )
    assert (result.outcome, result.points) == ("knock", 39)
