"""``gin-arena ladder run | status`` as a user runs them, on the embedded SQLite database with
real house bots over HTTP: a round is played here and said so, a second run in the slot says
the round already ran, ``status`` shows the standings (``--json``: the API's document), and the
mistakes a user can make are one line with exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.bots.house import start_house_bots
from arena.db.migrate import upgrade
from arena.db.session import Database
from arena.reading.queries import bots as bot_queries
from arena.services.bots import register_bot

SLOT_TIME = "2026-12-01T12:00:00Z"


def gin_arena(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("gin-arena")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.run(
        [*argv, *args],
        cwd=cwd,
        env={**base, "ARENA_ALLOW_LOOPBACK": "1", "ARENA_WORKER_PROCESSES": "1", **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def arena_dir(tmp_path: Path) -> Iterator[Path]:
    """A working directory whose ``arena.db`` has four house bots, serving over HTTP."""
    servers = start_house_bots(["strong", "greedy", "balanced", "random"])
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        upgrade(db)
        for s in servers:
            register_bot(db, name=s.info.name, owner="tests", url=s.url)
        db.dispose()
        yield tmp_path
    finally:
        for s in servers:
            s.stop()


def test_ladder_run_plays_the_slots_round_here_and_a_second_run_says_it_ran(
    arena_dir: Path,
) -> None:
    done = gin_arena(arena_dir, "ladder", "run", "--at", SLOT_TIME)
    assert done.returncode == 0, done.stdout + done.stderr
    first, played = done.stdout.strip().splitlines()
    assert first.startswith("ladder standard, slot 5987088 (2026-12-01 12:00:00 UTC): round 1")
    assert "scheduled 4 match(es), 2 duplicate pair(s), among 4 active bot(s)" in first
    assert played == "played: finished 4"
    db = Database(f"sqlite:///{arena_dir / 'arena.db'}")
    try:
        assert len(bot_queries.ratings_board(db)[0]) == 4  # refitted: every bot has its rating
        assert all(row["rating"] is not None for row in bot_queries.ratings_board(db)[0])
    finally:
        db.dispose()
    again = gin_arena(arena_dir, "ladder", "run", "--at", "2026-12-01T12:04:59Z")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == (
        "ladder standard, slot 5987088 (2026-12-01 12:00:00 UTC): this slot's round already"
        " ran (round 1, 4 match(es)); nothing scheduled. The next slot starts at 12:05:00 UTC"
    )
    status = gin_arena(arena_dir, "ladder", "status")
    assert status.returncode == 0, status.stderr
    assert "ladder: standard, a round every 300 s" in status.stdout
    assert "last round 1 (slot 5987088" in status.stdout
    assert status.stdout.count("│ active │") == 4
    data = json.loads(gin_arena(arena_dir, "ladder", "status", "--json").stdout)
    assert set(data) == {"policy", "day", "slot", "ladders"}  # as GET /api/v1/ladder
    (ladder,) = data["ladders"]
    assert [row["rank"] for row in ladder["standings"]] == [1, 2, 3, 4]
    assert all(row["matches"] == 2 for row in ladder["standings"])
    assert data["policy"]["presets"] == ["standard"]


def test_ladder_run_without_waiting_leaves_the_matches_pending(arena_dir: Path) -> None:
    done = gin_arena(arena_dir, "ladder", "run", "--at", SLOT_TIME, "--no-wait")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == (
        "left pending: a running `gin-arena serve` picks them up"
    )
    status = json.loads(gin_arena(arena_dir, "ladder", "status", "--json").stdout)
    assert status["ladders"][0]["in_flight"] == 4


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["run"], {"ARENA_LADDER_PRESETS": ""}, "the ladder is off: ARENA_LADDER_PRESETS is empty"),
        (["run", "--at", "noon"], {}, "--at must be an ISO 8601 time"),
        (["run", "--preset", "chess"], {}, "no preset 'chess'"),
        (["status", "--limit", "0"], {}, "must be 1 to 10000"),
    ],
    ids=["off", "bad-time", "bad-preset", "bad-limit"],
)
def test_a_mistake_is_one_line_and_exit_status_2(
    arena_dir: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    done = gin_arena(arena_dir, "ladder", *args, **env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_ladder_status_without_a_database_says_how_to_make_one(tmp_path: Path) -> None:
    done = gin_arena(tmp_path, "ladder", "status")
    assert done.returncode == 2
    assert "run `gin-arena db upgrade`" in done.stderr
