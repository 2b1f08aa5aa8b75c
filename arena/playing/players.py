"""The Player interface, faults, and in-process players for tests, benchmarks and the demo.

A player is asked to act with a :class:`Turn` (its observation plus the match context) and
answers with an :class:`~arena.rules.Action` or, for a remote bot that misbehaved, a
:class:`Fault`. Players never raise over a bot's behaviour; the match runner applies the fault
policy.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol, runtime_checkable

from arena.cards import CARD_VALUES, Card
from arena.rules.actions import (
    ACCEPT_KNOCK,
    DRAW_STOCK,
    OPEN_HAND,
    PASS,
    TAKE_DISCARD,
    Action,
    ActionKind,
    Phase,
    discard,
    knock,
)
from arena.rules.hand import DealResult
from arena.rules.melds import RANK_MASKS, deadwood_mask, min_discard_deadwood_mask
from arena.rules.observation import Observation
from arena.rules.ruleset import RuleSet

__all__ = [
    "Exchange",
    "Fault",
    "FaultKind",
    "HeuristicPlayer",
    "MatchContext",
    "Player",
    "RandomPlayer",
    "Turn",
    "take_exchange",
]


class FaultKind(StrEnum):
    """Ways a bot can fail a request (RULES.md: faults, not rules events); the match record
    keeps them as this enum (a fault's ``kind``, an action entry's ``fault``)."""

    TIMEOUT = "timeout"
    CONNECTION = "connection"
    STATUS = "status"
    BODY_TOO_LARGE = "body_too_large"
    BAD_JSON = "bad_json"
    SCHEMA = "schema"
    ILLEGAL_ACTION = "illegal_action"
    REDIRECT = "redirect"
    UNREACHABLE = "unreachable"
    #: At the start of a match: the bot refused the arena's signature (``/start`` got 401/403).
    SIGNATURE_REFUSED = "signature_refused"


@dataclass(frozen=True, slots=True)
class Fault:
    """A bot's failure to answer a request properly."""

    kind: FaultKind
    detail: str


@dataclass(frozen=True, slots=True)
class Exchange:
    """What a remote player's last ``act`` went through on the wire (the record keeps it).

    ``raw`` is the body of the bot's ``200`` answer exactly as received (at most the 64 KiB
    cap), or None when there was no such answer (a timeout, a dropped connection, a 500);
    ``latency_ms`` is the exchange's latency as the transport measured it, never more than
    the deadline (a timeout records the deadline).
    """

    raw: bytes | None
    latency_ms: float


def take_exchange(player: object) -> Exchange | None:
    """The :class:`Exchange` of ``player``'s last ``act``, once (None for in-process players).

    A player that talks to a remote bot has a ``take_exchange()`` method; the match runner
    calls this right after each ``act``.
    """
    take = getattr(player, "take_exchange", None)
    if take is None:
        return None
    exchange = take()
    return exchange if isinstance(exchange, Exchange) else None


@dataclass(frozen=True, slots=True)
class MatchContext:
    """What a player learns when a match starts."""

    match_id: str
    seat: int
    rules: RuleSet
    opponent: str
    seed: int | str


@dataclass(frozen=True, slots=True)
class Turn:
    """One request to act: the observation and where the match stands."""

    observation: Observation
    match_id: str
    game: int
    deal: int
    request_id: str
    rules: RuleSet
    #: Hand points of the current game, by seat.
    game_points: tuple[int, int]
    #: Games won so far, by seat.
    games_won: tuple[int, int]
    deadline_ms: int
    #: The previous deal's result with both hands revealed, at a player's first request of a deal.
    previous_deal: DealResult | None = None
    #: The latency the arena measured for this player's previous request of the match (ms;
    #: None at its first request): a remote bot's round trip as the transport timed it.
    previous_rtt_ms: float | None = None
    #: This player's strikes (faults) so far in the match; ``rules.max_strikes`` forfeits.
    strikes: int = 0


@runtime_checkable
class Player(Protocol):
    """Anything that can play a seat: in-process code or a remote bot."""

    name: str

    def start(self, context: MatchContext) -> Fault | None:
        """A match begins; a fault here means the player cannot be reached (forfeit)."""

    def act(self, turn: Turn) -> Action | Fault:
        """Choose an action for the observed position."""

    def end(self, summary: dict[str, object]) -> None:
        """The match is over (full results)."""


@dataclass
class RandomPlayer:
    """Uniformly random among the legal actions, from its own seeded generator.

    The generator restarts from the seed at every match start, so a player reused for a second
    match plays it as a fresh one would (a rerun reproduces the match).
    """

    seed: int | str = 0
    name: str = "random"
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"random-player:{self.seed}")

    def start(self, context: MatchContext) -> Fault | None:
        self.rng = random.Random(f"random-player:{self.seed}")
        return None

    def act(self, turn: Turn) -> Action | Fault:
        return self.rng.choice(turn.observation.legal_actions)

    def end(self, summary: dict[str, object]) -> None:
        return None


def _mask(cards: tuple[Card, ...]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def potential(hand: int, card: int) -> int:
    """How much a card helps toward melds: same-rank cards and suit neighbours in the hand."""
    rank = card % 13
    score = (hand & RANK_MASKS[rank] & ~(1 << card)).bit_count()
    for d in (-2, -1, 1, 2):
        r = rank + d
        if 0 <= r < 13 and hand & (1 << (card - rank + r)):
            score += 2 if abs(d) == 1 else 1
    return score


@dataclass
class HeuristicPlayer:
    """A sound, quick player: keeps melds and near-melds, sheds high deadwood, knocks with care.

    * Takes the discard when it lowers the best reachable deadwood by a meaningful amount.
    * Discards the card leaving the least deadwood; ties go to the card with the least meld
      potential and the highest value, avoiding cards the opponent is known to want.
    * Knocks on gin; otherwise knocks when within the limit and the deadwood is low for the
      stage of the deal (the longer the deal, the likelier an undercut, so the lower the bar).
    """

    name: str = "heuristic"
    #: Knock at once while the stock is long when deadwood is at most this.
    early_knock: int = 10
    #: With a short stock, knock only with at most this much deadwood.
    late_knock: int = 4

    def start(self, context: MatchContext) -> Fault | None:
        return None

    def end(self, summary: dict[str, object]) -> None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        obs = turn.observation
        phase = obs.phase
        if phase is Phase.MISKNOCK_RESPONSE:
            return ACCEPT_KNOCK if self._accept_is_better(obs) else OPEN_HAND
        legal = obs.legal_actions
        if phase in (Phase.FIRST_UPCARD, Phase.DRAW, Phase.LAST_CHANCE):
            take = TAKE_DISCARD in legal and self._wants(obs)
            if take:
                return TAKE_DISCARD
            return PASS if PASS in legal else DRAW_STOCK
        return self._discard(obs)

    def _wants(self, obs: Observation) -> bool:
        top = obs.discard_top
        if top is None:
            return False
        hand = _mask(obs.hand)
        if obs.phase is Phase.LAST_CHANCE:
            return True  # only offered when taking it lets us knock
        now = deadwood_mask(hand)
        after = min_discard_deadwood_mask(hand | (1 << top), 1 << top)
        # Taking forms or extends a meld when deadwood drops by more than the card's value.
        return after < now and (now - after >= 4 or after <= obs.knock_limit)

    def _accept_is_better(self, obs: Observation) -> bool:
        # Accepting scores the misknock as a knock: good for us when we would undercut.
        pending = obs.pending_misknock
        if pending is None:
            return False
        return deadwood_mask(_mask(obs.hand)) <= pending.deadwood

    def _discard(self, obs: Observation) -> Action:
        hand = _mask(obs.hand)
        legal = obs.legal_actions
        knocks = [a for a in legal if a.kind is ActionKind.KNOCK]
        if any(a.kind is ActionKind.BIG_GIN for a in legal):
            return next(a for a in legal if a.kind is ActionKind.BIG_GIN)
        candidates = [a.card for a in legal if a.kind is ActionKind.DISCARD and a.card is not None]
        if not candidates:  # only knocks are allowed (last chance)
            return min(knocks, key=lambda a: deadwood_mask(hand & ~(1 << a.card)))  # type: ignore[operator]
        wanted = _mask(obs.opponent_known)
        best: tuple[int, int, int, int] | None = None
        choice = candidates[0]
        for card in candidates:
            rest = hand & ~(1 << card)
            dw = deadwood_mask(rest)
            feeds = potential(wanted, card) if wanted else 0
            key = (dw, feeds, potential(rest, card), -CARD_VALUES[card])
            if best is None or key < best:
                best, choice = key, card
        assert best is not None
        dw = best[0]
        if knocks:
            if dw == 0:
                return knock(choice)
            bar = self.early_knock if obs.stock_count >= 20 else self.late_knock
            if dw <= min(bar, obs.knock_limit):
                return knock(choice)
        return discard(choice)
