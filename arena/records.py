"""The match record: results, every deal's replayable log, faults and latencies.

The JSON form is stable (ARCHITECTURE.md, ``gin-arena match``): seats are ``"a"`` (first
player) and ``"b"``; a game has ``winner``, ``points``, ``totals`` and ``hands``; a hand has
``outcome``, ``winner`` and ``points``. Each hand also keeps its deck and actions so it replays.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from arena.rules.actions import Action
from arena.rules.hand import DealResult
from arena.rules.record import DealRecord, parse_deck
from arena.rules.ruleset import RuleSet
from arena.rules.scoring import GameResult

__all__ = [
    "SEATS",
    "ActionEntry",
    "FaultEntry",
    "GameRecord",
    "HandRecord",
    "InterruptedDeal",
    "MatchRecord",
    "raw_answer_from_json",
    "raw_answer_to_json",
    "seat_letter",
]

SEATS = ("a", "b")


def seat_letter(seat: int | None) -> str | None:
    """``"a"``/``"b"`` for seat 0/1."""
    return None if seat is None else SEATS[seat]


def _pair(values: tuple[int, int]) -> dict[str, int]:
    return {"a": values[0], "b": values[1]}


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


@dataclass(frozen=True, slots=True)
class ActionEntry:
    """One decision: who, what was applied, how long the player took, any fault, and the
    bot's answer exactly as received (remote bots only).

    As JSON: ``[seat, action, latency_ms]``, then the fault kind (or null) and the raw answer
    (see :func:`raw_answer_to_json`) when there is one; in-process players have no raw answer.
    """

    seat: int
    action: Action
    latency_ms: float
    fault: str | None = None
    #: The body of the bot's 200 answer as received, or None (no answer, or not over HTTP).
    raw: bytes | None = None

    def to_list(self) -> list[Any]:
        out: list[Any] = [self.seat, self.action.to_dict(), round(self.latency_ms, 3)]
        if self.fault is not None or self.raw is not None:
            out.append(self.fault)
        if self.raw is not None:
            out.append(raw_answer_to_json(self.raw))
        return out

    @classmethod
    def from_list(cls, data: list[Any]) -> ActionEntry:
        fault = data[3] if len(data) > 3 else None
        raw = raw_answer_from_json(data[4]) if len(data) > 4 else None
        return cls(int(data[0]), Action.from_dict(data[1]), float(data[2]), fault, raw)


@dataclass(frozen=True, slots=True)
class FaultEntry:
    """A bot fault: where it happened, what kind, and the fallback applied."""

    seat: int
    kind: str
    detail: str
    game: int
    deal: int
    fallback: dict[str, Any] | None
    latency_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": SEATS[self.seat],
            "kind": self.kind,
            "detail": self.detail,
            "game": self.game,
            "deal": self.deal,
            "fallback": self.fallback,
            "latency_ms": round(self.latency_ms, 3),
        }


@dataclass(frozen=True, slots=True)
class HandRecord:
    """One deal: its result and its replayable log."""

    index: int
    dealer: int
    deck: str
    actions: tuple[ActionEntry, ...]
    result: DealResult
    #: Hollywood scoring only: the games (indices) whose points this deal changed.
    scored_in: tuple[int, ...] | None = None

    def deal_record(self, rules: RuleSet) -> DealRecord:
        """The engine's record of this deal, for replay."""
        return DealRecord(
            rules,
            self.dealer,
            parse_deck(self.deck),
            tuple((e.seat, e.action) for e in self.actions),
        )

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        h = r.result
        knocker = r.knocker
        return {
            "index": self.index,
            "dealer": SEATS[self.dealer],
            "outcome": h.outcome.value,
            "winner": seat_letter(r.winner),
            "points": h.points,
            "knocker": seat_letter(knocker),
            "knocker_deadwood": h.knocker_deadwood if knocker is not None else None,
            "defender_deadwood": h.defender_deadwood if knocker is not None else None,
            "multiplier": h.multiplier,
            "penalties": _pair(r.penalties),
            "misknocks": [
                {"seat": SEATS[m.seat], "card": str(m.card), "deadwood": m.deadwood}
                for m in r.misknocks
            ],
            "hands": {SEATS[s]: " ".join(str(c) for c in r.hands[s]) for s in (0, 1)},
            "knocker_melds": [" ".join(map(str, m)) for m in h.knocker_melds],
            "defender_melds": [" ".join(map(str, m)) for m in h.defender_melds],
            "layoffs": [{"card": str(lay.card), "meld": lay.meld_index} for lay in h.layoffs],
            "deck": self.deck,
            "actions": [e.to_list() for e in self.actions],
            **({} if self.scored_in is None else {"scored_in": list(self.scored_in)}),
        }


@dataclass(frozen=True, slots=True)
class InterruptedDeal:
    """The deal a forfeit cut short: enough to replay it up to the forfeit."""

    game: int
    index: int
    dealer: int
    deck: str
    actions: tuple[ActionEntry, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "index": self.index,
            "dealer": SEATS[self.dealer],
            "deck": self.deck,
            "actions": [e.to_list() for e in self.actions],
        }


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game: its settlement and its hands."""

    index: int
    first_dealer: int
    result: GameResult
    hands: tuple[HandRecord, ...]

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "index": self.index,
            "first_dealer": SEATS[self.first_dealer],
            "winner": SEATS[r.winner],
            "points": _pair(r.points),
            "totals": _pair(r.totals),
            "game_bonus": _pair(r.game_bonus),
            "box_bonus": _pair(r.box_bonus),
            "hands_won": _pair(r.hands_won),
            "shutout": r.shutout,
            "net": r.net,
            "hands": [h.to_dict() for h in self.hands],
        }


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """A whole match, finished or forfeited."""

    match_id: str
    seed: int | str
    rules: RuleSet
    players: tuple[str, str]
    winner: int | None
    games: tuple[GameRecord, ...]
    faults: tuple[FaultEntry, ...] = ()
    #: ``(seat, reason)`` of a forfeit, or None.
    forfeit: tuple[int | None, str] | None = None
    #: Games in progress when a forfeit stopped the match (hands played so far).
    unfinished: tuple[HandRecord, ...] = ()
    latencies: tuple[tuple[float, ...], tuple[float, ...]] = field(default=((), ()))
    #: Hand points of the game a forfeit interrupted, by seat.
    unfinished_points: tuple[int, int] = (0, 0)
    #: The deal a forfeit cut short (its actions up to the forfeit), if any.
    interrupted: InterruptedDeal | None = None

    @property
    def games_won(self) -> tuple[int, int]:
        wins = [0, 0]
        for g in self.games:
            wins[g.result.winner] += 1
        return (wins[0], wins[1])

    def all_hands(self) -> list[tuple[int, HandRecord]]:
        """Every deal with its game index, the unfinished game's deals last."""
        out = [(g.index, h) for g in self.games for h in g.hands]
        out += [(len(self.games), h) for h in self.unfinished]
        return out

    def to_dict(self) -> dict[str, Any]:
        misknocks = [
            {
                "seat": SEATS[m.seat],
                "game": gi,
                "deal": h.index,
                "card": str(m.card),
                "deadwood": m.deadwood,
            }
            for gi, h in self.all_hands()
            for m in h.result.misknocks
        ]
        return {
            "match_id": self.match_id,
            "seed": self.seed,
            "players": {"a": self.players[0], "b": self.players[1]},
            "rules": self.rules.to_dict(),
            "winner": seat_letter(self.winner),
            "games_won": _pair(self.games_won),
            "forfeit": None
            if self.forfeit is None
            else {"seat": seat_letter(self.forfeit[0]), "reason": self.forfeit[1]},
            "games": [g.to_dict() for g in self.games],
            "unfinished_game": None
            if not self.unfinished and self.forfeit is None
            else {
                "points": _pair(self.unfinished_points),
                "hands": [h.to_dict() for h in self.unfinished],
            },
            "interrupted_deal": None if self.interrupted is None else self.interrupted.to_dict(),
            "faults": [f.to_dict() for f in self.faults],
            "misknocks": misknocks,
            "latency_ms": {SEATS[s]: _latency_summary(self.latencies[s]) for s in (0, 1)},
        }


def _latency_summary(values: tuple[float, ...]) -> dict[str, float | int | None]:
    if not values:
        return {"calls": 0, "p50": None, "p99": None, "max": None}
    ordered = sorted(values)
    n = len(ordered)

    def pct(p: float) -> float:
        return round(ordered[min(n - 1, int(p * n))], 3)

    return {"calls": n, "p50": pct(0.5), "p99": pct(0.99), "max": round(ordered[-1], 3)}
