"""One stored step sent again: the exact ``/act`` request a bot was sent then, to your bot now.

The request is the one the seat replay rebuilds (:mod:`arena.reading.seat_replay`, locally or
through a remote arena's ``GET /api/v1/matches/{id}/replay?seat=``), sent byte for byte as it
was (after a ``GET /`` and the match's own ``POST /start``, and followed by its ``POST /end``, so
a bot that keeps state per match sees a match); the answer stands beside the stored one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from arena.playing.players import MatchContext
from arena.playing.records import SEATS
from arena.playing.rerun import (
    Answer,
    RerunError,
    StepAddress,
    StoredStep,
    answer_of_reply,
    stored_steps,
)
from arena.playing.stored import Seat, StoredMatch
from arena.protocol.http_player import HttpPlayer
from arena.rules.hand import HandState, apply, new_deal
from arena.rules.record import parse_deck

__all__ = ["StepCheck", "find_step", "rerun_step"]


@dataclass(frozen=True, slots=True)
class StepCheck:
    """A stored step and your bot's answer to its exact request."""

    address: StepAddress
    seat: Seat
    request: dict[str, Any]
    stored: Answer
    yours: Answer

    @property
    def same(self) -> bool:
        """Your bot answered as the stored one did (the same action, or the same fault)."""
        if self.stored.fault is not None or self.yours.fault is not None:
            return self.stored.fault == self.yours.fault
        return _decision(self.stored.action) == _decision(self.yours.action)

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": str(self.address),
            "anchor": self.address.anchor,
            "seat": self.seat,
            "same": self.same,
            "stored": self.stored.to_dict(),
            "yours": self.yours.to_dict(),
            "request": self.request,
        }


def _decision(action: dict[str, Any] | None) -> object:
    if action is None:
        return None
    melds = action.get("melds")
    return (action["action"], action.get("card"), None if melds is None else sorted(melds))


def _missing(steps: list[StoredStep], where: StepAddress) -> str:
    """Why there is no step ``where``: which games, deals or steps there are."""
    games = sorted({s.address.game for s in steps})
    if where.game not in games:
        return f"there is no game {where.game} (games {games[0]} to {games[-1]})"
    deals = sorted({s.address.deal for s in steps if s.address.game == where.game})
    if where.deal not in deals:
        return f"game {where.game} has no deal {where.deal} (deals {deals[0]} to {deals[-1]})"
    last = max(s.address.step for s in steps if s.address.same_deal(where))
    return f"game {where.game} deal {where.deal} has no step {where.step} (steps 0 to {last})"


def find_step(record: StoredMatch, where: StepAddress) -> tuple[Seat, int]:
    """Whose step ``where`` is, and its place among that seat's steps (the index into the seat
    replay's ``steps``); RerunError naming what exists if there is no such step."""
    steps = stored_steps(record)
    for i, step in enumerate(steps):
        if step.address == where:
            seat = step.entry.seat
            return SEATS[seat], sum(1 for s in steps[:i] if s.entry.seat == seat)
    if not steps:
        raise RerunError("the stored match has no steps")
    raise RerunError(_missing(steps, where))


def _state_before(record: StoredMatch, where: StepAddress) -> HandState:
    steps = [s for s in stored_steps(record) if s.address.same_deal(where)]
    first = steps[0]
    state = new_deal(record.ruleset(), SEATS.index(first.dealer), deck=parse_deck(first.deck))
    for step in steps[: where.step]:
        state = apply(state, step.entry.action)
    return state


def _stored_answer(step: dict[str, Any]) -> Answer:
    """The stored answer of a seat replay step."""
    fault = step.get("fault")
    raw = step.get("answer_raw")
    if raw is not None and step.get("answer_raw_encoding") == "base64":
        raw = {"base64": raw}
    return Answer(
        None if fault else step.get("applied"),
        fault["kind"] if fault else None,
        fault.get("detail", "") if fault else "",
        raw,
        step.get("latency_ms"),
    )


def rerun_step(
    record: StoredMatch, seat_view: dict[str, Any], where: StepAddress, bot: HttpPlayer
) -> StepCheck:
    """Send step ``where``'s stored request (from ``seat_view``, the seat replay of the seat
    whose step it is) to ``bot``; RerunError if there is no such step or the bot cannot be
    started."""
    seat, index = find_step(record, where)
    if seat_view.get("seat") != seat:
        raise RerunError(f"step {where} is seat {seat}'s, not seat {seat_view.get('seat')}'s")
    views = seat_view.get("steps")
    if not isinstance(views, list) or index >= len(views):
        raise RerunError(f"the seat replay of {seat} has no step {where}")
    view = views[index]
    if (view.get("game"), view.get("deal")) != (where.game, where.deal):
        raise RerunError(f"the seat replay of {seat} does not match the record at step {where}")
    request = view["request"]
    start = seat_view.get("start") or {}
    me = SEATS.index(seat)
    context = MatchContext(
        record.match_id,
        me,
        record.ruleset(),
        str(start.get("opponent", record.players.of(SEATS[1 - me]))),
        record.seed,
    )
    fault = bot.start(context)
    if fault is not None:
        raise RerunError(f"your bot cannot be started: {fault.kind}: {fault.detail}")
    try:
        reply = bot.send_act(msgspec.json.encode(request))
        exchange = bot.take_exchange()
    finally:
        bot.end(record.to_dict())
    yours = answer_of_reply(reply, exchange, _state_before(record, where))
    return StepCheck(where, seat, request, _stored_answer(view), yours)
