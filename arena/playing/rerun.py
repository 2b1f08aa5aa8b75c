"""A stored match played again with your bot in one seat: where does it answer differently?

:func:`rerun_match` replays a finished match's deals (each deal's deck and dealer as the record
keeps them, checked against its seed) through the real match runner: your bot (any
:class:`~arena.playing.players.Player`, usually an HTTP player) sits in one seat, and the other
seat answers as the stored bot did, from the record (its actions, its faults, its latencies),
for as long as your bot answers as the stored one did. The first step where it answers
differently is the :class:`Divergence`: where (game, deal and step, the action's place in the
deal's log, all from 0), both answers and the request your bot was sent. From there on the
position is new, so the other seat is played by a live opponent to the end of the match,
on the same deals (the seed deals them), and the result stands beside the stored one.

The requests your bot gets are those the stored bot got (the same match id, request ids, scores
and history), except ``previous_rtt_ms``, which is your bot's own measured round trip.

Pure apart from the players it is given: no database, no HTTP of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from arena.playing.match import MatchRunner
from arena.playing.players import (
    Exchange,
    Fault,
    FaultKind,
    MatchContext,
    Player,
    Turn,
    take_exchange,
)
from arena.playing.records import SEATS
from arena.playing.stored import (
    ActionEntry,
    Seat,
    StoredDeal,
    StoredHand,
    StoredMatch,
    raw_answer_to_json,
)
from arena.protocol.wire import act_request
from arena.rules.actions import Action, ActionError
from arena.rules.game import deal_deck
from arena.rules.hand import HandState, apply, new_deal, play
from arena.rules.record import parse_deck

__all__ = [
    "Answer",
    "Divergence",
    "RerunError",
    "RerunResult",
    "StepAddress",
    "StoredStep",
    "answer_of_reply",
    "check_decks",
    "rerun_match",
    "stored_steps",
]


class RerunError(ValueError):
    """The stored match cannot be rerun (one line: why)."""


@dataclass(frozen=True, slots=True, order=True)
class StepAddress:
    """One step of a match: game, deal, and the action's index in that deal's log (from 0).

    Written ``GAME:DEAL:STEP``. The replay viewer shows the position before that action as
    step STEP of the deal (its anchor ``g{GAME+1}-d{DEAL+1}-s{STEP}``).
    """

    game: int
    deal: int
    step: int

    def __str__(self) -> str:
        return f"{self.game}:{self.deal}:{self.step}"

    def same_deal(self, other: StepAddress) -> bool:
        """Whether ``other`` is a step of the same deal."""
        return (self.game, self.deal) == (other.game, other.deal)

    @property
    def anchor(self) -> str:
        """The replay viewer's address of the position at this step."""
        return f"g{self.game + 1}-d{self.deal + 1}-s{self.step}"

    @classmethod
    def parse(cls, text: str) -> StepAddress:
        """``"1:2:17"``; ValueError (one line) if it is not three numbers from 0."""
        parts = text.split(":")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise ValueError(f"a step is GAME:DEAL:STEP, three numbers from 0, not {text!r}")
        game, deal, step = (int(p) for p in parts)
        return cls(game, deal, step)


@dataclass(frozen=True, slots=True)
class StoredStep:
    """One entry of the stored match's logs in play order, with its deal's deck and dealer."""

    address: StepAddress
    entry: ActionEntry
    deck: str
    dealer: Seat


def stored_steps(record: StoredMatch) -> list[StoredStep]:
    """Every action of the record in the order it was played: the games' deals, the
    unfinished game's, then the deal a forfeit cut short."""
    deals: list[tuple[int, StoredHand | StoredDeal]] = [
        (game.index, hand) for game in record.games for hand in game.hands
    ]
    if record.unfinished_game is not None:
        deals += [(len(record.games), hand) for hand in record.unfinished_game.hands]
    if record.interrupted_deal is not None:
        deals.append((record.interrupted_deal.game, record.interrupted_deal))
    return [
        StoredStep(StepAddress(game, deal.index, i), entry, deal.deck, deal.dealer)
        for game, deal in deals
        for i, entry in enumerate(deal.actions)
    ]


@dataclass(frozen=True, slots=True)
class Answer:
    """What a bot answered at one step: the action applied (wire form) or the fault, the
    answer's body as received (null without a 200 answer), and its latency."""

    action: dict[str, Any] | None
    fault: str | None
    detail: str
    raw: str | dict[str, str] | None
    latency_ms: float | None

    def text(self) -> str:
        """One line: ``{"action": "discard", "card": "Kc"}`` or ``fault timeout: ...``."""
        if self.fault is not None:
            return f"fault {self.fault}" + (f": {self.detail}" if self.detail else "")
        return msgspec.json.encode(self.action).decode()

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "fault": self.fault,
            "detail": self.detail,
            "raw": self.raw,
            "latency_ms": self.latency_ms,
        }


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first step where your bot answered differently from the stored one."""

    address: StepAddress
    seat: Seat
    stored: Answer
    yours: Answer
    #: The ``/act`` body your bot was sent there: the position as it saw it.
    request: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": str(self.address),
            "game": self.address.game,
            "deal": self.address.deal,
            "index": self.address.step,
            "anchor": self.address.anchor,
            "seat": self.seat,
            "stored": self.stored.to_dict(),
            "yours": self.yours.to_dict(),
            "request": self.request,
        }


@dataclass(frozen=True, slots=True)
class RerunResult:
    """What a rerun found: the divergence (None: your bot answered as the stored one did at
    every step it was asked), how many of your bot's answers agreed before it, and both
    matches' records."""

    seat: Seat
    divergence: Divergence | None
    agreed: int
    stored: StoredMatch
    rerun: StoredMatch
    opponent: str


def _key(action: Action) -> tuple[object, ...]:
    """An action compared as a decision: declared melds in any order are the same melds."""
    return (action.kind, action.card, None if action.melds is None else sorted(action.melds))


def _stored_answer(entry: ActionEntry, detail: str) -> Answer:
    raw = None if entry.raw is None else raw_answer_to_json(entry.raw)
    if entry.fault is not None:
        return Answer(None, entry.fault.value, detail, raw, round(entry.latency_ms, 3))
    return Answer(entry.action.to_dict(), None, "", raw, round(entry.latency_ms, 3))


def answer_of_reply(reply: Action | Fault, exchange: Exchange | None, state: HandState) -> Answer:
    """Your bot's reply as the runner will take it (an action the engine refuses is an
    ``illegal_action`` fault)."""
    raw = None if exchange is None or exchange.raw is None else raw_answer_to_json(exchange.raw)
    latency = None if exchange is None else round(exchange.latency_ms, 3)
    if isinstance(reply, Action):
        try:
            play(state, state.to_act, reply)
        except ActionError as exc:
            reply = Fault(FaultKind.ILLEGAL_ACTION, f"{reply}: {exc}")
        else:
            return Answer(reply.to_dict(), None, "", raw, latency)
    return Answer(None, reply.kind.value, reply.detail, raw, latency)


def _same(stored: ActionEntry, yours: Answer, reply: Action | Fault) -> bool:
    if stored.fault is not None or yours.fault is not None:
        return stored.fault is not None and stored.fault.value == yours.fault
    return isinstance(reply, Action) and _key(reply) == _key(stored.action)


@dataclass
class _Script:
    """The stored match as both seats answered it, consumed one request at a time while the
    rerun follows it (the runner asks the seats in the order the record played them)."""

    record: StoredMatch
    seat: int
    steps: list[StoredStep]
    details: Iterator[str]
    following: bool = True
    done: int = 0
    agreed: int = 0
    divergence: Divergence | None = None
    state: HandState | None = None
    _deal: tuple[int, int] | None = field(default=None, repr=False)

    def next(self, turn: Turn) -> StoredStep | None:
        """The stored step this request replays (None once the rerun left the record)."""
        if not self.following:
            return None
        if self.done >= len(self.steps):
            self.following = False  # the stored match ends here (a forfeit at the start)
            return None
        step = self.steps[self.done]
        where = step.address
        actor = turn.observation.seat
        if (where.game, where.deal) != (turn.game, turn.deal) or step.entry.seat != actor:
            raise RerunError(
                f"step {where}: the stored match does not replay from its seed here (the rerun"
                f" asks {'ab'[actor]} in game {turn.game} deal {turn.deal})"
            )
        if self._deal != (where.game, where.deal):
            self._deal = (where.game, where.deal)
            rules = self.record.ruleset()
            self.state = new_deal(rules, SEATS.index(step.dealer), deck=parse_deck(step.deck))
        self.done += 1
        return step

    def played(self, step: StoredStep) -> None:
        """The stored action of ``step`` was played (the state moves on)."""
        assert self.state is not None
        self.state = apply(self.state, step.entry.action)

    def detail(self, entry: ActionEntry) -> str:
        """The stored fault detail of a faulted entry of your seat (in order)."""
        return next(self.details, "") if entry.fault is not None else ""


class _YourSeat:
    """Your bot in its seat: each answer is compared with the stored one while they agree."""

    def __init__(self, bot: Player, script: _Script) -> None:
        self.bot, self.script, self.name = bot, script, bot.name
        self._exchange: Exchange | None = None
        self._rules: dict[str, Any] = {}
        self.start_fault: Fault | None = None

    def start(self, context: MatchContext) -> Fault | None:
        self._rules = context.rules.to_dict()
        self.start_fault = self.bot.start(context)
        return self.start_fault

    def act(self, turn: Turn) -> Action | Fault:
        script = self.script
        step = script.next(turn)
        reply = self.bot.act(turn)
        self._exchange = take_exchange(self.bot)
        if step is None:
            return reply
        assert script.state is not None
        yours = answer_of_reply(reply, self._exchange, script.state)
        stored = step.entry
        detail = script.detail(stored)
        if _same(stored, yours, reply):
            script.agreed += 1
            script.played(step)
            return reply
        script.following = False
        script.divergence = Divergence(
            step.address,
            SEATS[script.seat],
            _stored_answer(stored, detail),
            yours,
            msgspec.to_builtins(act_request(turn, self._rules)),
        )
        return reply

    def take_exchange(self) -> Exchange | None:
        exchange, self._exchange = self._exchange, None
        return exchange

    def end(self, summary: dict[str, object]) -> None:
        self.bot.end(summary)


class _StoredSeat:
    """The other seat: the stored bot's recorded answers while the rerun follows the record,
    then the live opponent."""

    def __init__(
        self, name: str, opponent: Player, script: _Script, details: Iterator[str]
    ) -> None:
        self.name, self.opponent, self.script = name, opponent, script
        self._details = details
        self._exchange: Exchange | None = None

    def start(self, context: MatchContext) -> Fault | None:
        fault = self.opponent.start(context)
        if fault is not None:
            raise RerunError(
                f"the opponent {self.opponent.name} cannot be started: {fault.kind}: {fault.detail}"
            )
        return None

    def act(self, turn: Turn) -> Action | Fault:
        step = self.script.next(turn)
        if step is None:
            reply = self.opponent.act(turn)
            self._exchange = take_exchange(self.opponent)
            return reply
        entry = step.entry
        self._exchange = Exchange(entry.raw, entry.latency_ms)
        self.script.played(step)
        if entry.fault is not None:
            return Fault(entry.fault, next(self._details, ""))
        return entry.action

    def take_exchange(self) -> Exchange | None:
        exchange, self._exchange = self._exchange, None
        return exchange

    def end(self, summary: dict[str, object]) -> None:
        self.opponent.end(summary)


def _details(record: StoredMatch, seat: str) -> Iterator[str]:
    """The stored fault details of one seat, in the order its faults happened."""
    return iter([f.detail for f in record.faults if f.seat == seat])


def check_decks(record: StoredMatch) -> None:
    """Every stored deal's deck is the one the record's seed deals (RerunError if not): the
    rerun deals from the seed once it leaves the record."""
    for step in stored_steps(record):
        where = step.address
        if step.address.step == 0:
            dealt = "".join(map(str, deal_deck(record.seed, where.game, where.deal)))
            if dealt != step.deck:
                raise RerunError(
                    f"game {where.game} deal {where.deal}: the stored deck is not the one the"
                    f" match's seed deals, so the match cannot be rerun"
                )


def rerun_match(record: StoredMatch, seat: str, bot: Player, opponent: Player) -> RerunResult:
    """Play ``record`` again with ``bot`` in ``seat`` (see the module docstring); ``opponent``
    plays the other seat from the first divergence on. RerunError if the record cannot be
    rerun or a player cannot be started."""
    if seat not in SEATS:
        raise RerunError(f"seat must be 'a' or 'b', not {seat!r}")
    steps = stored_steps(record)
    if not steps:
        why = f" (forfeit: {record.forfeit.reason})" if record.forfeit is not None else ""
        raise RerunError(f"the stored match has no steps to rerun{why}")
    check_decks(record)
    me = SEATS.index(seat)
    other: Seat = SEATS[1 - me]
    script = _Script(record, me, steps, _details(record, seat))
    yours = _YourSeat(bot, script)
    theirs = _StoredSeat(record.players.of(other), opponent, script, _details(record, other))
    players: list[Player] = [yours, theirs] if me == 0 else [theirs, yours]
    runner = MatchRunner(players, record.ruleset(), record.seed, record.match_id)
    try:
        result = runner.run()
    except RerunError:
        for player in (bot, opponent):  # stopped before the end: no /end, but no open socket
            close = getattr(player, "close", None)
            if callable(close):
                close()
        raise
    if yours.start_fault is not None:
        fault = yours.start_fault
        raise RerunError(f"your bot cannot be started: {fault.kind}: {fault.detail}")
    return RerunResult(
        SEATS[me],
        script.divergence,
        script.agreed,
        record,
        result.to_stored(),
        opponent.name,
    )
