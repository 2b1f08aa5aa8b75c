"""Per-player views of a deal: the only way state leaves the engine toward a player.

An :class:`Observation` holds what one seat may know: its own hand, the face-up discard pile,
the stock count (never its order), the cards the opponent is known to hold, the opponent's whole
hand only when a misknock exposed it, and the public history: the opponent's stock draws
without their card, and the opponent's misknocks with their deadwood only when the rules show
the hand anyway (``open_hand``, ``opponent_may_accept``), not under ``penalty_points`` (see
:meth:`arena.rules.hand.HandEvent.public_for`). Legal actions are filled in only for the player
to act. The face-down knock card of a finished deal is not in ``discard_pile``; the knock
event in the history names it.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.cards import Card, mask_to_cards
from arena.rules.actions import Action, Phase
from arena.rules.hand import HandEvent, HandState, legal_actions

__all__ = ["Observation", "PendingMisknock", "observe"]


@dataclass(frozen=True, slots=True)
class PendingMisknock:
    """A misknock the observer must answer (``opponent_may_accept``): what was laid down."""

    card: Card
    deadwood: int
    melds: tuple[tuple[Card, ...], ...] | None


@dataclass(frozen=True, slots=True)
class Observation:
    """What ``seat`` may know of a deal right now."""

    seat: int
    phase: Phase
    to_act: int
    dealer: int
    hand: tuple[Card, ...]
    discard_pile: tuple[Card, ...]
    stock_count: int
    upcard: Card
    knock_limit: int
    multiplier: int
    opponent_hand_size: int
    #: Cards the opponent took from the discard pile and has not discarded again.
    opponent_known: tuple[Card, ...]
    #: The opponent's whole hand, when a misknock exposed it (or laid it down for a response).
    opponent_hand: tuple[Card, ...] | None
    #: Card this seat just took from the discard pile (it may not be discarded traditionally).
    taken: Card | None
    pending_misknock: PendingMisknock | None
    history: tuple[HandEvent, ...]
    legal_actions: tuple[Action, ...]

    @property
    def discard_top(self) -> Card | None:
        return self.discard_pile[-1] if self.discard_pile else None

    @property
    def to_move(self) -> bool:
        """Whether this seat is the one to act."""
        return self.seat == self.to_act and self.phase is not Phase.DONE


def observe(state: HandState, seat: int) -> Observation:
    """The view of ``seat``; never the stock order or the opponent's concealed cards."""
    other = 1 - seat
    pending = None
    opponent_hand = None
    if state.exposed[other]:
        opponent_hand = mask_to_cards(state.hands[other])
    if state.pending is not None and state.pending.seat == other:
        p = state.pending
        opponent_hand = mask_to_cards(state.hands[other])
        melds = None if p.melds is None else tuple(mask_to_cards(m) for m in p.melds)
        pending = PendingMisknock(p.card, p.deadwood, melds)
    acting = seat == state.to_act
    return Observation(
        seat=seat,
        phase=state.phase,
        to_act=state.to_act,
        dealer=state.dealer,
        hand=mask_to_cards(state.hands[seat]),
        discard_pile=state.discards,
        stock_count=state.stock_count,
        upcard=state.upcard,
        knock_limit=state.knock_limit,
        multiplier=state.multiplier,
        opponent_hand_size=state.hands[other].bit_count(),
        opponent_known=mask_to_cards(state.known[other]),
        opponent_hand=opponent_hand,
        taken=state.taken if acting else None,
        pending_misknock=pending,
        history=state.views[seat],
        legal_actions=legal_actions(state) if acting else (),
    )
