"""RULES.md "A hand (one deal)": the deal, the first upcard, turns, the discard restriction,
knock/gin/big gin in play, dead hands and the last-discard chance, fallbacks and the two doors
(trusted ``apply`` and validating ``play``)."""

from __future__ import annotations

import copy
import pickle
import random

import pytest
from rules_support import DEALER, NON_DEALER, action, deal, hand_text, step

from arena.cards import CARDS, format_cards, parse_card, parse_cards
from arena.rules import (
    ActionKind,
    IllegalActionError,
    Phase,
    RuleSet,
    apply,
    fallback_action,
    legal_actions,
    new_deal,
    play,
    settle_knock,
)
from arena.rules.actions import DRAW_STOCK, OPEN_HAND, PASS, TAKE_DISCARD
from arena.rules.hand import HandState

#: Non-dealer: As 2s 3s | Kd Kh Ks | 7h 8h 9h and Qc loose (10 points: may knock at once).
ND = "As 2s 3s Kd Kh Ks 7h 8h 9h Qc"
#: Dealer: 4c 5c 6c | 2d 3d 4d, Jc Kc 9s 9d loose (38); Qc would make Jc Qc Kc.
DL = "Jc Kc 2d 3d 4d 4c 5c 6c 9s 9d"


def kinds(state: HandState) -> set[str]:
    return {a.kind.value for a in legal_actions(state)}


def run_down_stock(state: HandState, to: int) -> HandState:
    """Both players draw from the stock and discard the drawn card until ``to`` cards are left."""
    while state.stock_count > to:
        state = step(state, "draw")
        drawn = state.events[-1].card
        state = step(state, f"discard {drawn}")
    return state


# --- the deal -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dealer", [0, 1], ids=["dealer seat 0", "dealer seat 1"])
def test_deal_one_card_at_a_time_starting_with_the_non_dealer(dealer: int) -> None:
    state = new_deal(RuleSet(), dealer, deck=CARDS)
    non_dealer = 1 - dealer
    assert state.hand_of(non_dealer) == CARDS[0:20:2]
    assert state.hand_of(dealer) == CARDS[1:20:2]
    assert state.upcard == state.discard_top == CARDS[20]
    assert state.discards == (CARDS[20],)
    assert state.stock_count == 31
    assert (state.phase, state.to_act) == (Phase.FIRST_UPCARD, non_dealer)
    state = step(state, "pass", "pass", "draw")
    assert CARDS[21] in state.hand_of(non_dealer)  # deck[21] is the top of the stock


def test_scenario_deck_deals_the_hands_named() -> None:
    state = deal(ND, DL, "Tc", "2c Ah")
    assert hand_text(state, NON_DEALER) == format_cards(parse_cards(ND))
    assert hand_text(state, DEALER) == format_cards(parse_cards(DL))
    assert str(state.upcard) == "Tc"
    assert [str(c) for c in state.deck[21:23]] == ["2c", "Ah"]


def test_new_deal_from_a_seed_is_reproducible() -> None:
    one = new_deal(RuleSet(), 0, rng=random.Random(5))
    two = new_deal(RuleSet(), 0, rng=random.Random(5))
    assert one == two


NEW_DEAL_ERRORS = {
    "short deck": {"deck": CARDS[:51]},
    "duplicate card": {"deck": (*CARDS[:51], CARDS[0])},
    "neither deck nor generator": {},
}


@pytest.mark.parametrize("kwargs", NEW_DEAL_ERRORS.values(), ids=NEW_DEAL_ERRORS.keys())
def test_new_deal_rejects_bad_input(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        new_deal(RuleSet(), 0, **kwargs)  # type: ignore[arg-type]


def test_new_deal_rejects_a_bad_dealer() -> None:
    with pytest.raises(ValueError, match="dealer"):
        new_deal(RuleSet(), 2, deck=CARDS)


# --- first upcard -------------------------------------------------------------------------------


def test_first_upcard_offers_take_or_pass_to_the_non_dealer_only() -> None:
    state = deal(ND, DL, "Tc")
    assert legal_actions(state) == (TAKE_DISCARD, PASS)
    assert legal_actions(state, DEALER) == ()
    with pytest.raises(IllegalActionError, match="draw_stock is not allowed"):
        step(state, "draw")


def test_non_dealer_takes_the_upcard_then_discards_and_the_dealer_follows() -> None:
    state = step(deal(ND, DL, "Tc"), "take")
    assert (state.phase, state.to_act) == (Phase.DISCARD, NON_DEALER)
    assert "Tc" in hand_text(state, NON_DEALER)
    assert state.discards == ()
    state = step(state, "discard Qc")
    assert (state.phase, state.to_act) == (Phase.DRAW, DEALER)
    assert legal_actions(state) == (DRAW_STOCK, TAKE_DISCARD)
    assert state.stock_count == 31


def test_non_dealer_passes_and_the_dealer_takes() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass")
    assert (state.phase, state.to_act) == (Phase.FIRST_UPCARD, DEALER)
    assert legal_actions(state) == (TAKE_DISCARD, PASS)
    state = step(state, "take")
    assert (state.phase, state.to_act) == (Phase.DISCARD, DEALER)
    state = step(state, "discard 9s")
    # Normal turns follow with the other player, who may take the dealer's discard.
    assert (state.phase, state.to_act) == (Phase.DRAW, NON_DEALER)
    assert legal_actions(state) == (DRAW_STOCK, TAKE_DISCARD)


def test_both_pass_and_the_non_dealer_must_draw_from_the_stock() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass")
    assert (state.phase, state.to_act) == (Phase.DRAW, NON_DEALER)
    assert legal_actions(state) == (DRAW_STOCK,)
    with pytest.raises(IllegalActionError):
        step(state, "take")
    state = step(state, "draw")
    assert "2c" in hand_text(state, NON_DEALER)
    state = step(state, "discard 2c")
    # From then on both sources are open again.
    assert legal_actions(state) == (DRAW_STOCK, TAKE_DISCARD)


# --- a turn -------------------------------------------------------------------------------------


def test_take_discard_takes_only_the_top_card() -> None:
    state = step(deal(ND, DL, "Qd", "2c 5h"), "pass", "pass", "draw", "discard 2c", "draw")
    state = step(state, "discard 5h")
    assert [str(c) for c in state.discards] == ["Qd", "2c", "5h"]
    state = step(state, "take")
    assert "5h" in hand_text(state, NON_DEALER)
    assert "2c" not in hand_text(state, NON_DEALER)
    assert [str(c) for c in state.discards] == ["Qd", "2c"]


def test_after_drawing_a_player_must_end_the_turn() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw")
    assert kinds(state) <= {"discard", "knock", "big_gin"}
    with pytest.raises(IllegalActionError):
        step(state, "draw")
    assert len(state.hand_of(NON_DEALER)) == 11


@pytest.mark.parametrize(
    ("allow", "legal"), [(False, False), (True, True)], ids=["traditional", "association rule"]
)
def test_discarding_the_card_just_taken(allow: bool, legal: bool) -> None:
    rules = RuleSet(allow_discard_of_taken_card=allow)
    state = step(deal(ND, DL, "Tc", rules=rules), "take")
    tc = parse_card("Tc")
    assert (action("discard Tc") in legal_actions(state)) is legal
    if legal:
        assert step(state, "discard Tc").discard_top == tc
    else:
        with pytest.raises(IllegalActionError, match="just taken"):
            step(state, "discard Tc")
        with pytest.raises(IllegalActionError, match="just taken"):
            step(state, "knock Tc")


def test_the_card_drawn_from_the_stock_may_be_discarded() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw")
    assert action("discard 2c") in legal_actions(state)


def test_a_card_taken_from_the_discard_pile_later_in_the_deal_is_restricted_too() -> None:
    state = step(deal(ND, DL, "Qd", "2c 5h"), "pass", "pass", "draw", "discard 2c")
    state = step(state, "take")  # the dealer takes 2c
    with pytest.raises(IllegalActionError):
        step(state, "discard 2c")


# --- knock, gin, big gin in play ----------------------------------------------------------------


def test_knock_within_the_limit_ends_the_deal_with_a_showdown() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw")
    assert action("knock Qc") in legal_actions(state)
    final = step(state, "knock Qc")
    assert final.phase is Phase.DONE
    assert legal_actions(final) == ()
    result = final.result
    assert result is not None
    expected = settle_knock("As 2s 3s Kd Kh Ks 7h 8h 9h 2c", DL)
    assert result.result == expected
    assert (result.knocker, result.winner, result.outcome) == (NON_DEALER, NON_DEALER, "knock")
    # The dealer lays Kc off onto the kings: 28 left, 26 points.
    assert (result.result.defender_deadwood, result.points) == (28, 26)
    assert [format_cards(h) for h in result.hands] == [
        format_cards(parse_cards("As 2s 3s Kd Kh Ks 7h 8h 9h 2c")),
        format_cards(parse_cards(DL)),
    ]


def test_undercut_credits_the_defender_seat() -> None:
    # The dealer holds 4s 5s 6s (lay off onto As 2s 3s) and little else.
    state = deal(ND, "4s 5s 6s 4c 5c 6c 2d 3d 4d Ad", "Qd", "Ac")
    final = step(state, "pass", "pass", "draw", "knock Qc")
    assert final.result is not None
    assert final.result.outcome == "undercut"
    assert final.result.knocker == NON_DEALER
    assert final.result.winner == DEALER


def test_knock_with_zero_deadwood_is_gin() -> None:
    final = step(deal(ND, DL, "Qd", "Th"), "pass", "pass", "draw", "knock Qc")
    assert final.result is not None
    assert final.result.outcome == "gin"
    assert final.result.points == 38 + 25
    assert final.events[-1].kind.value == "gin"


def test_knocks_over_the_limit_are_not_listed() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw", "discard 2c", "draw")
    assert state.to_act == DEALER
    assert not any(a.kind is ActionKind.KNOCK for a in legal_actions(state))


def test_big_gin_in_play() -> None:
    gin = "As 2s 3s Kd Kh Ks 7h 8h 9h Th"
    state = step(deal(gin, DL, "4s"), "take")
    assert any(a.kind is ActionKind.BIG_GIN for a in legal_actions(state))
    final = step(state, "big_gin")
    assert final.result is not None
    assert final.result.outcome == "big_gin"
    assert final.result.points == 38 + 31
    assert len(final.result.hands[NON_DEALER]) == 11


def test_big_gin_with_declared_melds() -> None:
    gin = "As 2s 3s Kd Kh Ks 7h 8h 9h Th"
    state = step(deal(gin, DL, "4s"), "take")
    final = step(state, "big_gin [As 2s 3s 4s | Kd Kh Ks | 7h 8h 9h Th]")
    assert final.result is not None and final.result.outcome == "big_gin"


def test_big_gin_disabled() -> None:
    gin = "As 2s 3s Kd Kh Ks 7h 8h 9h Th"
    state = step(deal(gin, DL, "4s", rules=RuleSet(big_gin_bonus=None)), "take")
    assert not any(a.kind is ActionKind.BIG_GIN for a in legal_actions(state))
    with pytest.raises(IllegalActionError, match="not allowed"):
        step(state, "big_gin")
    # Ten of the eleven still make gin.
    assert step(state, "knock As").result.outcome == "gin"  # type: ignore[union-attr]


def test_a_false_big_gin_claim_is_illegal() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw")
    with pytest.raises(IllegalActionError, match="unmelded"):
        step(state, "big_gin")


def test_declared_melds_must_be_in_the_hand_and_disjoint() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw")
    with pytest.raises(IllegalActionError, match="not in the hand"):
        step(state, "knock Qc [As 2s 3s | 4c 5c 6c]")
    with pytest.raises(IllegalActionError, match="more than one meld"):
        step(state, "knock Qc [As 2s 3s | As 2s 3s]")
    with pytest.raises(IllegalActionError, match="not a meld"):
        step(state, "knock Qc [As 2s 3s Kd]")
    # The knock card cannot be melded: it is discarded face down.
    with pytest.raises(IllegalActionError, match="not in the hand"):
        step(state, "knock 2c [As 2s 3s | Kd Kh Ks | 7h 8h 9h | 2c 2s 2d]")


def test_knock_with_declared_melds() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw")
    final = step(state, "knock Qc [As 2s 3s | Kd Kh Ks | 7h 8h 9h]")
    assert final.result is not None
    assert final.result.result.knocker_deadwood == 2


# --- dead hand ----------------------------------------------------------------------------------


def test_hand_is_dead_when_a_discard_leaves_two_stock_cards() -> None:
    state = step(deal(ND, DL, "Qd"), "pass", "pass")
    state = run_down_stock(state, 3)
    assert state.phase is Phase.DRAW and state.stock_count == 3
    state = step(state, "draw")
    assert state.stock_count == 2
    final = step(state, f"discard {state.events[-1].card}")
    assert final.phase is Phase.DONE
    assert final.result is not None
    assert (final.result.outcome, final.result.winner, final.result.points) == ("dead", None, 0)
    assert final.result.knocker is None
    assert final.events[-1].kind.value == "dead"


def test_a_knock_is_still_allowed_with_two_stock_cards() -> None:
    state = run_down_stock(step(deal(ND, DL, "Qd"), "pass", "pass"), 3)
    state = step(state, "draw")
    assert state.to_act == NON_DEALER and state.stock_count == 2
    final = step(state, "knock Qc")
    assert final.result is not None and final.result.outcome in ("knock", "gin", "undercut")


def test_dead_hand_stock_is_a_rule_field() -> None:
    state = step(deal(ND, DL, "Qd", rules=RuleSet(dead_hand_stock=10)), "pass", "pass")
    state = run_down_stock(state, 11)
    state = step(state, "draw")
    final = step(state, f"discard {state.events[-1].card}")
    assert final.result is not None and final.result.outcome == "dead"
    assert final.stock_count == 10


def test_last_discard_chance_lets_the_opponent_take_it_to_knock() -> None:
    rules = RuleSet(last_discard_chance=True)
    state = run_down_stock(step(deal(ND, DL, "Td", rules=rules), "pass", "pass"), 3)
    state = step(state, "draw", "discard Qc")
    # The dealer needs Qc for Jc Qc Kc: the discard is offered before the hand dies.
    assert (state.phase, state.to_act) == (Phase.LAST_CHANCE, DEALER)
    assert legal_actions(state) == (TAKE_DISCARD, PASS)
    state = step(state, "take")
    # Only a knock (or gin) may follow; a plain discard is not allowed.
    assert kinds(state) == {"knock"}
    with pytest.raises(IllegalActionError):
        step(state, "discard 9s")
    final = step(state, "knock 9s")
    assert final.result is not None
    assert final.result.knocker == DEALER
    assert final.result.result.knocker_deadwood == 9


def test_last_discard_chance_passed_kills_the_hand() -> None:
    rules = RuleSet(last_discard_chance=True)
    state = run_down_stock(step(deal(ND, DL, "Td", rules=rules), "pass", "pass"), 3)
    state = step(state, "draw", "discard Qc", "pass")
    assert state.result is not None and state.result.outcome == "dead"


def test_last_discard_chance_is_only_offered_when_it_allows_a_knock() -> None:
    rules = RuleSet(last_discard_chance=True)
    state = run_down_stock(step(deal(ND, DL, "Td", rules=rules), "pass", "pass"), 3)
    state = step(state, "draw")
    drawn = state.events[-1].card
    state = step(state, f"discard {drawn}")
    assert state.phase is Phase.LAST_CHANCE
    assert legal_actions(state) == (PASS,)


def test_without_last_discard_chance_the_hand_dies_at_once() -> None:
    state = run_down_stock(step(deal(ND, DL, "Td"), "pass", "pass"), 3)
    state = step(state, "draw", "discard Qc")
    assert state.result is not None and state.result.outcome == "dead"


# --- the two doors ------------------------------------------------------------------------------

PLAY_ERRORS = {
    "wrong seat": (lambda s: play(s, DEALER, PASS), "turn"),
    "draw in the first-upcard phase": (lambda s: play(s, NON_DEALER, DRAW_STOCK), "not allowed"),
    "misknock response out of turn": (lambda s: play(s, NON_DEALER, OPEN_HAND), "not allowed"),
    "discard before drawing": (lambda s: step(s, "discard Qc"), "not allowed"),
    "discard a card not held": (lambda s: step(s, "take", "discard 2c"), "not in the hand"),
    "knock with a card not held": (lambda s: step(s, "take", "knock 2c"), "not in the hand"),
    "take twice": (lambda s: step(s, "take", "take"), "not allowed"),
}


@pytest.mark.parametrize(("bad", "message"), PLAY_ERRORS.values(), ids=PLAY_ERRORS.keys())
def test_play_rejects_illegal_actions(bad: object, message: str) -> None:
    state = deal(ND, DL, "Tc")
    with pytest.raises(IllegalActionError, match=message):
        bad(state)  # type: ignore[operator]


def test_nothing_is_legal_after_the_deal() -> None:
    final = step(deal(ND, DL, "Qd", "Th"), "pass", "pass", "draw", "knock Qc")
    assert legal_actions(final) == legal_actions(final, 0) == legal_actions(final, 1) == ()
    with pytest.raises(IllegalActionError, match="over"):
        play(final, final.to_act, PASS)
    with pytest.raises(IllegalActionError, match="over"):
        apply(final, PASS)
    with pytest.raises(IllegalActionError, match="over"):
        fallback_action(final)


def test_illegal_action_error_is_a_value_error() -> None:
    assert issubclass(IllegalActionError, ValueError)


def test_apply_and_play_agree_on_legal_actions() -> None:
    state = deal(ND, DL, "Tc")
    for a in legal_actions(state):
        assert apply(state, a) == play(state, state.to_act, a)


# --- fallbacks (RULES.md: bots' faults) ---------------------------------------------------------


def test_fallback_actions_are_safe_and_never_knock() -> None:
    state = deal(ND, DL, "Tc", "Th")
    assert fallback_action(state) == PASS
    state = step(state, "pass", "pass")
    assert fallback_action(state) == DRAW_STOCK
    state = step(state, "draw")
    # The drawn Th would make gin; the fallback still just discards it.
    assert fallback_action(state) == action("discard Th")


def test_fallback_after_taking_discards_the_highest_deadwood_not_the_taken_card() -> None:
    state = step(deal(ND, DL, "Qd", "2c"), "pass", "take")
    assert state.to_act == DEALER
    # The dealer took Qd: it may not go back; the highest loose card is Kc (or Jc, 10 too).
    fallback = fallback_action(state)
    assert fallback.kind is ActionKind.DISCARD
    assert str(fallback.card) in {"Kc", "Jc"}
    assert fallback in legal_actions(state)


def test_fallback_in_last_chance_is_pass() -> None:
    rules = RuleSet(last_discard_chance=True)
    state = run_down_stock(step(deal(ND, DL, "Td", rules=rules), "pass", "pass"), 3)
    state = step(state, "draw", "discard Qc")
    assert fallback_action(state) == PASS


# --- variants in play ---------------------------------------------------------------------------


def test_oklahoma_spade_upcard_sets_the_limit_and_doubles_the_hand() -> None:
    state = deal(ND, DL, "8s", "2c", rules=RuleSet.oklahoma())
    assert (state.knock_limit, state.multiplier) == (8, 2)
    final = step(state, "pass", "pass", "draw", "knock Qc")
    assert final.result is not None
    # Knock for 2 against 28 (after Kc is laid off): 26 points, doubled.
    assert (final.result.outcome, final.result.points) == ("knock", 52)
    assert final.result.result.multiplier == 2


def test_oklahoma_ace_upcard_allows_gin_only() -> None:
    state = deal(ND, DL, "Ad", "2c 5d Th", rules=RuleSet.oklahoma())
    assert (state.knock_limit, state.multiplier) == (0, 1)
    state = step(state, "pass", "pass", "draw")
    assert not any(a.kind is ActionKind.KNOCK for a in legal_actions(state))
    state = step(state, "discard 2c", "draw", "discard 5d", "draw")
    # Gin (Th extends 7h 8h 9h) is the only way out: knocking for 2 or less is not listed.
    assert [str(a.card) for a in legal_actions(state) if a.kind is ActionKind.KNOCK] == ["Qc"]


def test_oklahoma_face_card_upcard_counts_ten() -> None:
    assert deal(ND, DL, "Jd", rules=RuleSet.oklahoma()).knock_limit == 10
    assert deal(ND, DL, "Jd").knock_limit == 10
    assert deal(ND, DL, "3h").knock_limit == 10  # standard rules ignore the upcard
    assert deal(ND, DL, "3h", rules=RuleSet.oklahoma()).knock_limit == 3


def test_apply_never_changes_its_input() -> None:
    rules = RuleSet(misknock="opponent_may_accept", last_discard_chance=True)
    state = deal(ND, DL, "Tc", "2c 5h", rules=rules)
    for move in ["take", "discard Qc", "draw", "discard 2c", "draw", "knock 9h", "open", "draw"]:
        before = copy.deepcopy(state)
        pickled = pickle.dumps(state)
        after = apply(state, action(move))
        assert state == before
        assert pickle.dumps(state) == pickled
        assert after != state
        state = after
