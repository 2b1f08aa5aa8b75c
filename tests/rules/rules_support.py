"""Helpers for the rules tests: decks built from readable hands, a tiny action language, and the
hypothesis settings profiles.

Scenario tests deal from an explicit deck so they read like the rules::

    state = deal("As 2s 3s Kd Kh Kc 7h 8h 9h Tc", "4c 5c 6c 7c 8c 2d 3d 4d Jh Qh", upcard="Ts")
    state = step(state, "take", "discard Tc")

The first hand goes to the non-dealer (seat 0 unless ``dealer=0``), the second to the dealer;
``stock`` lists the top of the stock first, and the rest of the deck follows in card order.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from hypothesis import HealthCheck, settings

from arena.cards import (
    CARDS,
    Card,
    cards_to_mask,
    mask_to_cards,
    parse_card,
    parse_cards,
    parse_hand,
)
from arena.rules import (
    Action,
    HandState,
    Observation,
    Phase,
    RuleSet,
    legal_actions,
    new_deal,
    observe,
    play,
)
from arena.rules.actions import (
    ACCEPT_KNOCK,
    DRAW_STOCK,
    OPEN_HAND,
    PASS,
    TAKE_DISCARD,
    big_gin,
    discard,
    knock,
)

__all__ = [
    "DEALER",
    "NON_DEALER",
    "action",
    "assert_no_leak",
    "build_deck",
    "cards",
    "deal",
    "examples",
    "mask",
    "step",
]

#: Seats in scenarios dealt with the default ``dealer=1``.
NON_DEALER = 0
DEALER = 1

# --- hypothesis profiles ------------------------------------------------------------------------
# "fast" keeps the whole rules suite well under a minute; GIN_RULES_PROFILE=thorough runs twenty
# times as many examples (for a nightly job or after touching the meld search).
settings.register_profile(
    "gin-rules-fast",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("gin-rules-thorough", settings.get_profile("gin-rules-fast"))
_PROFILE = os.environ.get("GIN_RULES_PROFILE", "fast")
_FACTOR = {"fast": 1, "thorough": 20}[_PROFILE]


def examples(n: int) -> settings:
    """Hypothesis settings for a test that should run about ``n`` examples in the fast profile."""
    return settings(settings.get_profile(f"gin-rules-{_PROFILE}"), max_examples=n * _FACTOR)


# --- cards and decks ----------------------------------------------------------------------------


def cards(text: str) -> tuple[Card, ...]:
    """Cards from text, in the order given."""
    return parse_cards(text)


def mask(text: str) -> int:
    """A hand mask from text."""
    return cards_to_mask(parse_cards(text))


def build_deck(non_dealer: str, dealer: str, upcard: str, stock: str = "") -> tuple[Card, ...]:
    """A 52-card deck that deals these hands, this upcard and this stock (top first).

    Cards not named follow at the bottom of the stock in card order.
    """
    nd = parse_hand(non_dealer, (10,))
    dl = parse_hand(dealer, (10,))
    named = [*nd, *dl, parse_card(upcard), *parse_cards(stock)]
    parse_cards(named)  # raises DuplicateCardError if a card is named twice
    rest = [c for c in CARDS if c not in set(named)]
    dealt = [card for pair in zip(nd, dl, strict=True) for card in pair]
    return (*dealt, *named[20:], *rest)


def deal(
    non_dealer: str,
    dealer_hand: str,
    upcard: str,
    stock: str = "",
    rules: RuleSet | None = None,
    *,
    dealer: int = DEALER,
) -> HandState:
    """The first state of a deal with these hands (non-dealer's first), upcard and stock top."""
    deck = build_deck(non_dealer, dealer_hand, upcard, stock)
    return new_deal(rules or RuleSet(), dealer, deck=deck)


# --- actions ------------------------------------------------------------------------------------

_SIMPLE = {
    "pass": PASS,
    "take": TAKE_DISCARD,
    "draw": DRAW_STOCK,
    "accept": ACCEPT_KNOCK,
    "open": OPEN_HAND,
}


def action(text: str) -> Action:
    """An action from a short text: ``pass``, ``take``, ``draw``, ``discard 7h``, ``knock 7h``,
    ``knock 7h [7c 7d 7s | As 2s 3s]``, ``big_gin``, ``accept``, ``open``."""
    text = text.strip()
    if text in _SIMPLE:
        return _SIMPLE[text]
    head, _, rest = text.partition(" ")
    melds = None
    if "[" in rest:
        rest, _, declared = rest.partition("[")
        melds = tuple(mask(m) for m in declared.rstrip("]").split("|") if m.strip())
    if head == "discard":
        return discard(parse_card(rest.strip()))
    if head == "knock":
        return knock(parse_card(rest.strip()), melds)
    if head == "big_gin":
        return big_gin(melds)
    raise ValueError(f"unknown scenario action {text!r}")


def step(state: HandState, *actions: str | Action) -> HandState:
    """Play actions in turn, each by the player to act, through the validating door."""
    for a in actions:
        act = action(a) if isinstance(a, str) else a
        state = play(state, state.to_act, act)
    return state


def hand_text(state: HandState, seat: int) -> str:
    """A seat's hand as canonical text."""
    return " ".join(str(c) for c in state.hand_of(seat))


def texts(items: Iterable[object]) -> list[str]:
    """``str`` of each item."""
    return [str(i) for i in items]


# --- observations -------------------------------------------------------------------------------


#: Observation fields that hold cards, and those that hold none. A new field must be added to
#: one of the two (test_observation checks), so nothing new can leak unchecked.
CARD_FIELDS = frozenset(
    {
        "hand",
        "discard_pile",
        "upcard",
        "opponent_known",
        "opponent_hand",
        "taken",
        "pending_misknock",
        "history",
        "legal_actions",
    }
)
NON_CARD_FIELDS = frozenset(
    {
        "seat",
        "phase",
        "to_act",
        "dealer",
        "stock_count",
        "knock_limit",
        "multiplier",
        "opponent_hand_size",
    }
)


def visible_cards(seen: Observation) -> set[int]:
    """Every card an observation shows, anywhere in it."""
    out: set[int] = {*seen.hand, *seen.discard_pile, seen.upcard, *seen.opponent_known}
    out.update(seen.opponent_hand or ())
    if seen.taken is not None:
        out.add(seen.taken)
    if seen.pending_misknock is not None:
        out.add(seen.pending_misknock.card)
        for meld in seen.pending_misknock.melds or ():
            out.update(meld)
    out.update(e.card for e in seen.history if e.card is not None)
    for a in seen.legal_actions:
        if a.card is not None:
            out.add(a.card)
        for meld in a.melds or ():
            out.update(mask_to_cards(meld))
    return out


def assert_no_leak(state: HandState, seat: int, *, full_history: bool = True) -> Observation:
    """Check what ``observe(state, seat)`` shows: never the stock, never the opponent's
    concealed cards (unless a misknock exposed or laid down the hand), legal actions only to
    the player to act, the history as the seat may see it (all of it, or with
    ``full_history=False`` only the latest events, for speed). Returns the observation."""
    seen = observe(state, seat)
    other = 1 - seat
    visible = visible_cards(seen)
    stock = set(state.deck[state.stock_pos :])
    assert not visible & stock, f"stock cards leak to seat {seat}: {visible & stock}"
    opponent_open = state.exposed[other] or (
        state.pending is not None and state.pending.seat == other
    )
    if opponent_open:
        assert seen.opponent_hand == state.hand_of(other)
    else:
        concealed = {c for c in state.hand_of(other) if not state.known[other] >> c & 1}
        leaked = visible & concealed
        assert not leaked, f"concealed cards leak to seat {seat}: {leaked}"
        assert seen.opponent_hand is None
    if seat == state.to_act:
        assert seen.legal_actions == legal_actions(state)
    else:
        assert seen.legal_actions == ()
        assert seen.taken is None
    if seen.taken is not None and seen.phase is not Phase.DONE:
        # The card this seat just took from the pile, mid-turn: it is in the seat's hand.
        assert seen.taken in seen.hand, f"seat {seat} is told it took {seen.taken}"
    assert seen.stock_count == state.stock_count
    events = state.events if full_history else state.events[-2:]
    assert len(seen.history) == len(state.events)
    assert seen.history[len(state.events) - len(events) :] == tuple(
        e.public_for(seat) for e in events
    )
    assert seen.hand == state.hand_of(seat)
    assert seen.opponent_hand_size == len(state.hand_of(other))
    return seen
