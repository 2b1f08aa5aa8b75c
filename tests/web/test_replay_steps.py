"""The replay viewer's steps, rebuilt through the engine: every position accounts for all 52
cards, faults land on the step where they happened, misknocks are shown, and a tampered deal
keeps the steps it reached and says why instead of failing the page."""

from __future__ import annotations

import copy
from typing import Any

from arena.cards import CARDS, parse_cards
from arena.playing.match import play_match
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    RandomPlayer,
    Turn,
)
from arena.playing.stored import StoredDeal, parse_record
from arena.rules.actions import Action
from arena.rules.record import DealRecord, replay_deal
from arena.rules.ruleset import RuleSet
from arena.web.replay_steps import anchor, build_replay, deal_steps

NAMES = {"a": "alpha", "b": "beta"}


def _cards_in(hand: dict[str, Any]) -> list[str]:
    return [c for meld in hand["melds"] for c in meld] + list(hand["deadwood"])


def _all_hands(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for g in record["games"] for h in g["hands"]]


def test_every_position_of_a_full_match_accounts_for_all_52_cards() -> None:
    stored = play_match([HeuristicPlayer(), RandomPlayer(seed=3)], RuleSet(), seed=7).to_stored()
    record = stored.to_dict()
    replay = build_replay(stored, NAMES)
    hands = _all_hands(record)
    assert len(replay["deals"]) == len(hands) > 1
    for deal, hand in zip(replay["deals"], hands, strict=True):
        assert deal["error"] is None
        steps = deal["steps"]
        assert len(steps) == len(hand["actions"]) + 1
        stock = [s["stock"] for s in steps]
        assert stock == sorted(stock, reverse=True), "the stock only ever shrinks"
        for step in steps:
            a, b = _cards_in(step["hands"]["a"]), _cards_in(step["hands"]["b"])
            assert {len(a), len(b)} <= {10, 11}
            total = len(a) + len(b) + step["pile"] + step["stock"]
            # The card a knock discards goes face down: in no hand, not on the pile.
            assert total == 52 or (step is steps[-1] and total == 51 and hand["knocker"])
            assert len(set(a) | set(b)) == len(a) + len(b)
            assert step["top"] is None or step["top"] not in set(a) | set(b)
        final = steps[-1]["showdown"]
        assert final == deal["result"]
        assert (final["outcome"], final["winner"]) == (hand["outcome"], hand["winner"])
        if hand["winner"] is not None:
            assert final["points"] == hand["points"]
        if hand["knocker"] is not None:
            assert final["knocker_deadwood"] == hand["knocker_deadwood"]
            assert final["defender_deadwood"] == hand["defender_deadwood"]


class _FaultsOnce:
    """Plays heuristically but times out on its second request of the match."""

    name = "faulty"

    def __init__(self) -> None:
        self.inner = HeuristicPlayer(name="faulty")
        self.calls = 0

    def start(self, context: MatchContext) -> Fault | None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        self.calls += 1
        if self.calls == 2:
            return Fault(FaultKind.TIMEOUT, "took too long")
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        return None


def test_a_fault_shows_its_detail_and_fallback_on_the_step_where_it_happened() -> None:
    stored = play_match(
        [_FaultsOnce(), HeuristicPlayer()], RuleSet(target=50, best_of=1), seed=2
    ).to_stored()
    record = stored.to_dict()
    (fault,) = record["faults"]
    replay = build_replay(stored, NAMES)
    faulted = [
        (deal, i, step)
        for deal in replay["deals"]
        for i, step in enumerate(deal["steps"])
        if "fault" in step["action"]
    ]
    assert len(faulted) == 1
    deal, i, step = faulted[0]
    assert (deal["game"], deal["deal"]) == (fault["game"], fault["deal"])
    assert step["action"]["seat"] == fault["seat"] == "a"
    assert step["action"]["fault"] == {
        "kind": "timeout",
        "detail": "took too long",
        "fallback": f"{fault['fallback']['action']} {fault['fallback'].get('card', '')}".strip(),
        "n": 0,
    }
    assert replay["fault_steps"] == {0: anchor(deal, i)}


def _deck(*cards: str) -> str:
    """A deck that starts with these cards, the rest in the usual order."""
    head = parse_cards(" ".join(cards))
    rest = [c for c in CARDS if c not in head]
    return " ".join(str(c) for c in (*head, *rest))


def test_a_misknock_is_shown_and_exposes_the_hand() -> None:
    # Dealer a. b holds As-9s Kc, a holds unmatched high cards; upcard 2c; stock Ts 8c 4c ...
    b_cards = parse_cards("As 2s 3s 4s 5s 6s 7s 8s 9s Kc")
    a_cards = parse_cards("Kd Qh Jc 9h 7d 5c 3h Qd Jh 9d")
    dealt = [str(card) for pair in zip(b_cards, a_cards, strict=True) for card in pair]
    deck = _deck(*dealt, "2c", "Ts", "8c", "4c")
    actions = [
        [1, {"action": "pass"}, 1.0],
        [0, {"action": "pass"}, 1.0],
        [1, {"action": "draw_stock"}, 1.0],
        [1, {"action": "discard", "card": "Kc"}, 1.0],
        [0, {"action": "draw_stock"}, 1.0],
        [0, {"action": "knock", "card": "Kd"}, 3.0],
        [1, {"action": "draw_stock"}, 1.0],
        [1, {"action": "knock", "card": "4c"}, 1.0],
    ]
    hand = {"game": 0, "index": 0, "dealer": "a", "deck": deck, "actions": actions}
    deal = deal_steps(RuleSet(), parse_record(hand, StoredDeal))
    assert deal["error"] is None
    misknock = deal["steps"][6]["action"]
    assert misknock["misknock"]["seat"] == "a"
    assert misknock["misknock"]["deadwood"] > misknock["misknock"]["limit"] == 10
    assert "misknocks" in misknock["text"]
    assert "exposed" not in deal["steps"][5]
    assert deal["steps"][6]["exposed"] == {"a": True, "b": False}
    assert deal["steps"][6]["top"] == "Kd"
    assert deal["result"]["outcome"] == "gin" and deal["result"]["winner"] == "b"
    assert deal["result"]["misknocks"][0]["card"] == "Kd"


def test_a_tampered_deal_keeps_the_steps_it_reached_and_says_why() -> None:
    record = play_match([HeuristicPlayer(), RandomPlayer(seed=1)], RuleSet(target=50), seed=4)
    data = record.to_dict()
    tampered = copy.deepcopy(data)
    first = tampered["games"][0]["hands"][0]
    states = list(replay_deal(DealRecord.from_dict(RuleSet(target=50), first)))
    held = states[5].hands[states[5].to_act]
    missing = next(c for c in CARDS if not held & (1 << c))
    first["actions"][5][1] = {"action": "discard", "card": str(missing)}
    replay = build_replay(parse_record(tampered), NAMES)
    deal = replay["deals"][0]
    assert deal["error"] is not None and "does not replay" in deal["error"]
    assert len(deal["steps"]) == 5 + 1
    assert deal["result"] is None
    assert all(d["error"] is None for d in replay["deals"][1:])
