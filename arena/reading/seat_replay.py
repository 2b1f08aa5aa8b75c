"""One seat's side of a finished match: every ``/act`` request the bot was sent and its answer.

The stored record keeps each deal's deck and actions, not the requests. This module replays
every deal through the rules engine (``new_deal``, ``observe``, ``apply``) and rebuilds each
request with :func:`arena.protocol.wire.act_request`, exactly as the match runner and the HTTP
player made it: the same request ids, scores, games won, and ``previous_deal`` at the bot's
first request of each deal, the seat's previous latency (``previous_rtt_ms``) and strikes so
far, and the deal a forfeit cut short up to the forfeit. Each step
pairs the request with what the bot answered: the parsed action (or the fault and the
fallback played for it), the answer's body exactly as received (``answer_raw``: the text when
it is UTF-8 without NUL, else base64, as ``answer_raw_encoding`` says; null when there was no
200 answer or the player was not a remote bot), and how long it took.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec

from arena.playing.players import Turn
from arena.playing.records import SEATS
from arena.playing.stored import (
    ActionEntry,
    Seat,
    StoredDeal,
    StoredFault,
    StoredHand,
    StoredMatch,
    raw_answer_to_json,
)
from arena.protocol.wire import PROTOCOL_VERSION, StartRequest, act_request
from arena.rules.game import HollywoodScore, add_deal
from arena.rules.hand import DealResult, apply, new_deal
from arena.rules.observation import observe
from arena.rules.record import parse_deck
from arena.rules.ruleset import MatchScoring
from arena.rules.scoring import GameScore

__all__ = ["SeatReplayError", "seat_replay"]


class SeatReplayError(ValueError):
    """The record does not replay (it was edited after it was recorded)."""


def _games(
    record: StoredMatch,
) -> Iterator[tuple[int, Seat | None, list[StoredHand | StoredDeal]]]:
    """Each game's index, winner and deals in play order; the deal a forfeit cut short last."""
    for game in record.games:
        yield game.index, game.winner, list(game.hands)
    unfinished = record.unfinished_game
    hands: list[StoredHand | StoredDeal] = list(unfinished.hands) if unfinished else []
    if record.interrupted_deal is not None:
        hands.append(record.interrupted_deal)
    if hands:
        yield len(record.games), None, hands


def seat_replay(record: StoredMatch, seat: str, *, game: int | None = None) -> dict[str, Any]:
    """The requests seat ``seat`` (``"a"``/``"b"``) was sent and its answers, in order.

    ``game`` keeps only that game's steps (the requests are rebuilt from the start either way,
    since scores and request ids depend on what came before).
    """
    if seat not in SEATS:
        raise ValueError(f"seat must be 'a' or 'b', not {seat!r}")
    me = 0 if seat == "a" else 1
    rules = record.ruleset()
    rules_dict = rules.to_dict()
    match_id = record.match_id
    players = record.players
    faults = iter([f for f in record.faults if f.seat == seat])
    steps: list[dict[str, Any]] = []
    requests = 0
    games_won = [0, 0]
    # The seat's previous latency and its strikes so far, as the runner put them in each request.
    rtt: float | None = None
    strikes = 0
    # Hollywood: the games are scored at once and the deals run on from game to game.
    hollywood = rules.match_scoring is MatchScoring.HOLLYWOOD
    sheet = HollywoodScore.new(rules)
    previous: DealResult | None = None
    try:
        for index, winner, hands in _games(record):
            score = GameScore()
            if not hollywood:
                previous = None
            for hand in hands:
                deal = hand.index
                state = new_deal(rules, SEATS.index(hand.dealer), deck=parse_deck(hand.deck))
                told = [False, False]
                for entry in hand.actions:
                    actor = entry.seat
                    requests += 1
                    if actor == me and (game is None or game == index):
                        points = sheet.games[index].points if hollywood else score.points
                        turn = Turn(
                            observe(state, me), match_id, index, deal,
                            f"{match_id}-r{requests}", rules, points,
                            (games_won[0], games_won[1]), rules.deadline_ms,
                            None if told[me] else previous, rtt, strikes,
                        )  # fmt: skip
                        steps.append(_step(turn, rules_dict, entry, faults))
                    if actor == me:
                        rtt = entry.latency_ms
                        strikes += entry.fault is not None
                    told[actor] = True
                    state = apply(state, entry.action)
                if state.result is None:
                    if hand is record.interrupted_deal:
                        break  # a forfeit cut it short
                    raise SeatReplayError(f"game {index} deal {deal} does not reach its end")
                score = add_deal(rules, score, state.result)
                if hollywood and sheet.current(rules.target) is not None:
                    sheet = sheet.add(rules, state.result)
                previous = state.result
            if winner is not None:
                games_won[SEATS.index(winner)] += 1
    except (KeyError, IndexError, TypeError, ValueError) as exc:  # what apply() raises on an edit
        if isinstance(exc, SeatReplayError):
            raise
        raise SeatReplayError(f"the record does not replay: {exc!r}") from None
    opponent = players.of(SEATS[1 - me])
    start = StartRequest(PROTOCOL_VERSION, match_id, opponent, rules_dict)
    return {
        "seat": seat,
        "bot": players.of(SEATS[me]),
        "opponent": opponent,
        "start": msgspec.to_builtins(start),
        "steps": steps,
    }


def _step(
    turn: Turn,
    rules_dict: dict[str, Any],
    entry: ActionEntry,
    faults: Iterator[StoredFault],
) -> dict[str, Any]:
    fault = None
    if entry.fault is not None:
        found = next(faults, None)
        fault = {"kind": entry.fault.value, "detail": found.detail if found else ""}
    raw = None if entry.raw is None else raw_answer_to_json(entry.raw)
    applied = entry.action.to_dict()
    return {
        "game": turn.game,
        "deal": turn.deal,
        "request": msgspec.to_builtins(act_request(turn, rules_dict)),
        "answer": None if fault else applied,
        "answer_raw": raw["base64"] if isinstance(raw, dict) else raw,
        "answer_raw_encoding": None
        if raw is None
        else ("base64" if isinstance(raw, dict) else "utf-8"),
        "fault": fault,
        "applied": applied,
        "latency_ms": round(entry.latency_ms, 3),
    }
