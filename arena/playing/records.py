"""The match record as the runner makes it: results, every deal's replayable log, faults,
latencies, and how a forfeit came about.

These are domain values (seats 0 and 1, the engine's results); :meth:`MatchRecord.to_stored`
turns one into its printed and stored form (:mod:`arena.playing.stored`), and
:meth:`MatchRecord.to_dict` into that form's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from arena.playing.players import FaultKind
from arena.playing.stored import (
    ActionEntry,
    BySeat,
    LatencySummary,
    Seat,
    StoredAction,
    StoredDeal,
    StoredFault,
    StoredForfeit,
    StoredGame,
    StoredHand,
    StoredHandMisknock,
    StoredLayoff,
    StoredMatch,
    StoredMisknock,
    StoredUnfinished,
)
from arena.rules.actions import ActionKind
from arena.rules.hand import DealResult
from arena.rules.record import DealRecord, parse_deck
from arena.rules.ruleset import RuleSet
from arena.rules.scoring import GameResult
from arena.states import ForfeitKind

__all__ = [
    "SEATS",
    "FaultEntry",
    "Forfeit",
    "GameRecord",
    "HandRecord",
    "InterruptedDeal",
    "MatchRecord",
    "seat_letter",
]

SEATS: tuple[Seat, Seat] = ("a", "b")


def seat_letter(seat: int | None) -> Seat | None:
    """``"a"``/``"b"`` for seat 0/1."""
    return None if seat is None else SEATS[seat]


def _pair(values: tuple[int, int]) -> BySeat[int]:
    return BySeat(values[0], values[1])


class Forfeit(NamedTuple):
    """Who forfeited (None: both), how, and why in words."""

    seat: int | None
    kind: ForfeitKind
    reason: str


@dataclass(frozen=True, slots=True)
class FaultEntry:
    """A bot fault: where it happened, what kind, and the fallback applied (its wire form)."""

    seat: int
    kind: FaultKind
    detail: str
    game: int
    deal: int
    fallback: dict[str, Any] | None
    latency_ms: float

    def to_stored(self) -> StoredFault:
        fallback = self.fallback
        return StoredFault(
            SEATS[self.seat],
            self.kind,
            self.detail,
            self.game,
            self.deal,
            None
            if fallback is None
            else StoredAction(
                ActionKind(fallback["action"]), fallback.get("card"), fallback.get("melds")
            ),
            round(self.latency_ms, 3),
        )


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

    def to_stored(self) -> StoredHand:
        r = self.result
        h = r.result
        knocker = r.knocker
        return StoredHand(
            index=self.index,
            dealer=SEATS[self.dealer],
            outcome=h.outcome,
            winner=seat_letter(r.winner),
            points=h.points,
            knocker=seat_letter(knocker),
            knocker_deadwood=h.knocker_deadwood if knocker is not None else None,
            defender_deadwood=h.defender_deadwood if knocker is not None else None,
            multiplier=h.multiplier,
            penalties=_pair(r.penalties),
            misknocks=[
                StoredHandMisknock(SEATS[m.seat], str(m.card), m.deadwood) for m in r.misknocks
            ],
            hands=BySeat(*(" ".join(str(c) for c in r.hands[s]) for s in (0, 1))),
            knocker_melds=[" ".join(map(str, m)) for m in h.knocker_melds],
            defender_melds=[" ".join(map(str, m)) for m in h.defender_melds],
            layoffs=[StoredLayoff(str(lay.card), lay.meld_index) for lay in h.layoffs],
            deck=self.deck,
            actions=list(self.actions),
            scored_in=None if self.scored_in is None else list(self.scored_in),
        )


@dataclass(frozen=True, slots=True)
class InterruptedDeal:
    """The deal a forfeit cut short: enough to replay it up to the forfeit."""

    game: int
    index: int
    dealer: int
    deck: str
    actions: tuple[ActionEntry, ...]

    def to_stored(self) -> StoredDeal:
        return StoredDeal(self.game, self.index, SEATS[self.dealer], self.deck, list(self.actions))


@dataclass(frozen=True, slots=True)
class GameRecord:
    """One game: its settlement and its hands."""

    index: int
    first_dealer: int
    result: GameResult
    hands: tuple[HandRecord, ...]

    def to_stored(self) -> StoredGame:
        r = self.result
        return StoredGame(
            index=self.index,
            first_dealer=SEATS[self.first_dealer],
            winner=SEATS[r.winner],
            points=_pair(r.points),
            totals=_pair(r.totals),
            game_bonus=_pair(r.game_bonus),
            box_bonus=_pair(r.box_bonus),
            hands_won=_pair(r.hands_won),
            shutout=r.shutout,
            net=r.net,
            hands=[h.to_stored() for h in self.hands],
        )


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
    forfeit: Forfeit | None = None
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

    def to_stored(self) -> StoredMatch:
        """The printed and stored form (the forfeit's kind is kept apart: see ``forfeit``)."""
        forfeit = self.forfeit
        return StoredMatch(
            match_id=self.match_id,
            seed=self.seed,
            players=BySeat(self.players[0], self.players[1]),
            rules=self.rules.to_dict(),
            winner=seat_letter(self.winner),
            games_won=_pair(self.games_won),
            forfeit=None
            if forfeit is None
            else StoredForfeit(seat_letter(forfeit.seat), forfeit.reason),
            games=[g.to_stored() for g in self.games],
            unfinished_game=None
            if not self.unfinished and forfeit is None
            else StoredUnfinished(
                _pair(self.unfinished_points), [h.to_stored() for h in self.unfinished]
            ),
            interrupted_deal=None if self.interrupted is None else self.interrupted.to_stored(),
            faults=[f.to_stored() for f in self.faults],
            misknocks=[
                StoredMisknock(SEATS[m.seat], gi, h.index, str(m.card), m.deadwood)
                for gi, h in self.all_hands()
                for m in h.result.misknocks
            ],
            latency_ms=BySeat(
                _latency_summary(self.latencies[0]), _latency_summary(self.latencies[1])
            ),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON of :meth:`to_stored` (what ``gin-arena match`` prints)."""
        return self.to_stored().to_dict()


def _latency_summary(values: tuple[float, ...]) -> LatencySummary:
    if not values:
        return LatencySummary(0, None, None, None)
    ordered = sorted(values)
    n = len(ordered)

    def pct(p: float) -> float:
        return round(ordered[min(n - 1, int(p * n))], 3)

    return LatencySummary(n, pct(0.5), pct(0.99), round(ordered[-1], 3))
