"""Versions on the pages (SQLite and PostgreSQL): the bot page lists every version with its
ratings and draws each version's live Elo as a line of its own, the match page and its replay
viewer name the version of each side, and the leaderboard shows each bot's current version.
Real house bots on loopback; one of them reports a new ``version`` between matches."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from web_data import SHORT, make_app

from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.settings import load_settings

SETTINGS = load_settings({}, allow_loopback=True)


@pytest.fixture
def servers() -> Iterator[list[BotServer]]:
    bots = [
        BotServer(STRATEGIES[kind](0), name=kind, version="1.0").start()
        for kind in ("greedy", "strong")
    ]
    yield bots
    for bot in bots:
        bot.stop()


def played(db: Database, servers: list[BotServer]) -> tuple[int, int, list[int]]:
    """Bots at both servers; two matches, the first server reporting ``2.0`` before the second."""
    a = register_bot(db, name="climber", owner="o", url=servers[0].url).bot_id
    b = register_bot(db, name="rock", owner="o", url=servers[1].url).bot_id
    matches = []
    for seed in (1, 2):
        with db.session() as session:
            match_id = schedule_match(session, a, b, rules=SHORT, seed=seed).id
        assert run_match_job(db, SETTINGS, match_id, "w").status is JobStatus.RECORDED
        matches.append(match_id)
        servers[0].info.version = "2.0"
    return a, b, matches


def test_the_bot_page_lists_every_version_and_draws_a_line_for_each(
    db: Database, servers: list[BotServer]
) -> None:
    a, _, _ = played(db, servers)
    page = make_app(db).test_client().get(f"/bots/{a}").get_data(as_text=True)
    panel = page.partition('<section class="bot-versions" id="versions">')[2].partition(
        "</section>"
    )[0]
    rows = re.findall(r'<tr data-version="(\d+)">(.*?)</tr>', panel, re.S)
    assert [n for n, _ in rows] == ["2", "1"], "newest first"
    assert "<code>2.0</code>" in rows[0][1] and ">current</span>" in rows[0][1]
    assert "new version string" in rows[0][1] and "registered" in rows[1][1]
    chart = panel.partition("<svg")[2].partition("</svg>")[0]
    assert re.findall(r'<polyline data-version="(\d+)"', chart) == ["1", "2"]
    assert "Version 2 (<code>2.0</code>)" in page, "the current version under the name"


def test_the_match_page_and_its_replay_name_the_version_of_each_side(
    db: Database, servers: list[BotServer]
) -> None:
    _, _, (first, second) = played(db, servers)
    client = make_app(db).test_client()
    page = client.get(f"/matches/{second}").get_data(as_text=True)
    versions = re.search(r'<p class="versions muted">(.*?)</p>', page, re.S)
    assert versions is not None
    assert "climber v2 (<code>2.0</code>)" in versions.group(1)
    assert "rock v1 (<code>1.0</code>)" in versions.group(1)
    data = json.loads(page.partition('id="replay-data">')[2].partition("</script>")[0])
    assert data["versions"] == {"a": "v2 · 2.0", "b": "v1 · 1.0"}
    earlier = client.get(f"/matches/{first}").get_data(as_text=True)
    assert "climber v1 (<code>1.0</code>)" in earlier


def test_the_leaderboard_shows_each_bots_current_version(
    db: Database, servers: list[BotServer]
) -> None:
    played(db, servers)
    page = make_app(db).test_client().get("/").get_data(as_text=True)
    board = page.partition('<table class="leaderboard">')[2].partition("</table>")[0]
    shown = re.findall(r'>(\w+)</a> <span class="muted version"[^>]*>(v\d+[^<]*)</span>', board)
    assert sorted(shown) == [("climber", "v2 · 2.0"), ("rock", "v1 · 1.0")]
