"""A real bot server goes down and comes back on the same port: three failed sweeps suspend it
(``bot.suspended`` in the outbox), a match against it meanwhile is forfeited at the start with
no request reaching it, and two good sweeps resume it (``bot.resumed``); then the same story
through the local executor's own health timer. SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from health_support import (
    bot_row,
    events_of,
    health_settings,
    probes_of,
    register,
    tick,
    wait_until,
)
from loopback import free_port

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.db.models import MatchRow
from arena.db.session import Database
from arena.playing.executors import LocalExecutor
from arena.playing.jobs import JobStatus, run_match_job
from arena.protocol.signing import generate_secret
from arena.rules.ruleset import RuleSet
from arena.services.health import health_sweep
from arena.services.matches import schedule_match
from arena.states import BotStatus, ForfeitKind

SECRET = generate_secret()


class Restartable:
    """A house bot on a fixed port that can be stopped and started again; it counts the
    ``POST /start`` requests it receives."""

    def __init__(self) -> None:
        self.port = free_port()
        self.starts: list[str] = []
        self.server: BotServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        server = house_bot("strong", port=self.port, secret=SECRET, name="comeback")
        server.on_start = lambda request: self.starts.append(request.match_id)
        self.server = server.start()

    def down(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None


@pytest.fixture
def comeback() -> Iterator[Restartable]:
    bot = Restartable()
    bot.up()
    yield bot
    bot.down()


@pytest.fixture
def opponent() -> Iterator[BotServer]:
    server = house_bot("greedy", secret=SECRET, name="opponent").start()
    yield server
    server.stop()


def _statuses(db: Database, bot: int) -> tuple[BotStatus, int, int]:
    row = bot_row(db, bot)
    return row.status, row.failed_probes, row.passed_probes


def test_a_bot_that_goes_down_is_suspended_and_comes_back_resumed(
    db: Database, comeback: Restartable, opponent: BotServer
) -> None:
    settings = health_settings(db, health_timeout_seconds=5.0)
    bot = register(db, "comeback", comeback.url, SECRET)
    rival = register(db, "opponent", opponent.url, SECRET)
    sweep = lambda n: health_sweep(db, settings, lambda ids: None, now=tick(n, settings))  # noqa: E731

    assert sweep(0) == []
    assert _statuses(db, bot) == (BotStatus.ACTIVE, 0, 1)
    comeback.down()
    assert [sweep(1), sweep(2)] == [[], []]
    assert _statuses(db, bot) == (BotStatus.ACTIVE, 2, 0)
    assert sweep(3) == [bot]
    assert _statuses(db, bot) == (BotStatus.SUSPENDED, 3, 0)

    comeback.up()  # back on the same port, but still suspended: its match is not played
    with db.session() as session:
        match_id = schedule_match(
            session, rival, bot, rules=RuleSet(target=50, best_of=1), seed=7, rated=False
        ).id
    assert run_match_job(db, settings, match_id, "test").status is JobStatus.RECORDED
    with db.session() as session:
        match = session.get_one(MatchRow, match_id)
        assert (match.winner, match.forfeit_seat) == ("a", "b")
        assert match.forfeit_kind is ForfeitKind.UNREACHABLE_AT_START
        assert "suspended: its last 3 health probes failed" in (match.forfeit_reason or "")
    assert comeback.starts == []

    assert sweep(4) == []
    assert _statuses(db, bot) == (BotStatus.SUSPENDED, 0, 1)
    assert sweep(5) == [bot]
    assert _statuses(db, bot) == (BotStatus.ACTIVE, 0, 2)
    assert [p.passed for p in probes_of(db, bot)] == [True, False, False, False, True, True]

    events = events_of(db, bot, "bot.suspended", "bot.resumed")
    assert [(e.type, e.data) for e in events] == [
        (
            "bot.suspended",
            {
                "bot": {"id": bot, "name": "comeback"},
                "reason": "GET /: connection: connection refused",
                "failed_probes": 3,
            },
        ),
        ("bot.resumed", {"bot": {"id": bot, "name": "comeback"}, "passed_probes": 2}),
    ]
    suspended, resumed = events
    assert suspended.id < resumed.id and suspended.message_id != resumed.message_id


def test_the_local_executors_health_timer_suspends_and_resumes_a_real_bot(
    db: Database, comeback: Restartable
) -> None:
    settings = health_settings(
        db,
        health_interval_seconds=0.2,
        health_timeout_seconds=2.0,
        ladder_presets="",
        pickup_interval_seconds=0,
    )
    bot = register(db, "comeback", comeback.url, SECRET)
    with LocalExecutor(settings, processes=1, threads=1):
        wait_until(lambda: probes_of(db, bot), timeout=60, what="the first probe")
        comeback.down()
        wait_until(
            lambda: bot_row(db, bot).status is BotStatus.SUSPENDED,
            timeout=60,
            what="the bot to be suspended",
        )
        comeback.up()
        wait_until(
            lambda: bot_row(db, bot).status is BotStatus.ACTIVE,
            timeout=60,
            what="the bot to be resumed",
        )
    types = [e.type for e in events_of(db, bot, "bot.suspended", "bot.resumed")]
    assert types == ["bot.suspended", "bot.resumed"]
