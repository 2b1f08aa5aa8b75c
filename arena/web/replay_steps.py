"""The replay viewer's data: every position of every deal, rebuilt through the rules engine.

:func:`build_replay` takes a typed match record (``arena.reading.replay.load_record``) and replays
each deal's log with :func:`arena.rules.replay_deal`, so what the viewer shows is what the engine
computes from the deck and the actions, not what a writer once stored. Each step is the state
after one action: both hands (omniscient, arranged into melds and deadwood), the discard pile's
top, the stock count, who acts next, and the action that led there with its latency and any
fault and fallback. The last step of a deal carries the showdown (melds, lay-offs, deadwood,
points); the deal a forfeit cut short (``interrupted_deal``) replays up to the forfeit. A deal
that does not replay keeps the steps it reached and says why. Each deal of a whole match also
carries the running score (:func:`running_scores`): its game's points and the games won before
it and after it.

The output is JSON-ready and compact (cards as two-character strings); the page embeds it.

>>> from arena.playing.stored import StoredDeal, StoredFault, parse_record
>>> from arena.rules import RuleSet
>>> deck = ("As Ad 2s 2d 3s 3d 4s 4d 5s 5d 6s 6d 7s 7d 8s 8d 9s 9d Kc Kd Qh Ts Ac 2c 3c 4c"
...         " 5c 6c 7c 8c 9c Tc Jc Qc Td Jd Qd Ah 2h 3h 4h 5h 6h 7h 8h 9h Th Jh Kh Js Qs Ks")
>>> actions = [[1, {"action": "pass"}, 1.5], [0, {"action": "pass"}, 2.0, "timeout"],
...            [1, {"action": "draw_stock"}, 1.0], [1, {"action": "knock", "card": "Kc"}, 1.0]]
>>> hand = parse_record({"game": 0, "index": 0, "dealer": "a", "deck": deck,
...                      "actions": actions}, StoredDeal)
>>> faults = [parse_record({"seat": "a", "kind": "timeout", "detail": "no reply", "game": 0,
...     "deal": 0, "fallback": {"action": "pass"}, "latency_ms": 2.0}, StoredFault)]
>>> deal = deal_steps(RuleSet(target=50), hand, faults=faults)
>>> [s["stock"] for s in deal["steps"]]
[31, 31, 31, 30, 30]
>>> deal["steps"][2]["action"]["fault"]
{'kind': 'timeout', 'detail': 'no reply', 'fallback': 'pass', 'n': 0}
>>> deal["steps"][-1]["action"]["text"], deal["result"]["outcome"], deal["result"]["points"]
('goes gin, discarding K♣ face down', 'gin', 35)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from arena.cards import Card, mask_to_cards
from arena.playing.stored import (
    ActionEntry,
    StoredDeal,
    StoredFault,
    StoredHand,
    StoredMatch,
    deal_record,
)
from arena.rules.actions import ActionKind, Phase
from arena.rules.hand import EventKind, HandEvent, HandState, apply, new_deal
from arena.rules.melds import best_arrangements
from arena.rules.record import replay_deal
from arena.rules.ruleset import RuleSet
from arena.rules.scoring import HandResult

__all__ = ["LiveDeal", "anchor", "build_replay", "deal_steps", "running_scores"]

SEATS = ("a", "b")

_PHASES = {
    Phase.FIRST_UPCARD: "first upcard",
    Phase.DRAW: "draw",
    Phase.DISCARD: "discard",
    Phase.MISKNOCK_RESPONSE: "answer the misknock",
    Phase.LAST_CHANCE: "last chance",
    Phase.DONE: "over",
}


_PASSES = {
    Phase.FIRST_UPCARD: "passes on the upcard",
    Phase.LAST_CHANCE: "passes on the last discard",
}


_SYMBOLS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}


def _card(card: int) -> str:
    return str(Card(card))


def _said(card: int) -> str:
    """A card as text reads in a sentence: ``10♦``, ``Q♠``."""
    text = str(Card(card))
    return ("10" if text[0] == "T" else text[0]) + _SYMBOLS[text[1]]


def _sorted(cards: Sequence[int]) -> list[str]:
    """Cards in display order: by suit, then rank (ace low)."""
    return [_card(c) for c in sorted(cards, key=lambda c: (c // 13, c % 13))]


def _by_rank(cards: Sequence[int]) -> list[str]:
    return [_card(c) for c in sorted(cards, key=lambda c: (c % 13, c // 13))]


def _arranged(mask: int) -> dict[str, Any]:
    """A hand laid out the way a player would: best melds (lowest first), then deadwood by rank."""
    if not mask:
        return {"melds": [], "deadwood": [], "dw": 0}
    best = best_arrangements(mask)[0]
    melds = sorted((mask_to_cards(m) for m in best.melds), key=lambda m: min(c % 13 for c in m))
    return {
        "melds": [_sorted(m) for m in melds],
        "deadwood": _by_rank(mask_to_cards(best.deadwood_cards)),
        "dw": best.deadwood,
    }


def _event_text(event: HandEvent, before: HandState) -> str:
    """One event in words, from the actor's side (``before`` is the state it acted in)."""
    card = "" if event.card is None else _said(event.card)
    kind = event.kind
    if kind is EventKind.PASS:
        return _PASSES.get(before.phase, "passes")
    texts = {
        EventKind.TAKE_DISCARD: f"takes {card} from the discard pile",
        EventKind.DRAW_STOCK: f"draws {card} from the stock",
        EventKind.DISCARD: f"discards {card}",
        EventKind.KNOCK: f"knocks, discarding {card} face down",
        EventKind.GIN: f"goes gin, discarding {card} face down",
        EventKind.BIG_GIN: "goes big gin with all eleven cards melded",
        EventKind.MISKNOCK: f"misknocks with {card}: {event.deadwood} deadwood is over the limit",
        EventKind.ACCEPT_KNOCK: "accepts the knock",
        EventKind.OPEN_HAND: "refuses the misknock (the misknocker plays on, hand exposed)",
        EventKind.DEAD: "dead hand: the stock is exhausted",
    }
    return texts[kind]


def _describe(before: HandState, after: HandState) -> tuple[str, dict[str, Any] | None, str | None]:
    """What one action did (text), any misknock it made, and the card that joined a hand."""
    new = after.events[len(before.events) :]
    texts: list[str] = []
    misknock = None
    joined = None
    for event in new:
        if event.kind is EventKind.DEAD and len(new) > 1:
            continue  # the discard or pass that ended it is the action; the end is the outcome
        texts.append(_event_text(event, before))
        if event.kind is EventKind.MISKNOCK:
            misknock = {
                "seat": SEATS[event.seat],
                "card": None if event.card is None else _card(event.card),
                "deadwood": event.deadwood,
                "limit": before.knock_limit,
            }
        if event.kind in (EventKind.DRAW_STOCK, EventKind.TAKE_DISCARD) and event.card is not None:
            joined = _card(event.card)
    return "; ".join(texts), misknock, joined


def _position(state: HandState, arranged: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """What the board shows for one state (``arranged`` memoises hand layouts by mask: the
    hand of the player not acting repeats from step to step)."""
    hands = {}
    for seat in (0, 1):
        mask = state.hands[seat]
        if mask not in arranged:
            arranged[mask] = _arranged(mask)
        hands[SEATS[seat]] = arranged[mask]
    top = state.discard_top
    out: dict[str, Any] = {
        "hands": hands,
        "top": None if top is None else _card(top),
        "pile": len(state.discards),
        "stock": state.stock_count,
        "phase": _PHASES[state.phase],
        "to_act": None if state.is_over else SEATS[state.to_act],
    }
    # Only when there is something to show: most steps have neither.
    if state.known[0] or state.known[1]:
        out["known"] = {SEATS[s]: _sorted(mask_to_cards(state.known[s])) for s in (0, 1)}
    if state.exposed[0] or state.exposed[1]:
        out["exposed"] = {SEATS[s]: state.exposed[s] for s in (0, 1)}
    return out


def _showdown(state: HandState) -> dict[str, Any] | None:
    """The end of the deal: outcome, who won what, melds, lay-offs and deadwood."""
    deal = state.result
    if deal is None:
        return None
    h: HandResult = deal.result
    knocker = deal.knocker
    out: dict[str, Any] = {
        "outcome": h.outcome.value,
        "winner": None if deal.winner is None else SEATS[deal.winner],
        "points": h.points,
        "multiplier": h.multiplier,
        "knocker": None if knocker is None else SEATS[knocker],
        "penalties": {"a": deal.penalties[0], "b": deal.penalties[1]},
        "misknocks": [
            {"seat": SEATS[m.seat], "card": _card(m.card), "deadwood": m.deadwood}
            for m in deal.misknocks
        ],
    }
    if knocker is None:
        out["hands"] = {SEATS[s]: _sorted(deal.hands[s]) for s in (0, 1)}
        return out
    knocker_melds = [_sorted(m) for m in h.knocker_melds]
    layoffs: list[list[Card]] = [[] for _ in knocker_melds]
    for lay in h.layoffs:
        layoffs[lay.meld_index].append(lay.card)
    out.update(
        knocker_deadwood=h.knocker_deadwood,
        defender_deadwood=h.defender_deadwood,
        knocker_melds=[
            {"cards": m, "layoffs": _sorted(lays)}
            for m, lays in zip(knocker_melds, layoffs, strict=True)
        ],
        knocker_deadwood_cards=_by_rank(h.knocker_deadwood_cards),
        defender_melds=[_sorted(m) for m in h.defender_melds],
        defender_deadwood_cards=_by_rank(h.defender_deadwood_cards),
    )
    return out


def _fault_queue(
    faults: Sequence[StoredFault], game: int, deal: int
) -> dict[str, list[tuple[int, StoredFault]]]:
    """This deal's faults by seat, in order, with their index in the match's fault list."""
    queue: dict[str, list[tuple[int, StoredFault]]] = {"a": [], "b": []}
    for i, f in enumerate(faults):
        if f.game == game and f.deal == deal:
            queue[f.seat].append((i, f))
    return queue


def _deal_step(state: HandState, arranged: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Step 0 of a deal: the deal itself."""
    upcard = _said(state.upcard)
    return {
        **_position(state, arranged),
        "action": {"seat": None, "text": f"the deal: ten cards each, upcard {upcard}"},
    }


def _action_step(
    previous: HandState,
    state: HandState,
    entry: ActionEntry,
    queue: dict[str, list[tuple[int, StoredFault]]],
    arranged: dict[int, dict[str, Any]],
) -> dict[str, Any]:
    """The step after one action (``queue``: the deal's faults still to match, see
    :func:`_fault_queue`; a fault entry takes the first of its seat's)."""
    seat = SEATS[entry.seat]
    text, misknock, joined = _describe(previous, state)
    action: dict[str, Any] = {
        "seat": seat,
        "text": text,
        "kind": entry.action.kind.value,
        "latency": round(entry.latency_ms, 3),
    }
    if entry.fault is not None:
        n, found = queue[seat].pop(0) if queue[seat] else (None, None)
        fallback = None if found is None else found.fallback
        action["fault"] = {
            "kind": entry.fault.value,
            "detail": "" if found is None else found.detail,
            "fallback": _action_text(fallback.action, fallback.card)
            if fallback
            else _action_text(entry.action.kind, entry.action.card),
            "n": n,
        }
    if misknock is not None:
        action["misknock"] = misknock
    step = {**_position(state, arranged), "action": action}
    if joined is not None:
        step["joined"] = joined
    return step


class LiveDeal:
    """A deal being played, step by step: :meth:`add` returns the step :func:`deal_steps`
    gives that action once the deal is stored (the live streams' frames, :mod:`arena.live`),
    without replaying the deal from its start at every action. A fault is told with
    :meth:`fault` before the entry it caused (``n``: its index in the match's faults)."""

    def __init__(self, rules: RuleSet, hand: StoredDeal) -> None:
        record = deal_record(rules, hand)
        self.state = new_deal(rules, record.dealer, deck=record.deck)
        self.limit = self.state.knock_limit
        self._queue: dict[str, list[tuple[int, StoredFault]]] = {"a": [], "b": []}
        self._arranged: dict[int, dict[str, Any]] = {}
        self.first = _deal_step(self.state, self._arranged)
        self._hand = hand
        self._steps = [self.first]
        self._result: dict[str, Any] | None = None

    def fault(self, n: int, fault: StoredFault) -> None:
        """A fault of this deal (the next entry of its seat marked as a fault is its)."""
        self._queue[fault.seat].append((n, fault))

    def add(self, entry: ActionEntry) -> dict[str, Any]:
        """The step after ``entry`` (ValueError if the engine refuses it); the deal's last
        step carries its showdown."""
        previous, self.state = self.state, apply(self.state, entry.action)
        step = _action_step(previous, self.state, entry, self._queue, self._arranged)
        if self.state.result is not None:  # the deal is over: its showdown, made once
            self._result = _showdown(self.state)
            step["showdown"] = self._result
        self._steps.append(step)
        return step

    def deal(self) -> dict[str, Any]:
        """The whole deal once it is over, as :func:`deal_steps` gives it (from the steps made
        along the way: the deal is not replayed again, nor its showdown made again)."""
        result = self._result
        return {
            "game": self._hand.game,
            "deal": self._hand.index,
            "dealer": self._hand.dealer,
            "limit": self.limit,
            "steps": list(self._steps),
            "result": result,
            "error": None if result is not None else "this deal does not replay: it is not over",
            "actions": len(self._steps) - 1,
        }


def deal_steps(
    rules: RuleSet,
    hand: StoredHand | StoredDeal,
    *,
    game: int = 0,
    faults: Sequence[StoredFault] = (),
    interrupted: bool = False,
) -> dict[str, Any]:
    """One deal's steps (see the module docstring); ``error`` is set if it does not replay.

    An ``interrupted`` deal (one a forfeit cut short) replays up to its last action and has no
    result; any other deal must replay to its end.
    """
    steps: list[dict[str, Any]] = []
    queue = _fault_queue(faults, game, hand.index)
    error = None
    final: HandState | None = None
    limit: int | None = None
    arranged: dict[int, dict[str, Any]] = {}
    entries = hand.actions
    try:
        states: Iterator[HandState] = replay_deal(deal_record(rules, hand))
        if interrupted:  # stop at the last action: the end-of-deal check does not apply
            states = itertools.islice(states, len(entries) + 1)
        previous = next(states)
        limit = previous.knock_limit
        steps.append(_deal_step(previous, arranged))
        for entry, state in zip(entries, states, strict=False):
            steps.append(_action_step(previous, state, entry, queue, arranged))
            previous = state
        final = None if interrupted else previous
    except ValueError as exc:  # ReplayError, ActionError, a deck that does not parse
        error = f"this deal does not replay: {exc}"
    result = None if final is None else _showdown(final)
    if result is not None and steps:
        steps[-1]["showdown"] = result
    return {
        "game": game,
        "deal": hand.index,
        "dealer": hand.dealer,
        "limit": limit,
        "steps": steps,
        "result": result,
        "error": error,
        "actions": len(entries),
    }


def _action_text(kind: ActionKind, card: object | None) -> str:
    """``discard Kc``, ``pass``: how the viewer names a fallback."""
    return kind.value if card is None else f"{kind.value} {card}"


def build_replay(record: StoredMatch, names: Mapping[str, str | None]) -> dict[str, Any]:
    """The whole match for the viewer: player names, rules summary and every deal's steps."""
    rules = record.ruleset()
    faults = record.faults
    deals: list[dict[str, Any]] = []
    for game in record.games:
        for hand in game.hands:
            deals.append(deal_steps(rules, hand, game=game.index, faults=faults))
    if record.unfinished_game is not None:
        for hand in record.unfinished_game.hands:
            deal = deal_steps(rules, hand, game=len(record.games), faults=faults)
            deal["unfinished"] = True
            deals.append(deal)
    cut = record.interrupted_deal
    if cut is not None:
        deal = deal_steps(rules, cut, game=cut.game, faults=faults, interrupted=True)
        deal.update(unfinished=True, interrupted=True)
        deals.append(deal)
    for deal, score in zip(deals, running_scores(record), strict=True):
        deal.update(score)
    fault_steps = {
        step["action"]["fault"]["n"]: anchor(deal, i)
        for deal in deals
        for i, step in enumerate(deal["steps"])
        if "fault" in step["action"] and step["action"]["fault"]["n"] is not None
    }
    forfeit = record.forfeit
    return {
        "names": {"a": names.get("a") or "seat a", "b": names.get("b") or "seat b"},
        "forfeit": None if forfeit is None else {"seat": forfeit.seat, "reason": forfeit.reason},
        "deals": deals,
        "fault_steps": fault_steps,
        "error": None,
    }


def _by_seat(pair: Sequence[int]) -> dict[str, int]:
    return {"a": pair[0], "b": pair[1]}


def running_scores(record: StoredMatch) -> list[dict[str, Any]]:
    """Each deal's running score, in :func:`build_replay`'s order: ``score`` (the hand points
    of the deal's game) and ``games`` (games won) before the deal, and the same ``after`` it.

    Penalties go to the deal's game, a hand's points to every game it scored in (``scored_in``:
    more than one under Hollywood scoring), and a game counts as won once a seat has reached the
    target in it. The deal a forfeit cut short scores nothing.
    """
    target = record.ruleset().target
    winners = {g.index: g.winner for g in record.games}
    points: dict[int, list[int]] = {}
    won = [0, 0]
    closed: set[int] = set()
    out: list[dict[str, Any]] = []
    hands: list[tuple[int, StoredHand | StoredDeal]] = list(record.all_hands())
    if record.interrupted_deal is not None:
        hands.append((record.interrupted_deal.game, record.interrupted_deal))
    for game, hand in hands:
        here = points.setdefault(game, [0, 0])
        before = {"score": _by_seat(here), "games": _by_seat(won)}
        if isinstance(hand, StoredHand):
            here[0] += hand.penalties.a
            here[1] += hand.penalties.b
            if hand.winner is not None:
                seat = SEATS.index(hand.winner)
                for scored in hand.scored_in or [game]:
                    points.setdefault(scored, [0, 0])[seat] += hand.points
            for index, total in points.items():
                winner = winners.get(index)
                if index not in closed and winner is not None and max(total) >= target:
                    closed.add(index)
                    won[SEATS.index(winner)] += 1
        out.append({**before, "after": {"score": _by_seat(here), "games": _by_seat(won)}})
    return out


def anchor(deal: Mapping[str, Any], step: int) -> str:
    """The viewer's address of one step (``g1-d3-s12``: game and deal from 1, step from 0)."""
    return f"g{deal['game'] + 1}-d{deal['deal'] + 1}-s{step}"
