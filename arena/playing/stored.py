"""The match record as it is printed, stored and served: a typed msgspec tree, read once.

``gin-arena match`` prints it, the database keeps it (the summary in ``match_results``, each
deal's log in ``hands``), the API serves it and a bot's ``/end`` gets its own side of it. The JSON
shape is stable (ARCHITECTURE.md; ``MatchRecord`` in ``api_spec/openapi.yaml``): the fields
below are its keys, in order. Seats are ``"a"`` and ``"b"``; a game has ``winner``, ``points``,
``totals`` and ``hands``; a hand has ``outcome``, ``winner`` and ``points``, and keeps its deck
and actions so it replays.

Writing is one :meth:`StoredMatch.to_dict` (the JSON-ready form). Reading is one
:func:`parse_record`: msgspec checks every field's type, the rule set loads, and anything else
is a :class:`RecordFormatError` of one line naming the first wrong place. The schema version
(:data:`SCHEMA_VERSION`) is kept beside the record (``match_results.schema_version``), not in
its JSON, so the printed and served form is unchanged.

>>> parse_record({"seat": "c", "reason": "gone"}, StoredForfeit)
Traceback (most recent call last):
...
arena.playing.stored.RecordFormatError: not a match record: Invalid enum value 'c' - at `$.seat`
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar, overload

import msgspec

from arena.playing.players import FaultKind
from arena.rules.actions import Action, ActionKind
from arena.rules.record import DealRecord, parse_deck
from arena.rules.ruleset import RuleSet, RuleSetError
from arena.rules.scoring import Outcome

__all__ = [
    "SCHEMA_VERSION",
    "ActionEntry",
    "BySeat",
    "LatencySummary",
    "RecordFormatError",
    "Seat",
    "StoredAction",
    "StoredDeal",
    "StoredFault",
    "StoredForfeit",
    "StoredGame",
    "StoredHand",
    "StoredHandMisknock",
    "StoredLayoff",
    "StoredMatch",
    "StoredMisknock",
    "StoredUnfinished",
    "deal_logs",
    "deal_record",
    "parse_record",
    "raw_answer_from_json",
    "raw_answer_to_json",
    "record_digest",
]

#: The version of the record's shape that this code writes and reads.
SCHEMA_VERSION = 1

Seat = Literal["a", "b"]
_T = TypeVar("_T")


class RecordFormatError(ValueError):
    """A stored record is not one this arena reads: a wrong type, a missing field, rules that
    do not load, another schema version. The message is one line."""


def raw_answer_to_json(raw: bytes) -> str | dict[str, str]:
    """A bot's answer bytes as JSON: the text itself when it is UTF-8 (without NUL), else
    ``{"base64": ...}`` of the bytes (standard alphabet, padded). Lossless either way."""
    if b"\x00" not in raw:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return {"base64": base64.b64encode(raw).decode("ascii")}


def raw_answer_from_json(data: object) -> bytes:
    """The bytes that :func:`raw_answer_to_json` stored."""
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, dict) and isinstance(data.get("base64"), str):
        return base64.b64decode(data["base64"], validate=True)
    raise ValueError(f"not a stored raw answer: {data!r:.60}")


class ActionEntry:
    """One decision: who, what was applied, how long the player took, any fault, and the
    bot's answer exactly as received (remote bots only).

    As JSON: ``[seat, action, latency_ms]``, then the fault kind (or null) and the raw answer
    (see :func:`raw_answer_to_json`) when there is one; in-process players have no raw answer.
    (A plain class, not a dataclass, so that msgspec hands it to this module's hooks.)
    """

    __slots__ = ("action", "fault", "latency_ms", "raw", "seat")

    def __init__(
        self,
        seat: int,
        action: Action,
        latency_ms: float,
        fault: FaultKind | None = None,
        raw: bytes | None = None,
    ) -> None:
        self.seat = seat
        self.action = action
        self.latency_ms = latency_ms
        self.fault = fault
        #: The body of the bot's 200 answer as received, or None (no answer, or not over HTTP).
        self.raw = raw

    def _key(self) -> tuple[object, ...]:
        return (self.seat, self.action, self.latency_ms, self.fault, self.raw)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActionEntry) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ActionEntry{self._key()!r}"

    def to_list(self) -> list[object]:
        out: list[object] = [self.seat, self.action.to_dict(), round(self.latency_ms, 3)]
        if self.fault is not None or self.raw is not None:
            out.append(self.fault)
        if self.raw is not None:
            out.append(raw_answer_to_json(self.raw))
        return out

    @classmethod
    def from_list(cls, data: object) -> ActionEntry:
        """Parse the JSON form; a ValueError says what is wrong with it."""
        # Nearly every entry of a log is [seat, plain action, latency]: checked here at the cost
        # of a few type tests and one lookup (a long match has thousands of entries).
        if type(data) is list and len(data) == 3:
            seat, action, latency = data
            if (
                type(seat) is int
                and 0 <= seat <= 1
                and (type(latency) is float or type(latency) is int)
            ):
                return cls(seat, _parse_action(action), float(latency))
        if not isinstance(data, list) or not 3 <= len(data) <= 5:
            raise ValueError("an action entry is [seat, action, latency_ms, fault?, raw?]")
        seat, action, latency = data[0], data[1], data[2]
        if type(seat) is not int or seat not in (0, 1):
            raise ValueError(f"an action entry's seat is 0 or 1, not {seat!r:.20}")
        if not isinstance(latency, int | float) or isinstance(latency, bool):
            raise ValueError(f"an action entry's latency is a number, not {latency!r:.20}")
        fault = FaultKind(data[3]) if len(data) > 3 and data[3] is not None else None
        raw = raw_answer_from_json(data[4]) if len(data) > 4 else None
        return cls(seat, _parse_action(action), float(latency), fault, raw)


#: Plain actions (a kind, maybe a card) already parsed: a few hundred at most, and nearly every
#: entry of a log is one, so reading a record parses each once.
_PLAIN_ACTIONS: dict[tuple[str, str | None], Action] = {}


def _parse_action(data: object) -> Action:
    """:meth:`Action.from_dict`, remembered for plain actions (no melds, no other field)."""
    if type(data) is not dict:
        return Action.from_dict(data)  # type: ignore[arg-type]  # it raises the error
    kind, card = data.get("action"), data.get("card")
    if type(kind) is not str or len(data) != (1 if card is None else 2):
        return Action.from_dict(data)
    if card is not None and type(card) is not str:
        return Action.from_dict(data)
    key = (kind, card)
    action = _PLAIN_ACTIONS.get(key)
    if action is None:
        action = _PLAIN_ACTIONS[key] = Action.from_dict(data)
    return action


class BySeat(msgspec.Struct, Generic[_T], frozen=True):
    """One value for each seat: ``{"a": ..., "b": ...}``."""

    a: _T
    b: _T

    def of(self, seat: Seat) -> _T:
        return self.a if seat == "a" else self.b


class StoredAction(msgspec.Struct, frozen=True, omit_defaults=True):
    """An action in its wire form (``{"action": "knock", "card": "7h", "melds": [...]}``)."""

    action: ActionKind
    card: str | None = None
    melds: list[list[str]] | None = None


class StoredHandMisknock(msgspec.Struct, frozen=True):
    """A misknock within a deal."""

    seat: Seat
    card: str
    deadwood: int


class StoredLayoff(msgspec.Struct, frozen=True):
    """A defender card laid off onto the knocker's meld ``meld`` (an index)."""

    card: str
    meld: int


class StoredHand(msgspec.Struct, frozen=True, omit_defaults=True):
    """One deal: its result and its replayable log (``scored_in`` only under Hollywood)."""

    index: int
    dealer: Seat
    outcome: Outcome
    winner: Seat | None
    points: int
    knocker: Seat | None
    knocker_deadwood: int | None
    defender_deadwood: int | None
    multiplier: int
    penalties: BySeat[int]
    misknocks: list[StoredHandMisknock]
    hands: BySeat[str]
    knocker_melds: list[str]
    defender_melds: list[str]
    layoffs: list[StoredLayoff]
    deck: str
    actions: list[ActionEntry]
    #: Hollywood scoring only: the games (indices) whose points this deal changed.
    scored_in: list[int] | None = None


class StoredDeal(msgspec.Struct, frozen=True):
    """The deal a forfeit cut short: enough to replay it up to the forfeit."""

    game: int
    index: int
    dealer: Seat
    deck: str
    actions: list[ActionEntry]


class StoredGame(msgspec.Struct, frozen=True):
    """One game: its settlement and its hands."""

    index: int
    first_dealer: Seat
    winner: Seat
    points: BySeat[int]
    totals: BySeat[int]
    game_bonus: BySeat[int]
    box_bonus: BySeat[int]
    hands_won: BySeat[int]
    shutout: bool
    net: int
    hands: list[StoredHand]


class StoredUnfinished(msgspec.Struct, frozen=True):
    """The game a forfeit interrupted: hand points so far and the deals played."""

    points: BySeat[int]
    hands: list[StoredHand]


class StoredForfeit(msgspec.Struct, frozen=True):
    """Who forfeited (None: both) and why, in words."""

    seat: Seat | None
    reason: str


class StoredFault(msgspec.Struct, frozen=True):
    """A bot fault: where it happened, what kind, and the fallback applied."""

    seat: Seat
    kind: FaultKind
    detail: str
    game: int
    deal: int
    fallback: StoredAction | None
    latency_ms: float


class StoredMisknock(msgspec.Struct, frozen=True):
    """A misknock, with the game and deal it happened in."""

    seat: Seat
    game: int
    deal: int
    card: str
    deadwood: int


class LatencySummary(msgspec.Struct, frozen=True):
    """One seat's request latencies over the match (milliseconds; null without calls)."""

    calls: int
    p50: float | None
    p99: float | None
    max: float | None


class StoredMatch(msgspec.Struct, frozen=True):
    """A whole match, finished or forfeited."""

    match_id: str
    seed: int | str
    players: BySeat[str]
    #: The rule set's JSON form (:meth:`arena.rules.RuleSet.to_dict`); see :meth:`ruleset`.
    rules: dict[str, Any]
    winner: Seat | None
    games_won: BySeat[int]
    forfeit: StoredForfeit | None
    games: list[StoredGame]
    unfinished_game: StoredUnfinished | None
    interrupted_deal: StoredDeal | None
    faults: list[StoredFault]
    misknocks: list[StoredMisknock]
    latency_ms: BySeat[LatencySummary]

    def ruleset(self) -> RuleSet:
        """The rule set the match was played under (checked when the record was read)."""
        return RuleSet.from_dict(self.rules)

    def all_hands(self) -> list[tuple[int, StoredHand]]:
        """Every complete deal with its game index, the unfinished game's deals last."""
        out = [(g.index, h) for g in self.games for h in g.hands]
        if self.unfinished_game is not None:
            out += [(len(self.games), h) for h in self.unfinished_game.hands]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form: what is printed, stored and served."""
        data: dict[str, Any] = msgspec.to_builtins(self, enc_hook=_encode)
        return data


def _encode(value: object) -> object:
    if isinstance(value, ActionEntry):
        return value.to_list()
    raise NotImplementedError(f"not part of a match record: {type(value).__name__}")


def _decode(kind: type, value: object) -> object:
    if kind is ActionEntry:
        return ActionEntry.from_list(value)
    raise NotImplementedError(f"not part of a match record: {kind.__name__}")


@overload
def parse_record(data: object, *, schema_version: int = ...) -> StoredMatch: ...
@overload
def parse_record(data: object, into: type[_T], *, schema_version: int = ...) -> _T: ...
def parse_record(
    data: object, into: type[Any] = StoredMatch, *, schema_version: int = SCHEMA_VERSION
) -> Any:
    """``data`` (JSON-ready, as :meth:`StoredMatch.to_dict` made it) as a typed ``into``.

    Raises :class:`RecordFormatError` (one line) if it is not one: a field of the wrong type or
    missing, an action that does not parse, rules that do not load, another schema version.
    """
    if schema_version != SCHEMA_VERSION:
        raise RecordFormatError(
            f"match record schema version {schema_version} is not one this arena reads"
            f" (it reads version {SCHEMA_VERSION})"
        )
    try:
        record = msgspec.convert(data, into, dec_hook=_decode)
        if isinstance(record, StoredMatch):
            record.ruleset()
    except msgspec.ValidationError as exc:
        raise RecordFormatError(f"not a match record: {_line(exc)}") from None
    except RuleSetError as exc:
        raise RecordFormatError(f"not a match record: {_line(exc)} - at `$.rules`") from None
    return record


def _line(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


def deal_record(rules: RuleSet, deal: StoredHand | StoredDeal) -> DealRecord:
    """The engine's record of one stored deal, to replay (:func:`arena.rules.replay_deal`);
    ValueError if its deck does not parse."""
    actions = tuple((e.seat, e.action) for e in deal.actions)
    return DealRecord(rules, 0 if deal.dealer == "a" else 1, parse_deck(deal.deck), actions)


def deal_logs(data: Mapping[str, Any]) -> list[Any]:
    """Every deal's log in a JSON-ready record (games, then the unfinished game), then the
    deal a forfeit cut short: what :func:`record_digest` covers, in that order."""
    logs = [hand for game in data["games"] for hand in game["hands"]]
    if data.get("unfinished_game"):
        logs += data["unfinished_game"]["hands"]
    if data.get("interrupted_deal"):
        logs.append(data["interrupted_deal"])
    return logs


def record_digest(hand_logs: Sequence[Any]) -> str:
    """SHA-256 of the canonical JSON of deal logs (what replay verification rechecks)."""
    canonical = json.dumps(hand_logs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
