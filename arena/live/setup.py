"""The live streams' wiring in a serving process: which source feeds its hub.

* Celery (``ARENA_EXECUTOR=celery``): Redis (``ARENA_LIVE_REDIS_URL``, else the broker's URL),
  :mod:`arena.live.redis_bus`;
* the local executor running in this process (``gin-arena serve``, ``gin-arena demo``): its
  worker processes' queue (:attr:`arena.playing.executors.LocalExecutor.live_events`);
* otherwise (an API process with no executor of its own under local settings) no source: a
  match stream then says ``waiting``, pings, and ends with the stored match once it is over.
"""

from __future__ import annotations

from typing import Any

from arena.db.session import Database
from arena.live.hub import LiveHub
from arena.live.redis_bus import RedisSource, live_redis_url
from arena.reading.embargo import OPEN
from arena.reading.queries import matches as match_queries
from arena.settings import Settings

__all__ = ["TwinCheck", "make_hub", "twin_open"]


def twin_open(db: Database, match_id: int) -> bool:
    """Whether another open match (pending or running) shares this match's seed: its
    duplicate twin, which would learn its deals."""
    return match_queries.seed_twin_in(db, match_queries.match_state(db, match_id), OPEN)


class TwinCheck:
    """:func:`twin_open` for a hub, asked at the start of every match and after every deal:
    a match's seed and tournament never change, so they are read once per match (then one
    query a check, not two)."""

    #: Matches whose seed is remembered (then the memory starts over).
    KEEP = 10_000

    def __init__(self, db: Database) -> None:
        self._db = db
        self._states: dict[int, dict[str, object]] = {}

    def __call__(self, match_id: int) -> bool:
        state = self._states.get(match_id)
        if state is None:
            if len(self._states) >= self.KEEP:
                self._states.clear()
            state = self._states[match_id] = match_queries.match_state(self._db, match_id)
        return match_queries.seed_twin_in(self._db, state, OPEN)


def make_hub(settings: Settings, db: Database, executor: Any) -> LiveHub:
    """The hub of a serving process, fed by the source its settings give (see above)."""
    if settings.executor_kind == "celery":
        source = RedisSource(live_redis_url(settings))
        hub = LiveHub(
            twin_open=TwinCheck(db),
            history=source.history,
            subscribe=lambda h: source.start(h.deliver),
        )
        hub.on_close(source.close)
        return hub
    hub = LiveHub(twin_open=TwinCheck(db))
    events = getattr(executor, "live_events", None)
    if events is not None:
        hub.pump(events)
    return hub
