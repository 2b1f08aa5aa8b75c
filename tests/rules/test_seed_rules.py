"""Rules the seeds hold that the engine once missed (issue 10, part 3): the knock card face down
on the pile, the Gin Rummy Association proviso, the spade-discard house rule, big gin after
taking the discard, and playing to an empty stock. Scoring variants are in test_game_score.py.
"""

from __future__ import annotations

from collections import Counter

import pytest
from rules_support import DEALER, NON_DEALER, action, deal, step

from arena.cards import CARDS, DuplicateCardError, parse_card
from arena.rules import (
    ActionKind,
    IllegalActionError,
    Outcome,
    Phase,
    RuleSet,
    legal_actions,
    settle_knock,
)
from arena.rules.actions import DRAW_STOCK, TAKE_DISCARD
from arena.rules.hand import HandState

#: Non-dealer: As 2s 3s | Kd Kh Ks | 7h 8h 9h and Qc loose (10 points: may knock at once).
ND = "As 2s 3s Kd Kh Ks 7h 8h 9h Qc"
#: Dealer: 4c 5c 6c | 2d 3d 4d, Jc Kc 9s 9d loose (38); 5d would extend 2d 3d 4d.
DL = "Jc Kc 2d 3d 4d 4c 5c 6c 9s 9d"
#: Non-dealer far from a knock: Kd Kh Qc Qh loose (40 points).
FAR = "As 2s 3s Kd Kh 7h 8h 9h Qc Qh"
GRA = RuleSet(allow_discard_of_taken_card=True)


def all_52(state: HandState) -> Counter[int]:
    face_down = () if state.knock_card is None else (state.knock_card,)
    return Counter(
        [*state.hand_of(0), *state.hand_of(1), *state.discards, *state.stock, *face_down]
    )


# --- 3.1 the knock card goes face down on the discard pile --------------------------------------

KNOCK_ENDINGS = {
    "knock": (ND, DL, "Qd", "2c", ("pass", "pass", "draw", "knock Qc"), Outcome.KNOCK),
    "gin": (ND, DL, "Qd", "Th", ("pass", "pass", "draw", "knock Qc"), Outcome.GIN),
    "undercut": (
        ND, "4s 5s 6s 4c 5c 6c 2d 3d 4d Ad", "Qd", "Ac",
        ("pass", "pass", "draw", "knock Qc"), Outcome.UNDERCUT,
    ),
}  # fmt: skip


@pytest.mark.parametrize(("nd", "dl", "up", "stock", "moves", "outcome"),
                         KNOCK_ENDINGS.values(), ids=KNOCK_ENDINGS.keys())  # fmt: skip
def test_the_knock_card_lies_face_down_on_the_discard_pile(
    nd: str, dl: str, up: str, stock: str, moves: tuple[str, ...], outcome: Outcome
) -> None:
    before = step(deal(nd, dl, up, stock), *moves[:-1])
    final = step(before, moves[-1])
    qc = parse_card("Qc")
    assert final.result is not None and final.result.outcome is outcome
    assert final.knock_card == final.result.knock_card == qc
    assert qc not in final.discards and qc not in final.hand_of(NON_DEALER)
    assert final.discards == before.discards  # face down: not a face-up discard
    assert all_52(final) == Counter(CARDS)


def test_an_accepted_misknock_lays_its_card_face_down_too() -> None:
    rules = RuleSet(misknock="opponent_may_accept")
    state = step(deal(FAR, DL, "Qd", "2c", rules), "pass", "pass", "draw", "knock Qc")
    assert state.phase is Phase.MISKNOCK_RESPONSE and state.knock_card is None
    assert all_52(state) == Counter(CARDS)  # the misknock card is still in the hand
    final = step(state, "accept")
    assert final.knock_card == parse_card("Qc")
    assert all_52(final) == Counter(CARDS)


def test_big_gin_keeps_all_eleven_cards_and_lays_nothing_face_down() -> None:
    final = step(deal("As 2s 3s Kd Kh Ks 7h 8h 9h Th", DL, "4s"), "take", "big_gin")
    assert final.result is not None and final.result.outcome is Outcome.BIG_GIN
    assert final.knock_card is None
    assert all_52(final) == Counter(CARDS)


def test_a_dead_hand_has_no_knock_card() -> None:
    state = step(deal(ND, DL, "Qd", rules=RuleSet(dead_hand_stock=29)), "pass", "pass")
    final = draw_and_throw(state, 29)
    assert final.result is not None and final.result.outcome is Outcome.DEAD
    assert final.knock_card is None
    assert all_52(final) == Counter(CARDS)


# --- 3.2 the Gin Rummy Association proviso ------------------------------------------------------


def returned_to(non_dealer: str, rules: RuleSet = GRA) -> HandState:
    """The non-dealer discards 5d; the dealer takes it and discards it straight back."""
    state = step(deal(non_dealer, DL, "Qd", "5d 6h", rules), "pass", "pass", "draw")
    return step(state, "discard 5d", "take", "discard 5d")


def test_the_association_rule_allows_discarding_the_card_just_taken() -> None:
    state = returned_to(ND)
    assert state.discard_top == parse_card("5d")
    assert state.to_act == NON_DEALER and state.phase is Phase.DRAW


def test_the_original_discarder_may_not_take_it_back_when_no_knock_follows() -> None:
    state = returned_to(FAR)
    assert legal_actions(state) == (DRAW_STOCK,)
    with pytest.raises(IllegalActionError, match="only to knock"):
        step(state, "take")
    assert step(state, "draw").phase is Phase.DISCARD  # drawing from the stock is fine


def test_the_original_discarder_may_take_it_back_to_knock_that_same_turn() -> None:
    state = returned_to(ND)
    assert legal_actions(state) == (DRAW_STOCK, TAKE_DISCARD)
    taken = step(state, "take")
    kinds = {a.kind for a in legal_actions(taken)}
    assert kinds <= {ActionKind.KNOCK, ActionKind.BIG_GIN} and ActionKind.KNOCK in kinds
    with pytest.raises(IllegalActionError):
        step(taken, "discard Qc")  # taking it back and playing on is what the proviso forbids
    final = step(taken, "knock Qc")
    assert final.result is not None and final.result.knocker == NON_DEALER


def test_the_proviso_lasts_one_turn() -> None:
    state = step(returned_to(FAR), "draw", "discard 6h")  # the non-dealer drew 6h, threw it
    assert state.to_act == DEALER
    assert TAKE_DISCARD in legal_actions(state)
    state = step(state, "draw", f"discard {state.deck[state.stock_pos]}")
    assert state.to_act == NON_DEALER and state.returned is None
    assert TAKE_DISCARD in legal_actions(state)  # the non-dealer may take any later discard


def test_a_returned_first_upcard_may_be_taken_by_the_dealer() -> None:
    # Nobody discarded the first upcard, so the proviso does not bind the dealer.
    state = step(deal(ND, DL, "5d", rules=GRA), "take", "discard 5d")
    assert state.to_act == DEALER and TAKE_DISCARD in legal_actions(state)
    assert action("discard Jc") in legal_actions(step(state, "take"))


def test_traditional_rules_never_return_the_taken_card() -> None:
    state = step(deal(FAR, DL, "Qd", "5d"), "pass", "pass", "draw", "discard 5d", "take")
    with pytest.raises(IllegalActionError, match="just taken"):
        step(state, "discard 5d")


# --- 3.3 a spade on top of the discard pile at the knock doubles the hand (seed 004) ------------

SPADE_TOP = {
    # name: (upcard, moves, rules, multiplier); the knock scores 26 undoubled (tests above)
    "spade on top": ("Js", ("pass", "pass", "draw"), RuleSet(spade_discard_doubles=True), 2),
    "no spade on top": ("Qd", ("pass", "pass", "draw"), RuleSet(spade_discard_doubles=True), 1),
    "rule off": ("Js", ("pass", "pass", "draw"), RuleSet(), 1),
    "with Oklahoma's spade upcard": (
        "Js", ("pass", "pass", "draw"), RuleSet.oklahoma(spade_discard_doubles=True), 4,
    ),
}  # fmt: skip


@pytest.mark.parametrize(("upcard", "moves", "rules", "multiplier"), SPADE_TOP.values(),
                         ids=SPADE_TOP.keys())  # fmt: skip
def test_a_spade_top_discard_at_the_knock_doubles_the_hand(
    upcard: str, moves: tuple[str, ...], rules: RuleSet, multiplier: int
) -> None:
    final = step(deal(ND, DL, upcard, "2c", rules), *moves, "knock Qc")
    assert final.result is not None
    assert final.result.result.multiplier == multiplier
    assert final.result.points == 26 * multiplier


def test_an_empty_discard_pile_at_the_knock_doubles_nothing() -> None:
    rules = RuleSet(spade_discard_doubles=True)
    state = step(deal(ND, DL, "Js", rules=rules), "take")  # the spade upcard is in hand now
    assert state.discards == ()
    final = step(state, "knock Qc")
    assert final.result is not None and final.result.result.multiplier == 1


def test_settle_knock_takes_the_top_discard_for_the_spade_rule() -> None:
    rules = RuleSet(spade_discard_doubles=True)
    knocker, defender = "As 2s 3s Kd Kh Ks 7h 8h 9h 2c", DL
    plain = settle_knock(knocker, defender, rules)
    doubled = settle_knock(knocker, defender, rules, discard_top="Js")
    assert (plain.multiplier, doubled.multiplier) == (1, 2)
    assert doubled.points == 2 * plain.points
    assert settle_knock(knocker, defender, rules, discard_top="Qd").points == plain.points
    with pytest.raises(DuplicateCardError, match="2c"):
        settle_knock(knocker, defender, rules, discard_top="2c")


# --- 3.3 big gin after taking the discard ("draw" read as either draw) --------------------------

BIG = "As 2s 3s Kd Kh Ks 7h 8h 9h Th"


@pytest.mark.parametrize(("allowed", "listed"), [(True, True), (False, False)],
                         ids=["default: any draw", "stock draws only"])  # fmt: skip
def test_big_gin_after_taking_the_discard(allowed: bool, listed: bool) -> None:
    rules = RuleSet(big_gin_after_taking_discard=allowed)
    state = step(deal(BIG, DL, "4s", rules=rules), "take")
    assert any(a.kind is ActionKind.BIG_GIN for a in legal_actions(state)) is listed
    if listed:
        assert step(state, "big_gin").result.outcome is Outcome.BIG_GIN  # type: ignore[union-attr]
    else:
        with pytest.raises(IllegalActionError, match="after taking the discard"):
            step(state, "big_gin")
        assert step(state, "knock As").result.outcome is Outcome.GIN  # type: ignore[union-attr]


def test_big_gin_after_a_stock_draw_stays_allowed_when_taking_forbids_it() -> None:
    rules = RuleSet(big_gin_after_taking_discard=False)
    state = step(deal(BIG, DL, "Qd", "4s", rules), "pass", "pass", "draw")
    assert any(a.kind is ActionKind.BIG_GIN for a in legal_actions(state))
    assert step(state, "big_gin").result.outcome is Outcome.BIG_GIN  # type: ignore[union-attr]


# --- 3.3 play to an empty stock (seed 002: dead_hand_stock=0) ----------------------------------


def draw_and_throw(state: HandState, to: int) -> HandState:
    while state.stock_count > to:
        state = step(state, "draw")
        state = step(state, f"discard {state.events[-1].card}")
    return state


def test_with_dead_hand_stock_zero_the_last_stock_card_is_drawn() -> None:
    rules = RuleSet(dead_hand_stock=0)
    state = draw_and_throw(step(deal(FAR, DL, "Qd", rules=rules), "pass", "pass"), 1)
    assert state.phase is Phase.DRAW and state.stock_count == 1
    state = step(state, "draw")
    assert state.stock_count == 0 and state.phase is Phase.DISCARD
    final = step(state, f"discard {state.events[-1].card}")
    assert final.result is not None and final.result.outcome is Outcome.DEAD
    assert all_52(final) == Counter(CARDS)


def test_with_dead_hand_stock_zero_a_knock_on_the_last_card_scores() -> None:
    rules = RuleSet(dead_hand_stock=0)
    state = draw_and_throw(step(deal(ND, DL, "Qd", rules=rules), "pass", "pass"), 1)
    state = step(state, "draw")  # the 31st stock card goes to the non-dealer, who drew first
    assert state.stock_count == 0 and state.to_act == NON_DEALER
    final = step(state, "knock Qc")
    assert final.result is not None and final.result.outcome is not Outcome.DEAD
