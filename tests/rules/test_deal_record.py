"""A deal's record (rule set, dealer, deck, actions) replays through the engine; a record that
does not replay raises ``ReplayError``."""

from __future__ import annotations

import json

import pytest
from rules_support import DEALER, NON_DEALER, action, build_deck, deal, step

from arena.rules import DealRecord, ReplayError, RuleSet, apply, fallback_action, replay_deal
from arena.rules.record import parse_deck

ND = "As 2s 3s Kd Kh Ks 7h 8h 9h Qc"
DL = "Jc Kc 2d 3d 4d 4c 5c 6c 9s 9d"


def record_of(rules: RuleSet, moves: list[tuple[int, str]], stock: str = "2c") -> DealRecord:
    deck = build_deck(ND, DL, "Qd", stock)
    return DealRecord(rules, DEALER, deck, tuple((seat, action(m)) for seat, m in moves))


KNOCK_DEAL = [
    (NON_DEALER, "pass"),
    (DEALER, "pass"),
    (NON_DEALER, "draw"),
    (NON_DEALER, "knock Qc"),
]


def test_replay_yields_every_state_and_ends_with_the_result() -> None:
    states = list(replay_deal(record_of(RuleSet(), KNOCK_DEAL)))
    assert len(states) == len(KNOCK_DEAL) + 1
    assert states[-1].result is not None
    assert states[-1].result.outcome == "knock"
    direct = step(deal(ND, DL, "Qd", "2c"), "pass", "pass", "draw", "knock Qc")
    assert states[-1] == direct


def test_record_json_round_trip() -> None:
    record = record_of(RuleSet(), KNOCK_DEAL)
    data = json.loads(json.dumps(record.to_dict()))
    assert isinstance(data["deck"], str) and len(data["deck"]) == 104
    assert DealRecord.from_dict(RuleSet(), data) == record


def test_parse_deck_accepts_compact_and_spaced_forms() -> None:
    deck = build_deck(ND, DL, "Qd")
    compact = "".join(map(str, deck))
    assert parse_deck(compact) == parse_deck(" ".join(map(str, deck))) == deck


REPLAY_ERRORS: dict[str, list[tuple[int, str]]] = {
    "action by the wrong seat": [(DEALER, "pass")],
    "illegal action": [(NON_DEALER, "pass"), (DEALER, "pass"), (NON_DEALER, "take")],
    "action after the end": [*KNOCK_DEAL, (DEALER, "pass")],
    "record ends before the deal": KNOCK_DEAL[:3],
}


@pytest.mark.parametrize("moves", REPLAY_ERRORS.values(), ids=REPLAY_ERRORS.keys())
def test_records_that_do_not_replay(moves: list[tuple[int, str]]) -> None:
    with pytest.raises(ReplayError):
        list(replay_deal(record_of(RuleSet(), moves)))


def test_fallback_after_a_last_chance_take_replays() -> None:
    # A bot that took the last-chance discard and then faulted gets the fallback discard, which
    # is not otherwise legal there (only knocks are): the replay accepts exactly that action.
    rules = RuleSet(last_discard_chance=True)
    state = step(deal(ND, DL, "Qd", rules=rules), "pass", "pass")
    moves: list[tuple[int, str]] = [(NON_DEALER, "pass"), (DEALER, "pass")]
    while state.stock_count > 3:
        seat = state.to_act
        state = step(state, "draw")
        drawn = f"discard {state.events[-1].card}"
        state = step(state, drawn)
        moves += [(seat, "draw"), (seat, drawn)]
    state = step(state, "draw", "discard Qc", "take")
    moves += [(NON_DEALER, "draw"), (NON_DEALER, "discard Qc"), (DEALER, "take")]
    fallback = fallback_action(state)
    assert fallback.kind.value == "discard"
    final = apply(state, fallback)
    assert final.result is not None and final.result.outcome == "dead"
    deck = build_deck(ND, DL, "Qd")
    record = DealRecord(
        rules, DEALER, deck, (*((s, action(m)) for s, m in moves), (DEALER, fallback))
    )
    assert list(replay_deal(record))[-1] == final
