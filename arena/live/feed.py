"""One match's live feed in the serving process: raw events in, frames out, for every view.

:meth:`MatchFeed.apply` takes the raw events of :mod:`arena.live.publish` in order and makes
the frames of the current attempt, once, omniscient, with the replay viewer's own code
(:class:`arena.web.replay_steps.LiveDeal`: the steps and the finished deal exactly as
:func:`~arena.web.replay_steps.deal_steps` makes them), so a live step is the replay's step.
:meth:`MatchFeed.render` cuts a frame for a view (:mod:`arena.live.views`) and encodes it once
per view. A new attempt (``start`` with a higher attempt number) drops every frame of the
previous one.

Subscribers wait on :attr:`MatchFeed.changed` (a condition over the feed's lock) and read what
is new with :meth:`MatchFeed.since`.

Whether the match's seed is shared with another open match (the embargo's withheld view) is
asked at the start and after every deal. Given an executor (``checks``: the hub's), the
question is asked there, not in the thread taking the events, so a slow database holds back
only this match's frames: the frames made while it is asked are kept from every subscriber
until the answer says how to cut them (:meth:`MatchFeed.since` gives only decided frames).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgspec

from arena.live.publish import RawEvent
from arena.live.sse import sse_event
from arena.live.views import deal_view, step_view
from arena.playing.stored import ActionEntry, StoredDeal, StoredFault
from arena.rules.ruleset import RuleSet

if TYPE_CHECKING:
    from arena.web.replay_steps import LiveDeal

__all__ = ["MAX_FRAMES", "Frame", "MatchFeed"]

log = logging.getLogger(__name__)

#: Frames kept for one attempt (a long standard match makes a few thousand).
MAX_FRAMES = 50_000


@dataclass(slots=True)
class Frame:
    """One event of the stream: its id (``<attempt>-<seq>``), SSE name and omniscient data."""

    id: str
    event: str
    data: dict[str, Any]
    #: Whether card faces are withheld (a duplicate twin was open when it was made).
    withheld: bool
    #: When the raw event was published (the publisher's ``time.time()``, if it said).
    published: float | None = None
    _encoded: dict[str, bytes] = field(default_factory=dict)


@dataclass(slots=True)
class _Deal:
    game: int
    index: int
    dealer: str
    deck: str
    score: dict[str, int]
    games: dict[str, int]
    live: LiveDeal | None
    steps: int = 1


def _pair(values: list[int]) -> dict[str, int]:
    return {"a": int(values[0]), "b": int(values[1])}


class MatchFeed:
    """The live state of one match (see the module docstring). ``twin_open()`` says whether
    another open match shares its seed (asked at the start and after every deal)."""

    def __init__(
        self, match_id: int, twin_open: Any = None, checks: Executor | None = None
    ) -> None:
        self.match_id = match_id
        self.attempt = 0
        self.frames: list[Frame] = []
        self.ended = False
        self.status = "pending"
        self.updated = time.monotonic()
        self.changed = threading.Condition()
        self._n = -1
        self._twin_open = twin_open
        self._withheld = False
        self._checks = checks
        #: Frames before this index are decided (their ``withheld`` is known).
        self._visible = 0
        #: While a twin check is asked: where its undecided frames start, and where the
        #: frames of a check asked meanwhile (after a later deal) start.
        self._asking: int | None = None
        self._again: int | None = None
        self._generation = 0
        self._rules: RuleSet | None = None
        self._faults: list[StoredFault] = []
        self._deal: _Deal | None = None

    # -- intake (one thread) -------------------------------------------------------------

    def apply(self, event: RawEvent) -> bool:
        """Take one raw event; False when one is missing before it (the caller may replay the
        attempt's history). Older attempts' events and repeats are ignored."""
        attempt, n = int(event["at"]), int(event["n"])
        with self.changed:
            if attempt < self.attempt or (attempt == self.attempt and n <= self._n):
                return True
            if attempt > self.attempt:
                if event["k"] != "start":
                    return False
                self._reset(attempt)
            elif n != self._n + 1:
                return False
            self._n = n
            try:
                self._take(event)
            except Exception:  # a frame we cannot make must not stop the feed
                log.exception("live event %s of match %s not understood", n, self.match_id)
            self.updated = time.monotonic()
            self.changed.notify_all()
        return True

    def _reset(self, attempt: int) -> None:
        self.attempt = attempt
        self.frames = []
        self.ended = False
        self.status = "running"
        self._n = -1
        self._visible = 0
        self._asking = self._again = None
        self._generation += 1  # a check still being asked is for the old attempt
        self._faults = []
        self._deal = None

    def _frame(self, name: str, data: dict[str, Any], event: RawEvent) -> None:
        if len(self.frames) >= MAX_FRAMES:
            return
        seq = len(self.frames) + 1
        published = event.get("t")
        self.frames.append(
            Frame(
                f"{self.attempt}-{seq}",
                name,
                data,
                self._withheld,
                None if published is None else float(published),
            )
        )
        if self._asking is None:
            self._visible = len(self.frames)

    def _ask_twin(self) -> bool:
        """Whether another open match shares the seed (unknown: yes, withhold)."""
        try:
            return bool(self._twin_open(self.match_id))
        except Exception:
            log.exception("twin check of match %s failed", self.match_id)
            return True

    def _check_twin(self) -> None:
        """Ask the twin question for the frames from here on (see the module docstring)."""
        if self._twin_open is None:
            return
        if self._checks is None:
            self._withheld = self._ask_twin()
            return
        if self._asking is not None:  # one is being asked: ask again once it is answered
            if self._again is None:
                self._again = len(self.frames)
            return
        self._asking = len(self.frames)
        self._submit()

    def _submit(self) -> None:
        assert self._checks is not None
        generation = self._generation
        try:
            future = self._checks.submit(self._ask_twin)
        except RuntimeError:  # the executor is shut down: ask here
            self._answered(generation, self._ask_twin())
            return
        future.add_done_callback(lambda done: self._done(generation, done))

    def _done(self, generation: int, future: Future[bool]) -> None:
        try:
            withheld = future.result()
        except BaseException:  # cancelled at shutdown: withhold
            withheld = True
        with self.changed:
            self._answered(generation, withheld)
            self.changed.notify_all()

    def _answered(self, generation: int, withheld: bool) -> None:
        """A twin answer (under the lock): decide the frames it covers, ask again if asked."""
        if generation != self._generation or self._asking is None:
            return
        end = len(self.frames) if self._again is None else self._again
        for frame in self.frames[self._asking : end]:
            frame.withheld = withheld
        self._withheld = withheld
        self._visible = end
        if self._again is None:
            self._asking = None
            return
        self._asking, self._again = self._again, None
        self._submit()

    def _take(self, event: RawEvent) -> None:
        kind = event["k"]
        if kind == "start":
            self._rules = RuleSet.from_dict(event["rules"])
            self._check_twin()
        elif kind == "deal":
            self._start_deal(event)
        elif kind == "act":
            self._act(event)
        elif kind == "dealt":
            self._dealt(event)
            self._check_twin()
        elif kind == "end":
            self.ended = True
            self.status = str(event["status"])
            match = self.match_id
            self._frame(
                "end",
                {
                    "status": event["status"],
                    "winner": event["winner"],
                    "score": event["score"],
                    "forfeit": event["forfeit"],
                    "links": {
                        "api": f"/api/v1/matches/{match}",
                        "replay": f"/api/v1/matches/{match}/replay",
                        "page": f"/matches/{match}",
                    },
                },
                event,
            )

    def _start_deal(self, event: RawEvent) -> None:
        assert self._rules is not None
        # Imported here: arena.web's package imports the pages, which import the API, which
        # imports this module.
        from arena.web.replay_steps import LiveDeal  # noqa: PLC0415

        hand = StoredDeal(int(event["g"]), int(event["d"]), event["dealer"], event["deck"], [])
        live = LiveDeal(self._rules, hand)
        deal = _Deal(
            hand.game,
            hand.index,
            hand.dealer,
            hand.deck,
            _pair(event["score"]),
            _pair(event["games"]),
            live,
        )
        self._deal = deal
        data = {
            "game": deal.game,
            "deal": deal.index,
            "index": 0,
            "step": live.first,
            "score": deal.score,
            "games": deal.games,
            "dealer": deal.dealer,
            "limit": live.limit,
        }
        self._frame("step", data, event)

    def _act(self, event: RawEvent) -> None:
        deal = self._deal
        if deal is None or deal.live is None:
            return
        entry = ActionEntry.from_list(event["e"])
        fault = event.get("f")
        if fault is not None:
            stored = msgspec.convert(fault, StoredFault)
            deal.live.fault(len(self._faults), stored)
            self._faults.append(stored)
        step = deal.live.add(entry)
        data = {
            "game": deal.game,
            "deal": deal.index,
            "index": deal.steps,
            "step": step,
            "score": deal.score,
            "games": deal.games,
        }
        deal.steps += 1
        self._frame("step", data, event)

    def _dealt(self, event: RawEvent) -> None:
        deal = self._deal
        if deal is None or deal.live is None:
            return
        data = deal.live.deal()
        # The running score as the replay's deals carry it: before the deal, and after it.
        data["score"], data["games"] = deal.score, deal.games
        data["after"] = {"score": _pair(event["score"]), "games": _pair(event["games"])}
        self._deal = None
        self._frame("deal", data, event)

    # -- subscribers (any thread) --------------------------------------------------------

    def since(self, attempt: int, seq: int) -> tuple[int, list[Frame], bool]:
        """The current attempt, its decided frames after ``seq`` (all of them when ``attempt``
        is an older one) and whether the match has ended and every frame is decided (call
        with :attr:`changed` held or not)."""
        with self.changed:
            visible = self._visible
            frames = self.frames[seq:visible] if attempt == self.attempt else self.frames[:visible]
            return self.attempt, frames, self.ended and visible == len(self.frames)

    def render(self, frame: Frame, view: str) -> bytes:
        """``frame`` as ``view`` sees it, encoded as an SSE event (once per view; a frame other
        than a step is the same for every view, so encoded once for all)."""
        key = "withheld" if frame.withheld else view if frame.event == "step" else "all"
        encoded = frame._encoded.get(key)
        if encoded is None:
            data = frame.data
            if frame.event == "step":
                data = {**data, "step": step_view(data["step"], view, withheld=frame.withheld)}
            elif frame.event == "deal":
                data = deal_view(data, withheld=frame.withheld)
            encoded = frame._encoded[key] = sse_event(frame.event, data, frame.id)
        return encoded
