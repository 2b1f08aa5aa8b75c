"""The bot page shows the bot's health (SQLite and PostgreSQL): healthy with its latest probe,
failing on its way to suspension, suspended with the reason of each failed probe, and never
the bot's URL in a reason; a bot never probed says so."""

from __future__ import annotations

import html
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from loopback import free_port
from web_data import make_app, settings_for

from arena.bots.house import start_house_bots
from arena.bots.sdk import BotServer
from arena.db.session import Database
from arena.services.bots import register_bot
from arena.services.health import health_sweep

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def server() -> Iterator[BotServer]:
    (bot,) = start_house_bots(["greedy"])
    yield bot
    bot.stop()


def _page(db: Database, bot_id: int) -> str:
    response = make_app(db).test_client().get(f"/bots/{bot_id}")
    assert response.status_code == 200
    return html.unescape(response.get_data(as_text=True))


def _sweeps(db: Database, n: int, first: int = 0) -> None:
    """Sweeps ``first`` to ``first + n - 1``, one interval apart from T0."""
    settings = settings_for(db.url)
    for i in range(first, first + n):
        now = T0 + timedelta(seconds=i * settings.health_interval_seconds)
        health_sweep(db, settings, lambda ids: None, now=now)


def _health(page: str) -> str:
    start = page.index('<section class="health"')
    return page[start : page.index("</section>", start)]


def test_a_healthy_bot_shows_its_passed_probes(db: Database, server: BotServer) -> None:
    bot = register_bot(db, name="fine", owner="o", url=server.url).bot_id
    _sweeps(db, 2)
    health = _health(_page(db, bot))
    assert "healthy" in health and "its last 2 probes passed" in health
    assert health.count("passed</span>") == 2


def test_a_bot_never_probed_says_so(db: Database) -> None:
    bot = register_bot(db, name="new", owner="o", url="http://127.0.0.1:9").bot_id
    assert "Not probed yet." in _health(_page(db, bot))


def test_a_failing_then_suspended_bot_shows_why(db: Database) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    bot = register_bot(db, name="gone", owner="o", url=url).bot_id
    _sweeps(db, 2)
    health = _health(_page(db, bot))
    assert "failing" in health and "2 of the 3 failed probes in a row" in health
    _sweeps(db, 1, first=2)
    page = _page(db, bot)
    assert '<span class="tag">suspended</span></h1>' in page
    health = _health(page)
    assert "its last 3 health probes failed" in health
    assert "until 2 probes in a row pass (0 so far)" in health
    assert health.count("GET /: connection: connection refused") == 3
    assert url not in page
