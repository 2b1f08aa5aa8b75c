"""The match job's side of the live streams: raw events of one attempt into a sink.

A raw event is a small JSON-ready dict: ``k`` (its kind), ``m`` (the match id), ``at`` (the
attempt, from the claim), ``n`` (its number within the attempt, from 0) and ``t`` (when it was
published, ``time.time()``), then:

* ``start``: the attempt begins (a new attempt replaces everything of the previous one):
  ``rules`` (the rule set's dict);
* ``deal``: a deal begins: ``g``, ``d``, ``dealer`` (``a``/``b``), ``deck`` (the whole order),
  ``score`` and ``games`` before it (``[a, b]``);
* ``act``: an action was applied: ``g``, ``d``, ``e`` (the action entry's stored form without the
  raw answer) and ``f`` (the fault it answered, in its stored form, or null);
* ``dealt``: a deal ended: ``g``, ``d``, ``score`` and ``games`` after it;
* ``end``: the match is over: ``status``, ``winner``, ``score`` (games won), ``forfeit``.

Raw events are internal (the deck is in them); :mod:`arena.live.feed` makes the frames clients
see. Publishing must cost a match next to nothing when nobody watches: a sink only queues the
event (:class:`QueueSink` gathers it for a multiprocessing queue, drained by the serving process;
:class:`~arena.live.redis_bus.RedisSink` hands it to a sending thread), and a sink never raises
into the match.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Any, Protocol

import msgspec

from arena.playing.match import LiveStep, MatchProgress
from arena.rules.ruleset import MatchScoring, RuleSet

__all__ = ["BATCH_SECONDS", "LiveSink", "MatchLive", "QueueSink", "RawEvent"]

log = logging.getLogger(__name__)

RawEvent = dict[str, Any]
#: How long a :class:`QueueSink` gathers events before it puts them on its queue (12 ms of
#: added latency on average, beside the stream writer's 25 ms).
BATCH_SECONDS = 0.025
SEATS = ("a", "b")


class LiveSink(Protocol):
    """Where raw events go (one per process, shared by every match it plays)."""

    def publish(self, event: RawEvent) -> None:
        """Queue ``event``; never block for long, never raise."""


class QueueSink:
    """The local executor's sink: a multiprocessing queue the serving process drains
    (:meth:`arena.live.hub.LiveHub.pump`). The events of every match of the process are put
    on it together, a list every :data:`BATCH_SECONDS` (from a thread of this sink's own):
    each item costs the serving process's intake a few system calls, each of which lets its
    other threads take the interpreter lock, so an item per event left the intake behind
    while hundreds of streams were joining. A full queue (nobody draining) drops the batch."""

    def __init__(self, events: Any, batch_seconds: float | None = None) -> None:
        self._events = events
        self._batch_seconds = BATCH_SECONDS if batch_seconds is None else batch_seconds
        self._pending: list[RawEvent] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._dropped = 0

    def publish(self, event: RawEvent) -> None:
        with self._lock:
            self._pending.append(event)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="live-batches", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self._batch_seconds)
            self.flush()

    def flush(self) -> None:
        """Put what is gathered now (the worker calls it last, before it exits)."""
        with self._lock:
            batch, self._pending = self._pending, []
        if not batch:
            return
        try:
            self._events.put_nowait(batch)
        except (queue.Full, ValueError, OSError):  # full, or closed at shutdown
            before, self._dropped = self._dropped, self._dropped + len(batch)
            if before == 0 or before < 1000 <= self._dropped:
                log.warning("live events are not drained: %d dropped", self._dropped)


class MatchLive:
    """One attempt of one match, publishing into ``sink``: :meth:`step` and :meth:`dealt` are
    the runner's ``on_step`` and (part of) its ``on_progress``."""

    def __init__(self, sink: LiveSink, match_id: int, attempt: int, rules: RuleSet) -> None:
        self._sink = sink
        #: Standard scoring counts a game won after the runner's report of its last deal.
        self._target = None if rules.match_scoring is MatchScoring.HOLLYWOOD else rules.target
        self._head = {"m": match_id, "at": attempt}
        self._rules = rules.to_dict()
        self._n = 0

    def _send(self, kind: str, data: dict[str, Any]) -> None:
        data.update(self._head, k=kind, n=self._n, t=time.time())
        self._n += 1
        try:
            self._sink.publish(data)
        except Exception:  # a sink must not raise; if it does, the match goes on regardless
            log.exception("live event of match %s lost", self._head["m"])

    def started(self) -> None:
        self._send("start", {"rules": self._rules})

    def step(self, step: LiveStep) -> None:
        entry = step.entry
        if entry is None:
            self._send(
                "deal",
                {
                    "g": step.game,
                    "d": step.deal,
                    "dealer": SEATS[step.dealer],
                    "deck": "".join(map(str, step.deck)),
                    "score": list(step.game_points),
                    "games": list(step.games_won),
                },
            )
            return
        fault = None
        if step.fault is not None:
            fault = msgspec.to_builtins(step.fault.to_stored())
        data = [entry.seat, entry.action.to_dict(), round(entry.latency_ms, 3), entry.fault]
        self._send("act", {"g": step.game, "d": step.deal, "e": data, "f": fault})

    def dealt(self, progress: MatchProgress) -> None:
        games = list(progress.games_won)
        points = progress.game_points
        if self._target is not None and max(points) >= self._target:
            games[0 if points[0] > points[1] else 1] += 1
        self._send(
            "dealt",
            {
                "g": progress.game,
                "d": progress.deal,
                "score": list(progress.game_points),
                "games": games,
            },
        )

    def ended(
        self,
        status: str,
        winner: str | None,
        score: tuple[int, int],
        forfeit: dict[str, Any] | None,
    ) -> None:
        self._send(
            "end",
            {
                "status": status,
                "winner": winner,
                "score": {"a": score[0], "b": score[1]},
                "forfeit": forfeit,
            },
        )
