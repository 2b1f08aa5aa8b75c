"""`gin-arena replay MATCH_ID`: a readable transcript, the raw record with --json, and exit
status 1 naming the problem when a stored event has been tampered with (SQLite and PostgreSQL).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from arena_procs import gin_arena
from sqlalchemy import select, update

from arena.db.models import HandRow, MatchResultRow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.players import HeuristicPlayer, Player, RandomPlayer
from arena.playing.stored import SCHEMA_VERSION
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import Claim, schedule_match
from arena.settings import Settings, load_settings


def players(claim: Claim, _settings: Settings) -> list[Player]:
    return [HeuristicPlayer(name="heuristic"), RandomPlayer(seed=3, name="random")]


@pytest.fixture
def match_id(db: Database) -> int:
    """A finished match, played in-process (HTTP is not the point here) and recorded."""
    a = register_bot(db, name="alpha", owner="t", url="http://127.0.0.1:9001").bot_id
    b = register_bot(db, name="beta", owner="t", url="http://127.0.0.1:9002").bot_id
    with db.session() as s:
        mid = schedule_match(s, a, b, rules=RuleSet(target=100), seed=42).id
    outcome = run_match_job(db, load_settings({}), mid, "test", make_players=players)
    assert outcome.status is JobStatus.RECORDED
    return mid


def replay(db: Database, *args: str) -> Any:
    return gin_arena("replay", *args, env={"ARENA_DATABASE_URL": db.url})


def tamper(db: Database, match_id: int, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit the first deal's stored log in place, as someone with database access could."""
    with db.session() as s:
        row = s.scalars(
            select(HandRow).where(HandRow.match_id == match_id).order_by(HandRow.id)
        ).first()
        assert row is not None
        log = copy.deepcopy(row.log)
        change(log)
        row.log = log


def test_replay_prints_a_transcript_and_verifies(db: Database, match_id: int) -> None:
    done = replay(db, str(match_id))
    assert done.returncode == 0, done.stderr
    assert f"Match m{match_id}: heuristic (a) v random (b), seed 42" in done.stdout
    assert "Game 0:" in done.stdout and "deal  0" in done.stdout  # numbered as the record
    assert "Winner:" in done.stdout
    assert "replay verified" in done.stderr


def test_replay_json_is_the_raw_record(db: Database, match_id: int) -> None:
    done = replay(db, str(match_id), "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["status"] == "finished" and len(record["digest"]) == 64
    assert record["winner"] in ("a", "b")
    assert all(h["deck"] and h["actions"] for g in record["games"] for h in g["hands"])


def _latency(log: dict[str, Any]) -> None:
    log["actions"][0][2] = log["actions"][0][2] + 1000.0  # replays the same: only the digest


def _points(log: dict[str, Any]) -> None:
    log["points"] = log["points"] + 10


def _deck(log: dict[str, Any]) -> None:
    deck = log["deck"]  # two characters a card: swap the first dealt card with the last
    log["deck"] = deck[-2:] + deck[2:-2] + deck[:2]


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (_latency, "do not match the digest"),
        (_points, "game 1 deal 1: points recorded"),
        (_deck, "game 1 deal 1"),
    ],
    ids=["latency", "points", "deck"],
)
def test_tampering_with_a_stored_event_is_detected(
    db: Database, match_id: int, change: Callable[[dict[str, Any]], None], named: str
) -> None:
    tamper(db, match_id, change)
    done = replay(db, str(match_id))
    assert done.returncode == 1
    assert "REPLAY MISMATCH" in done.stderr
    assert named in done.stderr
    assert "do not match the digest" in done.stderr  # every edit breaks the digest too


def test_replay_of_an_unknown_match_is_a_usage_error(db: Database) -> None:
    done = replay(db, "12345")
    assert done.returncode == 2
    assert "no match 12345" in done.stderr and "Traceback" not in done.stderr


def test_a_stored_record_that_is_no_record_is_one_line_naming_the_place(
    db: Database, match_id: int
) -> None:
    tamper(db, match_id, lambda log: log.update(points="ten"))
    done = replay(db, str(match_id))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "gin-arena: error: the stored record cannot be read: not a match record:"
        " Expected `int`, got `str` - at `$.games[0].hands[0].points`"
    ]
    assert done.stdout == ""


def test_a_record_from_an_older_schema_version_is_refused_with_one_line(
    db: Database, match_id: int
) -> None:
    with db.session() as s:
        s.execute(
            update(MatchResultRow)
            .where(MatchResultRow.match_id == match_id)
            .values(schema_version=SCHEMA_VERSION - 1)
        )
    done = replay(db, str(match_id))
    assert done.returncode == 1
    (line,) = done.stderr.strip().splitlines()
    assert f"schema version {SCHEMA_VERSION - 1} is not one this arena reads" in line
    assert "Traceback" not in done.stderr


def test_replay_of_a_match_with_no_result_yet_says_so(db: Database) -> None:
    a = register_bot(db, name="gamma", owner="t", url="http://127.0.0.1:9003").bot_id
    b = register_bot(db, name="delta", owner="t", url="http://127.0.0.1:9004").bot_id
    with db.session() as s:
        pending = schedule_match(s, a, b, rules=RuleSet(target=100), seed=1).id
    done = replay(db, str(pending))
    assert done.returncode == 2
    assert f"match {pending} has no result yet (status pending)" in done.stderr
