"""What the live tests share: a match played in process with its raw live events recorded
(through the runner's real hooks and :class:`arena.live.publish.MatchLive`), and an SSE reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from arena.live.publish import MatchLive, RawEvent
from arena.playing.match import MatchRunner
from arena.playing.players import Fault, FaultKind, HeuristicPlayer, RandomPlayer, Turn
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet

__all__ = ["ListSink", "SseEvent", "card_tokens", "played_events", "read_events"]


class ListSink:
    """A sink keeping every raw event (the in-process stand-in of a queue)."""

    def __init__(self) -> None:
        self.events: list[RawEvent] = []

    def publish(self, event: RawEvent) -> None:
        self.events.append(json.loads(json.dumps(event)))  # as it travels: JSON


class FaultyRandom(RandomPlayer):
    """A random player that times out on every seventh turn (a fault, answered by a fallback)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.turns = 0

    def act(self, turn: Turn) -> Action | Fault:
        self.turns += 1
        if self.turns % 7 == 0:
            return Fault(FaultKind.TIMEOUT, f"turn {self.turns}: no reply within the deadline")
        return super().act(turn)


def played_events(
    match_id: int = 1, attempt: int = 1, *, seed: int = 5, target: int = 60
) -> list[RawEvent]:
    """The raw events of one whole match (heuristic against a faulty random player)."""
    sink = ListSink()
    rules = RuleSet(target=target, max_strikes=1000)
    live = MatchLive(sink, match_id, attempt, rules)
    live.started()
    runner = MatchRunner(
        [HeuristicPlayer(), FaultyRandom(seed=seed)],
        rules,
        seed,
        on_progress=live.dealt,
        on_step=live.step,
    )
    record = runner.run()
    won = [sum(1 for g in record.games if g.result.winner == s) for s in (0, 1)]
    winner = None if record.winner is None else "ab"[record.winner]
    live.ended("finished", winner, (won[0], won[1]), None)
    return sink.events


_SHORT = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][cdhs])(?![A-Za-z0-9])")
_SPOKEN = re.compile(r"(10|[2-9JQKA])([\u2663\u2666\u2665\u2660])")
_SUITS = {"\u2663": "c", "\u2666": "d", "\u2665": "h", "\u2660": "s"}


def card_tokens(data: Any) -> set[str]:
    """Every card named anywhere in ``data`` (as ``Kc``), in either of its written forms."""
    text = json.dumps(data, ensure_ascii=False)
    found = set(_SHORT.findall(text))
    for rank, suit in _SPOKEN.findall(text):
        found.add(("T" if rank == "10" else rank) + _SUITS[suit])
    return found


@dataclass
class SseEvent:
    name: str
    id: str | None
    data: Any


def read_events(stream: IO[bytes]) -> Iterator[SseEvent | None]:
    """Events as they come (None for a comment such as ``: ping``) until the stream closes."""
    name, event_id, data = "message", None, []
    for raw in stream:
        line = raw.decode("utf-8").rstrip("\n")
        if not line:
            if data:
                yield SseEvent(name, event_id, json.loads("\n".join(data)))
            name, data = "message", []
            continue
        if line.startswith(":"):
            yield None
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "id":
            event_id = value
        elif field == "data":
            data.append(value)
