"""Wire types of the bot protocol ``gin-arena/1`` and the conversion from domain values.

These msgspec structs are the machine form of ``api_spec/bot-protocol.yaml`` (a test checks the
two agree and that the golden examples in ``api_spec/examples/`` round-trip). The arena encodes
them; the SDK decodes (and so validates) them. Everything is relative to the bot receiving the
request: ``"you"`` and ``"opponent"``, never seats, and never the match seed (it would reveal
the deck).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

from arena.cards import Card, CardError, parse_card
from arena.playing.players import Turn
from arena.rules.actions import (
    Action,
    ActionError,
    ActionKind,
    InvalidActionError,
    discard,
    knock,
    simple,
)
from arena.rules.hand import DealResult, HandEvent
from arena.rules.observation import Observation

__all__ = [
    "PROTOCOL_VERSION",
    "ActRequest",
    "BotInfo",
    "EndRequest",
    "StartRequest",
    "Strikes",
    "WireAction",
    "act_request",
    "action_from_wire",
    "decode_action",
    "decode_info",
]

PROTOCOL_VERSION = "gin-arena/1"

Who = Literal["you", "opponent"]
PhaseName = Literal["first_upcard", "draw", "discard", "misknock_response", "last_chance"]
ActionName = Literal[
    "pass", "take_discard", "draw_stock", "discard", "knock", "big_gin", "accept_knock", "open_hand"
]
EventName = Literal[
    "pass",
    "take_discard",
    "draw_stock",
    "discard",
    "knock",
    "gin",
    "big_gin",
    "misknock",
    "accept_knock",
    "open_hand",
    "dead",
]
OutcomeName = Literal["knock", "undercut", "gin", "big_gin", "dead", "tie"]


class WireAction(msgspec.Struct, omit_defaults=True):
    """An action, as a bot sends it (and as legal actions are listed)."""

    action: ActionName
    card: str | None = None
    melds: list[list[str]] | None = None


class WireEvent(msgspec.Struct, omit_defaults=True):
    """A public event of the current deal (the opponent's stock draws carry no card)."""

    player: Who
    event: EventName
    card: str | None = None
    deadwood: int | None = None


class Pair(msgspec.Struct):
    """A number for each side."""

    you: int
    opponent: int


class PendingMisknock(msgspec.Struct):
    """The opponent's misknock awaiting your choice: the knock card, deadwood and declared melds."""

    card: str
    deadwood: int
    melds: list[list[str]] | None


class MisknockInfo(msgspec.Struct):
    player: Who
    card: str
    deadwood: int


class Layoff(msgspec.Struct):
    card: str
    meld: int


class PreviousDeal(msgspec.Struct):
    """The previous deal's result, both hands revealed."""

    outcome: OutcomeName
    winner: Who | None
    points: int
    knocker: Who | None
    knocker_deadwood: int | None
    defender_deadwood: int | None
    your_hand: list[str]
    opponent_hand: list[str]
    knocker_melds: list[list[str]]
    defender_melds: list[list[str]]
    layoffs: list[Layoff]
    penalties: Pair
    misknocks: list[MisknockInfo]


class Strikes(msgspec.Struct):
    """Your strikes (faults) so far in the match, and how many forfeit it."""

    count: int
    limit: int


class ActRequest(msgspec.Struct):
    """Body of ``POST /act``: everything the bot may know, and what it may do."""

    protocol: str
    match_id: str
    request_id: str
    game: int
    deal: int
    phase: PhaseName
    hand: list[str]
    discard_top: str | None
    discard_pile: list[str]
    stock_count: int
    upcard: str
    knock_limit: int
    multiplier: int
    dealer: Who
    opponent_hand_size: int
    opponent_known: list[str]
    opponent_hand: list[str] | None
    taken_card: str | None
    pending_misknock: PendingMisknock | None
    history: list[WireEvent]
    legal_actions: list[WireAction]
    deadline_ms: int
    scores: Pair
    games_won: Pair
    rules: dict[str, Any]
    previous_deal: PreviousDeal | None = None
    #: Added within gin-arena/1 (optional: absent from older arenas' requests).
    previous_rtt_ms: float | None = None
    strikes: Strikes | None = None


class StartRequest(msgspec.Struct):
    """Body of ``POST /start``."""

    protocol: str
    match_id: str
    opponent: str
    rules: dict[str, Any]


class EndRequest(msgspec.Struct):
    """Body of ``POST /end``: the match record; ``you`` says which seat (a or b) was yours."""

    protocol: str
    match_id: str
    you: Literal["a", "b"]
    record: dict[str, Any]


class BotInfo(msgspec.Struct):
    """Answer of ``GET /``."""

    protocol: str
    name: str
    author: str = ""
    version: str = ""


# --- domain -> wire ---------------------------------------------------------------------------

_NAMES = tuple(str(Card(i)) for i in range(52))


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [_NAMES[c] for c in cards]


def _who(seat: int | None, me: int) -> Who | None:
    if seat is None:
        return None
    return "you" if seat == me else "opponent"


def _action(action: Action) -> WireAction:
    melds = None if action.melds is None else action.to_dict()["melds"]
    return WireAction(
        action.kind.value,
        None if action.card is None else _NAMES[action.card],
        melds,
    )


_ACTION_CACHE: dict[Action, WireAction] = {}


def _cached_action(action: Action) -> WireAction:
    wire = _ACTION_CACHE.get(action)
    if wire is None:
        wire = _action(action)
        if action.melds is None:
            _ACTION_CACHE[action] = wire
    return wire


def _event(event: HandEvent, me: int) -> WireEvent:
    return WireEvent(
        "you" if event.seat == me else "opponent",
        event.kind.value,
        None if event.card is None else _NAMES[event.card],
        event.deadwood,
    )


def previous_deal(result: DealResult, me: int) -> PreviousDeal:
    """The revealed result of a deal, seen from seat ``me``."""
    h = result.result
    knocked = result.knocker is not None
    return PreviousDeal(
        outcome=h.outcome.value,
        winner=_who(result.winner, me),
        points=h.points,
        knocker=_who(result.knocker, me),
        knocker_deadwood=h.knocker_deadwood if knocked else None,
        defender_deadwood=h.defender_deadwood if knocked else None,
        your_hand=_cards(result.hands[me]),
        opponent_hand=_cards(result.hands[1 - me]),
        knocker_melds=[_cards(m) for m in h.knocker_melds],
        defender_melds=[_cards(m) for m in h.defender_melds],
        layoffs=[Layoff(_NAMES[lay.card], lay.meld_index) for lay in h.layoffs],
        penalties=Pair(result.penalties[me], result.penalties[1 - me]),
        misknocks=[
            MisknockInfo("you" if m.seat == me else "opponent", _NAMES[m.card], m.deadwood)
            for m in result.misknocks
        ],
    )


class HistoryCache:
    """Wire events of the current deal, converted once each (a deal's history only grows)."""

    __slots__ = ("events", "key")

    def __init__(self) -> None:
        self.key: tuple[str, int, int] | None = None
        self.events: list[WireEvent] = []

    def for_turn(self, turn: Turn) -> list[WireEvent]:
        obs = turn.observation
        key = (turn.match_id, turn.game, turn.deal)
        history = obs.history
        if key != self.key or len(history) < len(self.events):
            self.key, self.events = key, []
        me = obs.seat
        self.events.extend(_event(e, me) for e in history[len(self.events) :])
        return self.events


def act_request(
    turn: Turn, rules_dict: dict[str, Any], cache: HistoryCache | None = None
) -> ActRequest:
    """The ``POST /act`` body for a turn (only what that seat may know).

    A player that sends many requests passes a :class:`HistoryCache` so each event of a deal is
    converted once, not once per request.
    """
    obs: Observation = turn.observation
    me = obs.seat
    pending = obs.pending_misknock
    return ActRequest(
        protocol=PROTOCOL_VERSION,
        match_id=turn.match_id,
        request_id=turn.request_id,
        game=turn.game,
        deal=turn.deal,
        phase=obs.phase.value,  # type: ignore[arg-type]
        hand=_cards(obs.hand),
        discard_top=None if obs.discard_top is None else _NAMES[obs.discard_top],
        discard_pile=_cards(obs.discard_pile),
        stock_count=obs.stock_count,
        upcard=_NAMES[obs.upcard],
        knock_limit=obs.knock_limit,
        multiplier=obs.multiplier,
        dealer="you" if obs.dealer == me else "opponent",
        opponent_hand_size=obs.opponent_hand_size,
        opponent_known=_cards(obs.opponent_known),
        opponent_hand=None if obs.opponent_hand is None else _cards(obs.opponent_hand),
        taken_card=None if obs.taken is None else _NAMES[obs.taken],
        pending_misknock=None
        if pending is None
        else PendingMisknock(
            _NAMES[pending.card],
            pending.deadwood,
            None if pending.melds is None else [_cards(m) for m in pending.melds],
        ),
        history=[_event(e, me) for e in obs.history] if cache is None else cache.for_turn(turn),
        legal_actions=[_cached_action(a) for a in obs.legal_actions],
        deadline_ms=turn.deadline_ms,
        scores=Pair(turn.game_points[me], turn.game_points[1 - me]),
        games_won=Pair(turn.games_won[me], turn.games_won[1 - me]),
        rules=rules_dict,
        previous_deal=None if turn.previous_deal is None else previous_deal(turn.previous_deal, me),
        # Rounded as the record keeps latencies, so a seat replay rebuilds the request exactly.
        previous_rtt_ms=None if turn.previous_rtt_ms is None else round(turn.previous_rtt_ms, 3),
        strikes=Strikes(turn.strikes, turn.rules.max_strikes),
    )


# --- wire -> domain ---------------------------------------------------------------------------

_action_decoder = msgspec.json.Decoder(WireAction)
_info_decoder = msgspec.json.Decoder(BotInfo)
_T = TypeVar("_T")


class WireError(ValueError):
    """A bot's answer is not valid: ``kind`` is ``bad_json`` or ``schema``."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


def _decode(decoder: msgspec.json.Decoder[_T], body: bytes, what: str) -> _T:
    """``decoder.decode(body)``; whatever the body, a value or a :class:`WireError`.

    msgspec recurses once per nesting level, so a small body nested a thousand deep (in a
    field the schema ignores, even) raises :class:`RecursionError`: that is ``bad_json`` too.
    """
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise WireError("schema", f"the answer does not match the {what} schema: {exc}") from None
    except msgspec.DecodeError as exc:
        raise WireError("bad_json", f"the answer is not valid JSON: {exc}") from None
    except RecursionError:
        raise WireError("bad_json", "the answer's JSON is nested too deeply to read") from None


def decode_action(body: bytes) -> Action:
    """Parse a bot's ``/act`` answer; raise :class:`WireError` (bad_json or schema), only."""
    return action_from_wire(_decode(_action_decoder, body, "action"))


def decode_info(body: bytes) -> BotInfo:
    """Parse a bot's ``GET /`` answer; raise :class:`WireError` (bad_json or schema), only."""
    return _decode(_info_decoder, body, "bot info")


def action_from_wire(wire: WireAction) -> Action:
    """Convert a decoded wire action into an engine action (card text checked).

    ``"melds": []`` means what an absent or null ``melds`` means, *not declared* (many
    serialisers write an empty list for "none"): a knock then lays down the best arrangement.
    """
    try:
        if not wire.melds:
            kind = _KINDS[wire.action]
            if kind is ActionKind.DISCARD or kind is ActionKind.KNOCK:
                if wire.card is None:
                    raise InvalidActionError(f"a {kind} action needs a card")
                card = parse_card(wire.card)
                return discard(card) if kind is ActionKind.DISCARD else knock(card)
            if wire.card is not None:
                raise InvalidActionError(f"a {kind} action takes no card")
            return simple(kind)
        data: dict[str, Any] = {"action": wire.action, "melds": wire.melds}
        if wire.card is not None:
            data["card"] = wire.card
        return Action.from_dict(data)
    except (ActionError, CardError) as exc:
        raise WireError("schema", str(exc)) from None


_KINDS = {k.value: k for k in ActionKind}
