"""Real data for the page tests: house bots over HTTP, real matches and a real tournament.

Shared by ``tests/web`` and ``tests/browser`` (``tests/`` is on ``sys.path`` through its
conftest). Matches are short (``RuleSet(target=50, best_of=1)``) and played in the test's
thread with :func:`arena.playing.jobs.run_match_job`, the function every executor runs. One bot
commits an illegal action once per match, so replays show a fault and its fallback.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from flask import Flask

from arena.bots.house import start_house_bots
from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.tournaments import advance_for_match, create_tournament, start_tournament
from arena.settings import Settings, load_settings
from arena.web import bp

SHORT = RuleSet(target=50, best_of=1)


def make_app(db: Database) -> Flask:
    """The smallest app that mounts the pages (what the app factory will do)."""
    app = Flask(__name__)
    app.extensions["gin_arena"] = {"db": db, "settings": settings_for(db.url)}
    app.register_blueprint(bp)
    return app


class FlakyStrategy:
    """Greedy, except that its third answer in each match discards a card it does not hold."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self.greedy = STRATEGIES["greedy"](0)

    def __call__(self, obs: ActRequest) -> WireAction | dict[str, Any]:
        n = self.calls[obs.match_id] = self.calls.get(obs.match_id, 0) + 1
        if n == 3:
            missing = next(
                f"{r}{s}" for s in "cdhs" for r in "A23456789TJQK" if f"{r}{s}" not in obs.hand
            )
            return {"action": "discard", "card": missing}
        return self.greedy(obs)


@contextmanager
def house_bots(kinds: Sequence[str], *, flaky: bool = True) -> Iterator[list[BotServer]]:
    """House bots on loopback (plus one flaky greedy bot), stopped at the end."""
    servers = start_house_bots(kinds)
    if flaky:
        servers.append(BotServer(FlakyStrategy(), name="flaky-greedy").start())
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


@dataclass
class ArenaData:
    """What :func:`populate` made."""

    bots: dict[str, int]
    matches: list[int] = field(default_factory=list)
    tournament_id: int = 0
    tournament_matches: list[int] = field(default_factory=list)


def settings_for(url: str) -> Settings:
    return load_settings({}, database_url=url, allow_loopback=True)


def play(db: Database, settings: Settings, match_ids: list[int]) -> list[int]:
    """Play queued matches (and whatever their tournament schedules next) until none is left."""
    queue = list(match_ids)
    played: list[int] = []

    def advance(match_id: int) -> None:
        advance_for_match(db, match_id, queue.extend, min_matches=3)

    while queue:
        match_id = queue.pop(0)
        outcome = run_match_job(db, settings, match_id, "test", after_record=advance)
        assert outcome.status is JobStatus.RECORDED, outcome
        played.append(match_id)
    return played


def register(db: Database, servers: Sequence[BotServer]) -> dict[str, int]:
    return {
        s.info.name: register_bot(db, name=s.info.name, owner="tests", url=s.url).bot_id
        for s in servers
    }


def populate(db: Database, servers: Sequence[BotServer], *, tournament: bool = True) -> ArenaData:
    """Register the bots, play two standalone matches and a single-elimination tournament."""
    settings = settings_for(db.url)
    bots = register(db, servers)
    ids = list(bots.values())
    with db.session() as session:
        standalone = [
            schedule_match(session, ids[0], ids[-1], rules=SHORT, seed=11).id,
            schedule_match(session, ids[-1], ids[-2], rules=SHORT, seed=12).id,
        ]
    data = ArenaData(bots, play(db, settings, standalone))
    if not tournament:
        return data
    data.tournament_id = create_tournament(
        db,
        name="Spring Knockout",
        format_name="single_elimination",
        options={"third_place": True},
        rules=SHORT,
        seed=5,
    )
    queue: list[int] = []
    start_tournament(db, data.tournament_id, queue.extend)
    data.tournament_matches = play(db, settings, queue)
    return data
