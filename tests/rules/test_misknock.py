"""RULES.md "Misknock (illegal knock) penalties": the three policies, in play."""

from __future__ import annotations

import pytest
from rules_support import DEALER, NON_DEALER, deal, hand_text, step

from arena.cards import format_cards, parse_card, parse_cards
from arena.rules import (
    EventKind,
    IllegalActionError,
    Phase,
    RuleSet,
    legal_actions,
    observe,
    settle_knock,
)
from arena.rules.actions import ACCEPT_KNOCK, OPEN_HAND
from arena.rules.game import add_deal
from arena.rules.hand import HandState
from arena.rules.scoring import GameScore

#: Non-dealer: As 2s 3s | Kd Kh Ks | 7h 8h 9h, Qc loose. Draws 2c, then knocks with 9h: 7h 8h
#: Qc 2c are left, 27 points, a misknock.
ND = "As 2s 3s Kd Kh Ks 7h 8h 9h Qc"
#: Dealer with 1 point (Ah): accepting the misknock is an undercut.
DL_LOW = "4s 5s 6s 4c 5c 6c 2d 3d 4d Ah"
#: Dealer with 38 points (Jc Kc 9s 9d; Kc lays off onto the kings).
DL_HIGH = "Jc Kc 2d 3d 4d 4c 5c 6c 9s 9d"
MISKNOCKER_AFTER = "As 2s 3s Kd Kh Ks 7h 8h Qc 2c"


def misknock(rules: RuleSet, dealer_hand: str = DL_LOW) -> HandState:
    state = step(deal(ND, dealer_hand, "Qd", "2c 5h", rules=rules), "pass", "pass", "draw")
    return step(state, "knock 9h")


@pytest.mark.parametrize(
    "policy", ["open_hand", "opponent_may_accept", "penalty_points"], ids=lambda p: p
)
def test_a_misknock_is_a_recorded_rules_event_not_an_error(policy: str) -> None:
    state = misknock(RuleSet(misknock=policy))
    assert state.phase is not Phase.DONE
    (mk,) = state.misknocks
    assert (mk.seat, str(mk.card), mk.deadwood) == (NON_DEALER, "9h", 27)
    event = state.events[-1]
    assert (event.seat, event.kind, str(event.card), event.deadwood) == (
        NON_DEALER,
        EventKind.MISKNOCK,
        "9h",
        27,
    )


def test_open_hand_turns_the_knock_card_up_and_exposes_the_hand() -> None:
    state = misknock(RuleSet())
    assert (state.phase, state.to_act) == (Phase.DRAW, DEALER)
    assert str(state.discard_top) == "9h"
    assert hand_text(state, NON_DEALER) == format_cards(parse_cards(MISKNOCKER_AFTER))
    assert state.exposed == (True, False)
    assert state.penalties == (0, 0)
    seen = observe(state, DEALER)
    assert seen.opponent_hand == state.hand_of(NON_DEALER)
    assert observe(state, NON_DEALER).opponent_hand is None
    # The face-up knock card is an ordinary discard: the dealer may take it.
    state = step(state, "take")
    assert "9h" in hand_text(state, DEALER)


def test_open_hand_stays_exposed_for_the_rest_of_the_deal() -> None:
    state = step(misknock(RuleSet()), "draw", "discard 5h", "draw")
    assert state.to_act == NON_DEALER
    state = step(state, f"discard {state.events[-1].card}")
    # Every later observation of the opponent shows the current hand.
    seen = observe(state, DEALER)
    assert seen.opponent_hand == state.hand_of(NON_DEALER)
    assert len(seen.opponent_hand) == 10


def test_the_misknocker_plays_on_with_the_hand_exposed() -> None:
    state = step(misknock(RuleSet()), "draw", "discard 5h")
    state = step(state, "take")  # the non-dealer takes 5h back
    assert state.to_act == NON_DEALER
    assert state.exposed[NON_DEALER]


def test_opponent_may_accept_asks_the_opponent() -> None:
    state = misknock(RuleSet(misknock="opponent_may_accept"))
    assert (state.phase, state.to_act) == (Phase.MISKNOCK_RESPONSE, DEALER)
    assert legal_actions(state) == (ACCEPT_KNOCK, OPEN_HAND)
    assert legal_actions(state, NON_DEALER) == ()
    seen = observe(state, DEALER)
    assert seen.pending_misknock is not None
    assert (str(seen.pending_misknock.card), seen.pending_misknock.deadwood) == ("9h", 27)
    assert seen.opponent_hand is not None
    assert observe(state, NON_DEALER).pending_misknock is None


def test_opponent_accepts_the_misknock_as_a_knock() -> None:
    final = step(misknock(RuleSet(misknock="opponent_may_accept")), "accept")
    assert final.phase is Phase.DONE
    result = final.result
    assert result is not None
    assert result.result == settle_knock(MISKNOCKER_AFTER, DL_LOW, RuleSet(knock_limit=100))
    assert (result.outcome, result.knocker, result.winner) == ("undercut", NON_DEALER, DEALER)
    assert result.points == 27 - 1 + 25
    assert [e.kind for e in final.events[-2:]] == [EventKind.MISKNOCK, EventKind.ACCEPT_KNOCK]


def test_accepting_a_misknock_can_lose() -> None:
    # Against 28 points (after Kc is laid off), 27 wins the knock: accepting was a mistake.
    final = step(misknock(RuleSet(misknock="opponent_may_accept"), DL_HIGH), "accept")
    assert final.result is not None
    assert (final.result.outcome, final.result.winner, final.result.points) == (
        "knock",
        NON_DEALER,
        1,
    )


def test_opponent_chooses_the_open_hand_penalty() -> None:
    state = step(misknock(RuleSet(misknock="opponent_may_accept")), "open")
    assert (state.phase, state.to_act) == (Phase.DRAW, DEALER)
    assert str(state.discard_top) == "9h"
    assert state.exposed == (True, False)
    assert state.pending is None
    assert observe(state, DEALER).opponent_hand == state.hand_of(NON_DEALER)
    assert observe(state, DEALER).pending_misknock is None


def test_penalty_points_credit_the_opponent_and_keep_the_hand_concealed() -> None:
    state = misknock(RuleSet(misknock="penalty_points"))
    assert (state.phase, state.to_act) == (Phase.DRAW, DEALER)
    assert str(state.discard_top) == "9h"
    assert state.penalties == (0, 25)
    assert state.exposed == (False, False)
    assert observe(state, DEALER).opponent_hand is None
    # The deal goes on; the penalty is in the result and counts toward the game.
    final = step(state, "draw", "knock 5h")
    assert final.result is not None
    assert final.result.penalties == (0, 25)
    score = add_deal(final.rules, GameScore(), final.result)
    assert score.points[DEALER] == 25 + final.result.points


def test_penalty_points_value_is_a_field_and_penalties_add_up() -> None:
    rules = RuleSet(misknock="penalty_points", misknock_penalty=10)
    state = misknock(rules)
    state = step(state, "draw", "discard 5h", "draw")
    state = step(state, f"knock {state.events[-1].card}")
    assert state.penalties == (0, 20)
    assert len(state.misknocks) == 2


def test_declared_melds_over_the_limit_misknock() -> None:
    state = step(deal(ND, DL_LOW, "Qd", "2c"), "pass", "pass", "draw")
    state = step(state, "knock Qc [As 2s 3s | 7h 8h 9h]")
    (mk,) = state.misknocks
    assert mk.deadwood == 30 + 2


def test_straight_gin_knock_with_deadwood_is_a_misknock() -> None:
    state = step(deal(ND, DL_LOW, "Qd", "2c", rules=RuleSet.straight()), "pass", "pass", "draw")
    assert not any(a.kind.value == "knock" for a in legal_actions(state))
    state = step(state, "knock Qc")
    assert state.misknocks[0].deadwood == 2


def test_oklahoma_knock_over_the_upcard_limit_is_a_misknock() -> None:
    state = deal(ND, DL_LOW, "5d", "2c 7c", rules=RuleSet.oklahoma())
    assert state.knock_limit == 5
    state = step(state, "pass", "pass", "draw")
    state = step(state, "knock Qc")  # leaves 2c: within 5
    assert state.phase is Phase.DONE
    state = step(deal(ND, DL_LOW, "5d", "7c", rules=RuleSet.oklahoma()), "pass", "pass", "draw")
    state = step(state, "knock Qc")  # leaves 7c: over 5
    assert state.misknocks[0].deadwood == 7


def test_a_knock_with_the_restricted_card_is_a_fault_not_a_misknock() -> None:
    state = step(deal(ND, DL_LOW, "Qd"), "take")
    with pytest.raises(IllegalActionError):
        step(state, "knock Qd")


def test_knock_card_is_accounted_for_after_a_misknock() -> None:
    state = misknock(RuleSet())
    assert parse_card("9h") in state.discards
    assert parse_card("9h") not in state.hand_of(NON_DEALER)


def test_the_responder_is_not_told_the_misknockers_taken_card() -> None:
    # Regression: the misknocker's "just taken" card used to reach the responder's view.
    state = step(deal(ND, DL_LOW, "Qd", rules=RuleSet(misknock="opponent_may_accept")), "take")
    state = step(state, "knock 9h")
    assert state.phase is Phase.MISKNOCK_RESPONSE
    assert observe(state, DEALER).taken is None
    assert state.taken is None
