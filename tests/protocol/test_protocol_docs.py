"""What ``api_spec/README.md`` states that records only imply ("What the records only imply").

Each test pins one sentence of that section to the code: the deal order from ``deck``, gin as a
knock whose deadwood is 0, the stock-only draw after both passed the upcard, the arrangement
laid down for a knocker who declared none, and the values boolean settings accept. (The
leaderboard's order of equal ratings, stated there too, is pinned by the leaderboard's tests.)
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from arena.bots.check import positions
from arena.cards import CARDS, Card
from arena.playing.match import play_match
from arena.playing.players import HeuristicPlayer
from arena.protocol.wire import ActionName
from arena.rules.actions import DRAW_STOCK, PASS, TAKE_DISCARD, Action, ActionKind, discard
from arena.rules.hand import EventKind, apply, legal_actions, new_deal, play
from arena.rules.melds import deadwood_mask
from arena.rules.record import parse_deck
from arena.rules.ruleset import RuleSet, RuleSetError
from arena.rules.scoring import Outcome
from arena.rules.showdown import settle_knock
from arena.settings import SettingsError, load_settings

README = (Path(__file__).resolve().parents[2] / "api_spec" / "README.md").read_text("utf-8")


def _cards(mask: int) -> set[Card]:
    return {c for c in CARDS if mask >> c & 1}


@pytest.mark.parametrize("dealer", [0, 1])
@pytest.mark.parametrize("seed", range(5))
def test_deal_order_from_deck_alternates_from_the_top_non_dealer_first(
    dealer: int, seed: int
) -> None:
    deck = list(CARDS)
    random.Random(seed).shuffle(deck)
    state = new_deal(RuleSet(), dealer, deck=deck)
    assert _cards(state.hands[1 - dealer]) == set(deck[0:20:2])  # cards 1, 3, ..., 19
    assert _cards(state.hands[dealer]) == set(deck[1:20:2])  # cards 2, 4, ..., 20
    assert state.upcard == deck[20] and state.discards == (deck[20],)  # the 21st
    assert state.to_act == 1 - dealer and state.stock_count == 31
    state = apply(apply(state, PASS), PASS)
    drawn = apply(state, DRAW_STOCK)
    assert _cards(drawn.hands[1 - dealer]) - _cards(state.hands[1 - dealer]) == {deck[21]}


def test_the_records_deck_is_the_deck_dealt() -> None:
    record = play_match([HeuristicPlayer(), HeuristicPlayer()], RuleSet(target=50), seed=3)
    for game in record.to_dict()["games"]:
        for hand in game["hands"]:
            assert len(hand["deck"]) == 104
            deck = parse_deck(hand["deck"])
            dealer = "ab".index(hand["dealer"])
            state = new_deal(record.rules, dealer, deck=deck)
            for seat, action, *_ in hand["actions"]:
                state = play(state, seat, Action.from_dict(action))
            assert state.result is not None and state.result.outcome.value == hand["outcome"]


def test_gin_is_a_knock_whose_deadwood_is_zero() -> None:
    assert "gin" not in {k.value for k in ActionKind}
    assert "gin" not in ActionName.__args__  # type: ignore[attr-defined]
    state = next(p.state for p in positions() if p.slug == "gin")
    hand = state.hands[state.to_act]
    gin = next(
        a
        for a in legal_actions(state)
        if a.kind is ActionKind.KNOCK and deadwood_mask(hand & ~(1 << (a.card or 0))) == 0
    )
    after = play(state, state.to_act, gin)
    assert after.result is not None and after.result.outcome is Outcome.GIN
    assert after.events[-1].kind is EventKind.GIN


def test_after_both_pass_the_upcard_the_non_dealer_may_only_draw_from_the_stock() -> None:
    state = new_deal(RuleSet(), 0, rng=random.Random(1))
    state = apply(apply(state, PASS), PASS)
    assert state.to_act == 1  # the non-dealer
    assert legal_actions(state) == (DRAW_STOCK,)
    state = apply(state, DRAW_STOCK)
    card = next(a.card for a in legal_actions(state) if a.kind is ActionKind.DISCARD)
    state = apply(state, discard(card or 0))
    assert TAKE_DISCARD in legal_actions(state)  # the dealer's draw: the discard, again


@pytest.mark.parametrize(
    ("defender", "laid_down"),
    [
        # 2h and 6h would lay off on 3h 4h 5h: the arena lays down the set of fours instead.
        ("2h 6h 8c 8d 8h Kc Kd Qc 7c 2d", "4c 4d 4h"),
        # 4s would lay off on the fours: the arena lays down the run instead.
        ("4s 8c 8d 8h Kc Kd Qc 7c 2d 9d", "3h 4h 5h"),
    ],
)
def test_a_knocker_who_declares_no_melds_leaves_the_defender_the_most_deadwood(
    defender: str, laid_down: str
) -> None:
    knocker = "3h 4h 5h 4c 4d 9s Ts Js Qs Ac"  # 4h melds with the run or the set: 9 either way
    result = settle_knock(knocker, defender)
    assert result.knocker_deadwood == 9
    melds = [" ".join(map(str, m)) for m in result.knocker_melds]
    assert laid_down in melds and "9s Ts Js Qs" in melds
    assert result.layoffs == ()


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("1", True),
        ("false", False),
        ("False", False),
        ("0", False),
    ],
)
def test_boolean_settings_accept_true_false_in_any_case_or_1_0(text: str, value: bool) -> None:
    assert load_settings({"ARENA_ALLOW_LOOPBACK": text}).allow_loopback is value


@pytest.mark.parametrize("text", ["yes", "no", "on", "off", "", "t", "2"])
def test_boolean_settings_refuse_anything_else_naming_the_variable(text: str) -> None:
    with pytest.raises(SettingsError, match=r"^ARENA_ALLOW_LOOPBACK: "):
        load_settings({"ARENA_ALLOW_LOOPBACK": text})


@pytest.mark.parametrize("value", [1, 0, "true", "yes"])
def test_rule_set_booleans_are_json_true_or_false_only(value: object) -> None:
    assert RuleSet.from_dict({"last_discard_chance": True}).last_discard_chance
    with pytest.raises(RuleSetError, match="must be true or false"):
        RuleSet.from_dict({"last_discard_chance": value})


def test_the_readme_states_each_of_these() -> None:
    section = README.split("## What the records only imply", 1)[1].split("\n## ", 1)[0]
    for phrase in (
        "the non-dealer\n  first",
        "the 21st card is\n  the upcard",
        "Gin is a knock whose deadwood is 0",
        "lists only\n  `draw_stock`",
        "the most deadwood after lay-offs",
        "`1` or `0`",
        "then by bot id, lowest first",
    ):
        assert phrase in section, phrase
