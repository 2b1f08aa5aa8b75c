"""One deal as a state machine with immutable states.

``new_deal`` makes the first state from a deck order (or a seeded generator); ``legal_actions``
lists what the player to act may do; ``apply`` (trusted, fast) and ``play`` (validating, for
anything a bot sent) return the next state and never change their input. Each phase has its own
function, looked up by phase. A finished state carries a :class:`DealResult`.

>>> from arena.cards import parse_cards
>>> import random
>>> s = new_deal(RuleSet(), dealer=0, rng=random.Random(7))
>>> s.phase.value, s.to_act, s.stock_count, len(legal_actions(s))
('first_upcard', 1, 31, 2)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, NamedTuple, TypeVar

from arena.cards import CARD_VALUES, CARDS, Card, format_cards, mask_to_cards, shuffled_deck
from arena.rules.actions import (
    ACCEPT_KNOCK,
    BIG_GIN,
    DRAW_STOCK,
    OPEN_HAND,
    PASS,
    TAKE_DISCARD,
    Action,
    ActionKind,
    IllegalActionError,
    Phase,
    discard,
    knock,
)
from arena.rules.melds import (
    InvalidMeldError,
    best_arrangements,
    best_discard_mask,
    check_declared_melds,
    deadwood_cards_mask,
    deadwood_mask,
)
from arena.rules.ruleset import MisknockPolicy, RuleSet
from arena.rules.scoring import HandResult, Outcome, Role
from arena.rules.showdown import knock_deadwood, settle

__all__ = [
    "DealResult",
    "EventKind",
    "HandEvent",
    "HandState",
    "Misknock",
    "apply",
    "fallback_action",
    "legal_actions",
    "new_deal",
    "play",
]

T = TypeVar("T")

HAND_SIZE: Final = 10
DEAL_CARDS: Final = 2 * HAND_SIZE + 1  # the 21st card is the upcard


class EventKind(StrEnum):
    """Kinds of events in a deal's record."""

    PASS = "pass"
    TAKE_DISCARD = "take_discard"
    DRAW_STOCK = "draw_stock"
    DISCARD = "discard"
    KNOCK = "knock"
    GIN = "gin"
    BIG_GIN = "big_gin"
    MISKNOCK = "misknock"
    ACCEPT_KNOCK = "accept_knock"
    OPEN_HAND = "open_hand"
    DEAD = "dead"


@dataclass(frozen=True, slots=True)
class HandEvent:
    """Something that happened in a deal. ``card`` of a stock draw is private to ``seat``."""

    seat: int
    kind: EventKind
    card: Card | None = None
    #: Deadwood of a misknock (over the limit).
    deadwood: int | None = None
    #: A misknock whose hand stays concealed (``penalty_points``): the opponent's view of it
    #: leaves the deadwood out. Not part of the wire form.
    concealed: bool = False

    def public_for(self, viewer: int) -> HandEvent:
        """The event as ``viewer`` may see it: the opponent's stock draws hide the card.

        The opponent sees a misknock's deadwood when the rules show them the hand anyway
        (``open_hand``: exposed for the rest of the deal; ``opponent_may_accept``: laid down
        for the response), so it tells nothing new; under ``penalty_points`` the hand goes
        back concealed and its deadwood would say something about it, so it is left out.
        """
        if self.seat != viewer:
            if self.kind is EventKind.DRAW_STOCK:
                return HandEvent(self.seat, self.kind)
            if self.concealed:
                return HandEvent(self.seat, self.kind, self.card)
        return self

    def to_dict(self) -> dict[str, object]:
        """The wire form."""
        out: dict[str, object] = {"seat": self.seat, "event": self.kind.value}
        if self.card is not None:
            out["card"] = str(self.card)
        if self.deadwood is not None:
            out["deadwood"] = self.deadwood
        return out


@dataclass(frozen=True, slots=True)
class Misknock:
    """A knock over the limit: who, with which card, and their deadwood."""

    seat: int
    card: Card
    deadwood: int


@dataclass(frozen=True, slots=True)
class DealResult:
    """How a deal ended, in seats: the showdown (if any), misknock penalties, who won."""

    result: HandResult
    #: The seat that knocked (None for a dead hand).
    knocker: int | None
    #: Misknock penalty points credited to each seat (``penalty_points`` policy).
    penalties: tuple[int, int] = (0, 0)
    misknocks: tuple[Misknock, ...] = ()
    #: Both hands as they stood at the end of the deal (10 cards each, 11 for big gin).
    hands: tuple[tuple[Card, ...], tuple[Card, ...]] = ((), ())
    #: The card a knock or gin laid face down on the discard pile (None otherwise).
    knock_card: Card | None = None

    @property
    def outcome(self) -> Outcome:
        return self.result.outcome

    @property
    def winner(self) -> int | None:
        """The winning seat, or None (dead hand, tie)."""
        role = self.result.winner
        if role is None or self.knocker is None:
            return None
        return self.knocker if role is Role.KNOCKER else 1 - self.knocker

    @property
    def points(self) -> int:
        return self.result.points


@dataclass(frozen=True, slots=True)
class PendingKnock:
    """A misknock awaiting the opponent's choice (``opponent_may_accept``)."""

    seat: int
    card: Card
    melds: tuple[int, ...] | None
    deadwood: int
    #: The misknocker's ``taken``/``taken_from``, restored if the knock card stands as a discard.
    taken: Card | None = None
    taken_from: int | None = None


class HandState(NamedTuple):
    """A deal in progress. Hands and known cards are 52-bit masks; the deck is the full order.

    Immutable. A named tuple rather than a frozen dataclass for one reason: a transition makes a
    copy with a few fields changed, and that costs about 2 us here against 10-20 us for
    ``dataclasses.replace`` (measured; it is most of the cost of a move).

    Only :func:`arena.rules.observation.observe` should take state toward a player: it never
    shows the stock order or concealed cards.
    """

    rules: RuleSet
    dealer: int
    deck: tuple[Card, ...]
    hands: tuple[int, int]
    stock_pos: int
    #: The face-up discard pile, oldest first.
    discards: tuple[Card, ...]
    phase: Phase
    to_act: int
    knock_limit: int
    multiplier: int
    #: Card the player to act just took from the discard pile (the discard restriction).
    taken: Card | None = None
    #: The seat that discarded ``taken`` (None when it was the first upcard).
    taken_from: int | None = None
    #: A card just taken from the opponent's discard and discarded straight back (only with
    #: ``allow_discard_of_taken_card``): the opponent, to act, may take it back only to knock.
    returned: Card | None = None
    #: Whose first-upcard turn it is: 0 non-dealer, 1 dealer; 2 once the offer is over.
    upcard_offers: int = 0
    #: Only drawing from the stock is allowed (both passed the first upcard).
    stock_only: bool = False
    #: Only knock, gin or big gin is allowed (took a last-chance discard).
    knock_only: bool = False
    #: Cards each seat took from the discard pile and still holds (public knowledge).
    known: tuple[int, int] = (0, 0)
    #: Seats whose hand a misknock exposed (``open_hand``).
    exposed: tuple[bool, bool] = (False, False)
    penalties: tuple[int, int] = (0, 0)
    misknocks: tuple[Misknock, ...] = ()
    pending: PendingKnock | None = None
    events: tuple[HandEvent, ...] = ()
    result: DealResult | None = None
    #: The events as each seat may see them (kept up to date by every transition).
    views: tuple[tuple[HandEvent, ...], tuple[HandEvent, ...]] = ((), ())
    #: The knock card, face down on the discard pile once a knock or gin ended the deal.
    knock_card: Card | None = None

    @property
    def stock_count(self) -> int:
        return len(self.deck) - self.stock_pos

    @property
    def upcard(self) -> Card:
        """The first upcard of the deal (sets the Oklahoma limit)."""
        return self.deck[DEAL_CARDS - 1]

    @property
    def discard_top(self) -> Card | None:
        """The top face-up discard (a face-down knock card is not one)."""
        return self.discards[-1] if self.discards else None

    @property
    def stock(self) -> tuple[Card, ...]:
        """The stock, top first."""
        return self.deck[self.stock_pos :]

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.DONE

    def hand_of(self, seat: int) -> tuple[Card, ...]:
        return mask_to_cards(self.hands[seat])

    def __str__(self) -> str:
        return (
            f"{self.phase} seat {self.to_act} | hands {format_cards(self.hand_of(0))} / "
            f"{format_cards(self.hand_of(1))} | discard {format_cards(self.discards[-1:])} | "
            f"stock {self.stock_count}"
        )


_FIELD_INDEX: Final = {name: i for i, name in enumerate(HandState._fields)}
_VIEWS: Final = _FIELD_INDEX["views"]


def _evolve(state: HandState, **changes: Any) -> HandState:
    """A copy of the state with some fields changed (the engine's only way to 'modify')."""
    values = list(state)
    for name, value in changes.items():
        values[_FIELD_INDEX[name]] = value
    events = changes.get("events")
    if events is not None:
        old = len(state.events)
        if len(events) == old + 1:  # the usual case: one new event
            event = events[-1]
            v0, v1 = state.views
            values[_VIEWS] = ((*v0, event.public_for(0)), (*v1, event.public_for(1)))
        elif len(events) > old:
            # Events only ever grow within a deal: extend each seat's view by the new ones.
            new = events[old:]
            v0, v1 = state.views
            values[_VIEWS] = (
                v0 + tuple(e.public_for(0) for e in new),
                v1 + tuple(e.public_for(1) for e in new),
            )
    return tuple.__new__(HandState, values)


# --- dealing --------------------------------------------------------------------------------


def new_deal(
    rules: RuleSet,
    dealer: int,
    *,
    deck: Sequence[Card] | None = None,
    rng: random.Random | None = None,
) -> HandState:
    """Deal from an explicit deck order (52 cards) or a seeded generator.

    Ten cards each, one at a time, non-dealer first; the 21st card is the upcard; the rest
    is the stock, top first.
    """
    if dealer not in (0, 1):
        raise ValueError(f"dealer must be seat 0 or 1, not {dealer!r}")
    if deck is None:
        if rng is None:
            raise ValueError("new_deal needs a deck order or a seeded random.Random")
        deck = shuffled_deck(rng)
    deck = tuple(CARDS[int(c)] for c in deck)
    if len(deck) != 52 or len(set(deck)) != 52:
        raise ValueError("a deck must hold each of the 52 cards exactly once")
    first = 1 - dealer
    hands = [0, 0]
    for i in range(2 * HAND_SIZE):
        seat = first if i % 2 == 0 else dealer
        hands[seat] |= 1 << deck[i]
    upcard = deck[DEAL_CARDS - 1]
    spade_double = rules.spade_upcard_doubles and upcard // 13 == 3
    return HandState(
        rules=rules,
        dealer=dealer,
        deck=deck,
        hands=(hands[0], hands[1]),
        stock_pos=DEAL_CARDS,
        discards=(upcard,),
        phase=Phase.FIRST_UPCARD,
        to_act=first,
        knock_limit=rules.knock_limit_for(CARD_VALUES[upcard]),
        multiplier=2 if spade_double else 1,
    )


# --- legal actions --------------------------------------------------------------------------


def _restricted(state: HandState) -> int:
    """Mask of cards that may not be discarded now (the card just taken, traditionally)."""
    if state.taken is None or state.rules.allow_discard_of_taken_card:
        return 0
    return 1 << state.taken


def _legal_first_upcard(state: HandState) -> tuple[Action, ...]:
    return (TAKE_DISCARD, PASS)


def _legal_draw(state: HandState) -> tuple[Action, ...]:
    if state.stock_only or not state.discards:
        return (DRAW_STOCK,)
    if state.returned is not None and not _can_knock_with(state, state.to_act, state.returned):
        return (DRAW_STOCK,)  # the Gin Rummy Association proviso: back only to knock
    return (DRAW_STOCK, TAKE_DISCARD)


def _knockable(state: HandState, hand: int, restricted: int) -> list[Action]:
    """Knocks (gin included) that are within the limit, and big gin."""
    out: list[Action] = []
    whole = deadwood_mask(hand)
    if whole == 0 and _big_gin_allowed(state):
        out.append(BIG_GIN)
    limit = state.knock_limit
    # Discarding card c leaves at least ``whole - value(c)`` (add c back as deadwood to any
    # arrangement of the rest), exactly that when c is deadwood in a best arrangement.
    if whole - 10 > limit:
        return out
    free = deadwood_cards_mask(hand)
    m = hand & ~restricted
    knocks = []
    while m:
        low = m & -m
        m ^= low
        card = low.bit_length() - 1
        if whole - CARD_VALUES[card] > limit:
            continue
        if low & free or deadwood_mask(hand ^ low) <= limit:
            knocks.append(knock(card))
    return knocks + out


def _big_gin_allowed(state: HandState) -> bool:
    """Big gin is allowed now: by the rules, and after this turn's draw."""
    rules = state.rules
    if not rules.big_gin_allowed:
        return False
    return state.taken is None or rules.big_gin_after_taking_discard


def _discard_table() -> tuple[tuple[tuple[Action, ...], ...], ...]:
    """Discard actions for each byte of a hand mask (seven bytes), as ready-made tuples."""
    return tuple(
        tuple(
            tuple(discard(pos * 8 + b) for b in range(8) if value >> b & 1 and pos * 8 + b < 52)
            for value in range(256)
        )
        for pos in range(7)
    )


_DISCARD_BYTES: Final = _discard_table()


def _legal_discard(state: HandState) -> tuple[Action, ...]:
    hand = state.hands[state.to_act]
    restricted = _restricted(state)
    knocks = _knockable(state, hand, restricted)
    if state.knock_only:
        return tuple(knocks)
    m = hand & ~restricted
    t = _DISCARD_BYTES
    discards = (
        t[0][m & 255]
        + t[1][(m >> 8) & 255]
        + t[2][(m >> 16) & 255]
        + t[3][(m >> 24) & 255]
        + t[4][(m >> 32) & 255]
        + t[5][(m >> 40) & 255]
        + t[6][(m >> 48) & 255]
    )
    return (*discards, *knocks) if knocks else discards


def _legal_misknock_response(state: HandState) -> tuple[Action, ...]:
    return (ACCEPT_KNOCK, OPEN_HAND)


def _legal_last_chance(state: HandState) -> tuple[Action, ...]:
    if _can_knock_with(state, state.to_act, state.discards[-1]):
        return (TAKE_DISCARD, PASS)
    return (PASS,)


def _can_knock_with(state: HandState, seat: int, card: Card) -> bool:
    hand = state.hands[seat] | (1 << card)
    restricted = 0 if state.rules.allow_discard_of_taken_card else 1 << card
    probe = _evolve(state, taken=card)
    return bool(_knockable(probe, hand, restricted))


def _legal_done(state: HandState) -> tuple[Action, ...]:
    return ()


_LEGAL: Final[dict[Phase, Callable[[HandState], tuple[Action, ...]]]] = {
    Phase.FIRST_UPCARD: _legal_first_upcard,
    Phase.DRAW: _legal_draw,
    Phase.DISCARD: _legal_discard,
    Phase.MISKNOCK_RESPONSE: _legal_misknock_response,
    Phase.LAST_CHANCE: _legal_last_chance,
    Phase.DONE: _legal_done,
}


def legal_actions(state: HandState, seat: int | None = None) -> tuple[Action, ...]:
    """Legal actions of the player to act (empty for anyone else, or when the deal is over).

    Knocks are listed only when within the limit; a knock over the limit is still accepted
    by :func:`play` and :func:`apply`, as a misknock.
    """
    if seat is not None and seat != state.to_act:
        return ()
    return _LEGAL[state.phase](state)


# --- transitions ----------------------------------------------------------------------------


def _event(state: HandState, kind: EventKind, card: Card | None = None) -> tuple[HandEvent, ...]:
    return (*state.events, HandEvent(state.to_act, kind, card))


def _apply_first_upcard(state: HandState, action: Action) -> HandState:
    if action.kind is ActionKind.TAKE_DISCARD:
        return _take_discard(state)
    seat = state.to_act
    events = _event(state, EventKind.PASS)
    if state.upcard_offers == 0:
        return _evolve(state, to_act=1 - seat, upcard_offers=1, events=events)
    return _evolve(
        state, phase=Phase.DRAW, to_act=1 - seat, upcard_offers=2, stock_only=True, events=events
    )


def _take_discard(state: HandState) -> HandState:
    seat = state.to_act
    card = state.discards[-1]
    bit = 1 << card
    hands = _with(state.hands, seat, state.hands[seat] | bit)
    known = _with(state.known, seat, state.known[seat] | bit)
    return _evolve(
        state,
        hands=hands,
        known=known,
        discards=state.discards[:-1],
        phase=Phase.DISCARD,
        taken=card,
        # Nobody discarded the first upcard; any later top card is the opponent's discard.
        taken_from=None if state.phase is Phase.FIRST_UPCARD else 1 - seat,
        # Taking back a card the opponent just returned: only to knock (the GRA proviso).
        knock_only=state.returned is not None,
        returned=None,
        upcard_offers=2,
        events=_event(state, EventKind.TAKE_DISCARD, card),
    )


def _apply_draw(state: HandState, action: Action) -> HandState:
    if action.kind is ActionKind.TAKE_DISCARD:
        return _take_discard(state)
    seat = state.to_act
    card = state.deck[state.stock_pos]
    return _evolve(
        state,
        hands=_with(state.hands, seat, state.hands[seat] | (1 << card)),
        stock_pos=state.stock_pos + 1,
        phase=Phase.DISCARD,
        taken=None,
        taken_from=None,
        returned=None,
        stock_only=False,
        events=_event(state, EventKind.DRAW_STOCK, card),
    )


def _apply_discard(state: HandState, action: Action) -> HandState:
    if action.kind is ActionKind.DISCARD:
        assert action.card is not None
        return _discard_face_up(state, action.card, _event(state, EventKind.DISCARD, action.card))
    if action.kind is ActionKind.BIG_GIN:
        return _showdown(
            state, state.to_act, state.hands[state.to_act], action.melds, Outcome.BIG_GIN
        )
    assert action.card is not None
    seat = state.to_act
    hand10 = state.hands[seat] & ~(1 << action.card)
    dw = knock_deadwood(hand10, action.melds)
    if dw <= state.knock_limit:
        kind = Outcome.GIN if dw == 0 else Outcome.KNOCK
        return _showdown(state, seat, hand10, action.melds, kind, knock_card=action.card)
    return _misknock(state, action.card, action.melds, dw)


def _discard_face_up(state: HandState, card: Card, events: tuple[HandEvent, ...]) -> HandState:
    """Put a card on the discard pile and pass the turn (or end a dead hand)."""
    seat = state.to_act
    bit = 1 << card
    chance = state.rules.last_discard_chance and not state.knock_only
    # The card just taken from the opponent's discard, straight back: the opponent may take
    # it again only to knock (the Gin Rummy Association proviso).
    returned = card if card == state.taken and state.taken_from is not None else None
    changes: dict[str, Any] = {
        "hands": _with(state.hands, seat, state.hands[seat] & ~bit),
        "known": _with(state.known, seat, state.known[seat] & ~bit),
        "discards": (*state.discards, card),
        "taken": None,
        "taken_from": None,
        "returned": returned,
        "knock_only": False,
        "pending": None,
        "events": events,
    }
    stock_left = len(state.deck) - state.stock_pos
    if len(events) >= state.rules.max_actions_per_deal:
        # The safeguard against endless take-and-discard cycles.
        return _dead(_evolve(state, **changes))
    if stock_left <= state.rules.dead_hand_stock:
        if chance:
            return _evolve(state, phase=Phase.LAST_CHANCE, to_act=1 - seat, **changes)
        return _dead(_evolve(state, **changes))
    return _evolve(state, phase=Phase.DRAW, to_act=1 - seat, **changes)


def _dead(state: HandState) -> HandState:
    result = DealResult(
        HandResult(Outcome.DEAD, None, 0),
        knocker=None,
        penalties=state.penalties,
        misknocks=state.misknocks,
        hands=(state.hand_of(0), state.hand_of(1)),
    )
    return _evolve(
        state,
        phase=Phase.DONE,
        events=(*state.events, HandEvent(state.to_act, EventKind.DEAD)),
        result=result,
    )


def _misknock(state: HandState, card: Card, melds: tuple[int, ...] | None, dw: int) -> HandState:
    seat = state.to_act
    mk = Misknock(seat, card, dw)
    policy = state.rules.misknock
    concealed = policy is MisknockPolicy.PENALTY_POINTS
    events = (*state.events, HandEvent(seat, EventKind.MISKNOCK, card, dw, concealed))
    state = _evolve(state, misknocks=(*state.misknocks, mk))
    if policy is MisknockPolicy.OPPONENT_MAY_ACCEPT:
        return _evolve(
            state,
            phase=Phase.MISKNOCK_RESPONSE,
            to_act=1 - seat,
            taken=None,  # the misknocker's restriction is not the responder's
            pending=PendingKnock(seat, card, melds, dw, state.taken, state.taken_from),
            events=events,
        )
    if policy is MisknockPolicy.PENALTY_POINTS:
        penalties = _with(
            state.penalties, 1 - seat, state.penalties[1 - seat] + state.rules.misknock_penalty
        )
        state = _evolve(state, penalties=penalties)
    else:
        state = _evolve(state, exposed=_with(state.exposed, seat, True))
    return _discard_face_up(state, card, events)


def _apply_misknock_response(state: HandState, action: Action) -> HandState:
    pending = state.pending
    assert pending is not None
    events = _event(state, EventKind(action.kind.value))
    seat = pending.seat
    if action.kind is ActionKind.ACCEPT_KNOCK:
        hand10 = state.hands[seat] & ~(1 << pending.card)
        state = _evolve(state, to_act=seat, events=events)
        return _showdown(state, seat, hand10, pending.melds, Outcome.KNOCK, knock_card=pending.card)
    state = _evolve(
        state,
        to_act=seat,
        exposed=_with(state.exposed, seat, True),
        events=events,
        pending=None,
        taken=pending.taken,
        taken_from=pending.taken_from,
    )
    return _discard_face_up(state, pending.card, state.events)


def _apply_last_chance(state: HandState, action: Action) -> HandState:
    if action.kind is ActionKind.PASS:
        return _dead(_evolve(state, events=_event(state, EventKind.PASS)))
    return _evolve(_take_discard(state), knock_only=True)


def _apply_done(state: HandState, action: Action) -> HandState:
    raise IllegalActionError("the deal is over")


_APPLY: Final[dict[Phase, Callable[[HandState, Action], HandState]]] = {
    Phase.FIRST_UPCARD: _apply_first_upcard,
    Phase.DRAW: _apply_draw,
    Phase.DISCARD: _apply_discard,
    Phase.MISKNOCK_RESPONSE: _apply_misknock_response,
    Phase.LAST_CHANCE: _apply_last_chance,
    Phase.DONE: _apply_done,
}


def _showdown(
    state: HandState,
    knocker: int,
    knocker_hand: int,
    melds: tuple[int, ...] | None,
    kind: Outcome,
    knock_card: Card | None = None,
) -> HandState:
    """Settle a knock, gin or big gin and end the deal; the knock card goes face down."""
    multiplier = state.multiplier
    top = state.discard_top
    if state.rules.spade_discard_doubles and top is not None and top // 13 == 3:
        multiplier *= 2  # the house rule: a spade on top of the pile at the knock doubles
    result = settle(state.rules, kind, knocker_hand, state.hands[1 - knocker], melds, multiplier)
    hands = _with(state.hands, knocker, knocker_hand)
    events = state.events
    if not (events and events[-1].kind is EventKind.ACCEPT_KNOCK):
        event_kind = _SHOWDOWN_EVENTS.get(kind, EventKind.KNOCK)
        events = (*events, HandEvent(knocker, event_kind, knock_card))
    deal = DealResult(
        result,
        knocker=knocker,
        penalties=state.penalties,
        misknocks=state.misknocks,
        hands=(mask_to_cards(hands[0]), mask_to_cards(hands[1])),
        knock_card=knock_card,
    )
    return _evolve(
        state,
        hands=hands,
        phase=Phase.DONE,
        pending=None,
        events=events,
        result=deal,
        knock_card=knock_card,
    )


_SHOWDOWN_EVENTS: Final = {Outcome.GIN: EventKind.GIN, Outcome.BIG_GIN: EventKind.BIG_GIN}


def _with(pair: tuple[T, T], seat: int, value: T) -> tuple[T, T]:
    """The pair with one seat's entry replaced."""
    return (value, pair[1]) if seat == 0 else (pair[0], value)


def apply(state: HandState, action: Action) -> HandState:
    """The next state after a trusted action of the player to act (no validation)."""
    return _APPLY[state.phase](state, action)


def play(
    state: HandState, seat: int, action: Action, legal: tuple[Action, ...] | None = None
) -> HandState:
    """Validate an action from ``seat`` and apply it; raise :class:`IllegalActionError` if not.

    Legal means: listed by :func:`legal_actions`, or a knock with a card the player may discard
    (with declared melds, or over the limit: a misknock), or big gin with declared melds that
    meld all eleven cards. ``legal`` may pass ``legal_actions(state)`` when the caller has it.
    """
    if state.phase is Phase.DONE:
        raise IllegalActionError("the deal is over")
    if seat != state.to_act:
        raise IllegalActionError(f"seat {seat} acted, but it is seat {state.to_act}'s turn")
    kind = action.kind
    if legal is None:
        legal = legal_actions(state)
    if action in legal:
        return apply(state, action)
    if state.phase is Phase.DISCARD and kind in (ActionKind.KNOCK, ActionKind.BIG_GIN):
        _check_knock(state, action)
        return apply(state, action)
    kinds = sorted({a.kind.value for a in legal})
    if kind is ActionKind.TAKE_DISCARD and state.phase is Phase.DRAW and state.returned is not None:
        raise IllegalActionError(
            f"{state.returned} was just discarded back to you after you discarded it: you may "
            "take it back only to knock this turn, and no knock is possible with it"
        )
    if kind.value not in kinds:
        raise IllegalActionError(
            f"{kind} is not allowed in the {state.phase} phase (allowed: {', '.join(kinds)})"
        )
    hand = state.hands[seat]
    if action.card is not None and not hand & (1 << action.card):
        raise IllegalActionError(
            f"{action.card} is not in the hand ({format_cards(mask_to_cards(hand))})"
        )
    if action.card is not None and action.card == state.taken:
        raise IllegalActionError(
            f"{action.card} was just taken from the discard pile and may not be discarded"
        )
    raise IllegalActionError(f"{action} is not legal now")


def _check_knock(state: HandState, action: Action) -> None:
    seat = state.to_act
    hand = state.hands[seat]
    if action.kind is ActionKind.BIG_GIN:
        if not state.rules.big_gin_allowed:
            raise IllegalActionError("big gin is not allowed under these rules")
        if not _big_gin_allowed(state):
            raise IllegalActionError(
                "big gin is not allowed after taking the discard under these rules "
                "(big_gin_after_taking_discard is false): only after a stock draw"
            )
        try:
            dw = knock_deadwood(hand, action.melds)
        except InvalidMeldError as exc:
            raise IllegalActionError(f"big gin: {exc}") from None
        if dw:
            raise IllegalActionError(
                f"big gin claimed, but {dw} points of the eleven cards are unmelded"
            )
        return
    assert action.card is not None
    if not hand & (1 << action.card):
        raise IllegalActionError(f"knock with {action.card}, which is not in the hand")
    if _restricted(state) & (1 << action.card):
        raise IllegalActionError(
            f"{action.card} was just taken from the discard pile and may not be discarded"
        )
    if action.melds is not None:
        try:
            check_declared_melds(hand & ~(1 << action.card), action.melds)
        except InvalidMeldError as exc:
            raise IllegalActionError(f"knock: {exc}") from None


def fallback_action(state: HandState) -> Action:
    """The safe action taken for a player that faulted (RULES.md): never a knock.

    Pass; draw from the stock; discard the drawn card, or if that is not allowed (or there is
    none), the highest-value deadwood card; decline a misknock by keeping the open-hand penalty.
    """
    phase = state.phase
    if phase in (Phase.FIRST_UPCARD, Phase.LAST_CHANCE):
        return PASS
    if phase is Phase.DRAW:
        return DRAW_STOCK
    if phase is Phase.MISKNOCK_RESPONSE:
        return OPEN_HAND
    if phase is Phase.DISCARD:
        last = state.events[-1] if state.events else None
        hand = state.hands[state.to_act]
        restricted = _restricted(state)
        drawn = last.card if last is not None and last.kind is EventKind.DRAW_STOCK else None
        if drawn is not None and not restricted & (1 << drawn):
            return discard(drawn)
        return discard(_highest_deadwood(hand, restricted))
    raise IllegalActionError("the deal is over")


def _highest_deadwood(hand: int, restricted: int) -> int:
    """The highest-value deadwood card of the best arrangement (ties: higher rank, then suit).

    When every allowed card is melded, the discard that leaves the least deadwood.
    """
    candidates = best_arrangements(hand)[0].deadwood_cards & ~restricted
    if not candidates:
        card, _ = best_discard_mask(hand, restricted)
        return int(card)
    return max(mask_to_cards(candidates), key=lambda c: (CARD_VALUES[c], c % 13, c // 13))
