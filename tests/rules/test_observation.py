"""STYLE.md "Per-player views": ``observe`` shows a seat what it may know and nothing more."""

from __future__ import annotations

import dataclasses

import pytest
from rules_support import (
    CARD_FIELDS,
    DEALER,
    NON_CARD_FIELDS,
    NON_DEALER,
    assert_no_leak,
    deal,
    step,
    visible_cards,
)

from arena.cards import Card
from arena.rules import Observation, RuleSet, observe

ND = "As 2s 3s Kd Kh Ks 7h 8h 9h Qc"
DL = "Jc Kc 2d 3d 4d 4c 5c 6c 9s 9d"


def test_observation_shows_own_hand_discards_and_counts_only() -> None:
    state = deal(ND, DL, "Td", "2c 5h")
    for seat in (NON_DEALER, DEALER):
        seen = assert_no_leak(state, seat)
        assert [str(c) for c in seen.discard_pile] == ["Td"]
        assert str(seen.upcard) == "Td"
        assert (seen.stock_count, seen.opponent_hand_size, seen.knock_limit) == (31, 10, 10)
        assert seen.opponent_known == ()
        assert seen.dealer == DEALER
    assert observe(state, NON_DEALER).to_move
    assert not observe(state, DEALER).to_move


def test_opponent_stock_draws_are_hidden_but_own_are_shown() -> None:
    state = step(deal(ND, DL, "Td", "2c 5h"), "pass", "pass", "draw")
    own = observe(state, NON_DEALER).history[-1]
    theirs = observe(state, DEALER).history[-1]
    assert own.kind.value == theirs.kind.value == "draw_stock"
    assert str(own.card) == "2c"
    assert theirs.card is None
    assert_no_leak(state, DEALER)


def test_cards_taken_from_the_pile_are_known_to_the_opponent() -> None:
    state = step(deal(ND, DL, "Td", "2c 5h"), "pass", "take")
    seen = observe(state, NON_DEALER)
    assert [str(c) for c in seen.opponent_known] == ["Td"]
    assert observe(state, DEALER).taken is not None
    assert str(observe(state, DEALER).taken) == "Td"
    state = step(state, "discard 9s")
    assert [str(c) for c in observe(state, NON_DEALER).opponent_known] == ["Td"]
    assert_no_leak(state, NON_DEALER)


def test_a_known_card_discarded_again_is_no_longer_known() -> None:
    rules = RuleSet(allow_discard_of_taken_card=True)
    state = step(deal(ND, DL, "Td", "2c 5h", rules=rules), "pass", "take", "discard Td")
    assert observe(state, NON_DEALER).opponent_known == ()


def test_legal_actions_only_for_the_player_to_act() -> None:
    state = deal(ND, DL, "Td")
    assert observe(state, NON_DEALER).legal_actions
    assert observe(state, DEALER).legal_actions == ()


def test_observation_is_consistent_through_a_scripted_deal() -> None:
    state = deal(ND, DL, "Td", "2c 5h 7d")
    script = ["pass", "take", "discard 9s", "draw", "discard 2c", "draw", "discard 5h", "draw"]
    for move in script:
        for seat in (0, 1):
            assert_no_leak(state, seat)
        state = step(state, move)
    for seat in (0, 1):
        assert_no_leak(state, seat)


def test_exposed_misknocker_hand_is_in_the_opponents_observation() -> None:
    state = step(deal(ND, DL, "Qd", "2c 5h"), "pass", "pass", "draw", "knock 9h")
    seen = assert_no_leak(state, DEALER)
    assert seen.opponent_hand == state.hand_of(NON_DEALER)
    assert assert_no_leak(state, NON_DEALER).opponent_hand is None


def test_penalty_points_misknock_keeps_the_hand_concealed() -> None:
    rules = RuleSet(misknock="penalty_points")
    state = step(deal(ND, DL, "Qd", "2c 5h", rules=rules), "pass", "pass", "draw", "knock 9h")
    assert assert_no_leak(state, DEALER).opponent_hand is None


def test_observation_never_holds_the_deck() -> None:
    names = {f.name for f in dataclasses.fields(Observation)}
    assert not names & {"deck", "stock", "stock_pos", "hands"}


def test_every_observation_field_is_covered_by_the_leak_check() -> None:
    names = {f.name for f in dataclasses.fields(Observation)}
    assert names == CARD_FIELDS | NON_CARD_FIELDS


def _walk(value: object) -> set[int]:
    """Every Card reachable from a value, by brute force over dataclass fields."""
    if isinstance(value, Card):
        return {value}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return set().union(*(_walk(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, tuple):
        return set().union(set(), *(_walk(v) for v in value))
    return set()


def test_visible_cards_finds_every_card_in_an_observation() -> None:
    rules = RuleSet(misknock="opponent_may_accept")
    state = step(deal(ND, DL, "Qd", "2c 5h", rules=rules), "pass", "take", "discard 9s", "draw")
    state = step(state, "knock 9h [As 2s 3s | Kd Kh Ks]")
    for seat in (0, 1):
        seen = observe(state, seat)
        # Legal actions hold melds as masks (no Card objects): the walk misses none of the rest.
        assert _walk(seen) <= visible_cards(seen)


#: policy: whether the opponent's history shows the misknocker's deadwood (2.2 of issue 10).
MISKNOCK_DEADWOOD_SHOWN = {
    "open_hand": True,  # the hand is exposed for the rest of the deal: nothing new
    "opponent_may_accept": True,  # the hand is laid down for the response
    "penalty_points": False,  # the hand goes back concealed: its deadwood would tell
}


@pytest.mark.parametrize(
    ("policy", "shown"), MISKNOCK_DEADWOOD_SHOWN.items(), ids=MISKNOCK_DEADWOOD_SHOWN.keys()
)
def test_the_opponent_sees_the_misknock_deadwood_when_the_hand_is_shown(
    policy: str, shown: bool
) -> None:
    rules = RuleSet(misknock=policy)
    state = step(deal(ND, DL, "Qd", "2c 5h", rules=rules), "pass", "pass", "draw", "knock 9h")
    own = observe(state, NON_DEALER).history[-1]
    theirs = observe(state, DEALER).history[-1]
    assert (own.kind.value, own.deadwood) == ("misknock", 27)
    assert (theirs.kind.value, str(theirs.card)) == ("misknock", "9h")
    assert theirs.deadwood == (27 if shown else None)
    assert ("deadwood" in theirs.to_dict()) is shown
    if shown:  # the opponent could have computed it from what it is shown anyway
        seen = observe(state, DEALER)
        pending = seen.pending_misknock
        assert seen.opponent_hand is not None
        assert pending is None or pending.deadwood == 27
