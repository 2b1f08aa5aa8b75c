"""The schema: `gin-arena db upgrade` from an empty database, and models that round-trip.

Migrations run as the operator runs them (the console script in a subprocess, configured only
through ``ARENA_DATABASE_URL``), on a fresh SQLite file and on a fresh PostgreSQL database.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from conftest import PG_ADMIN_URL, require_service
from sqlalchemy import create_engine, inspect, select, text

from arena.db.migrate import current_revision
from arena.db.models import (
    Base,
    BotRow,
    BotStatsRow,
    GameRow,
    HandRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
    TournamentEntryRow,
    TournamentRow,
)
from arena.db.session import Database
from arena.states import BotStatus, MatchStatus, TournamentStatus


def gin_arena(
    *args: str, env: dict[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run the `gin-arena` console script of this environment."""
    script = Path(sys.executable).with_name("gin-arena")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]
    return subprocess.run(
        [*argv, *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of a database with nothing in it."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.db'}"
        return
    require_service("PostgreSQL", "127.0.0.1", 5432)
    name = f"arena_empty_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def test_db_upgrade_command_creates_the_schema_from_empty(empty_url: str) -> None:
    first = gin_arena("db", "upgrade", env={"ARENA_DATABASE_URL": empty_url})
    assert first.returncode == 0, first.stderr
    assert "schema empty -> " in first.stdout
    db = Database(empty_url)
    try:
        head = current_revision(db)
        assert head is not None
        with db.engine.connect() as conn:
            tables = set(inspect(conn).get_table_names())
        assert tables == {*Base.metadata.tables, "alembic_version"}
        # Upgrading again is a no-op, not an error.
        again = gin_arena("db", "upgrade", env={"ARENA_DATABASE_URL": empty_url})
        assert again.returncode == 0, again.stderr
        assert f"schema {head} -> {head}" in again.stdout
    finally:
        db.dispose()


def test_migrations_match_the_models(db: Database) -> None:
    """No drift: what the migrations build is what the models declare."""
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_db_upgrade_reports_a_bad_setting_without_a_traceback() -> None:
    done = gin_arena("db", "upgrade", env={"ARENA_MAX_ATTEMPTS": "0"})
    assert done.returncode == 2
    assert "ARENA_MAX_ATTEMPTS" in done.stderr
    assert "Traceback" not in done.stderr


def test_models_round_trip(db: Database) -> None:
    when = datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)
    big_seed = 2**53 + 7
    with db.session() as s:
        a = BotRow(
            name="alpha",
            owner="ann",
            url="http://127.0.0.1:9001",
            protocol_version="gin-arena/1",
            token_hash="0" * 64,
            secret="whsec_x",
        )
        b = BotRow(
            name="beta",
            owner="bob",
            url="http://127.0.0.1:9002",
            protocol_version="gin-arena/1",
            token_hash="1" * 64,
            secret="whsec_y",
            status=BotStatus.INACTIVE,
            elo=1612.5,
        )
        s.add_all([a, b])
        s.flush()
        s.add(BotStatsRow(bot_id=a.id, matches=3, latency_histogram=[0, 2, 5]))
        t = TournamentRow(
            name="cup",
            format="swiss",
            options={"rounds": 3},
            rules={"target": 100},
            seed=big_seed,
            status=TournamentStatus.RUNNING,
            started_at=when,
        )
        s.add(t)
        s.flush()
        s.add_all(
            [
                TournamentEntryRow(tournament_id=t.id, bot_id=a.id, seed_rank=1),
                TournamentEntryRow(tournament_id=t.id, bot_id=b.id, seed_rank=2, withdrawn=True),
            ]
        )
        m = MatchRow(
            bot_a_id=a.id,
            bot_b_id=b.id,
            rules={"target": 100, "nested": {"k": [1, 2]}},
            seed=big_seed,
            tournament_id=t.id,
            match_key="R1-1:1",
            status=MatchStatus.FINISHED,
            lease_expires_at=when + timedelta(seconds=30),
        )
        s.add(m)
        s.flush()
        s.add(MatchResultRow(match_id=m.id, attempt=1, summary={"winner": "a"}, digest="d" * 64))
        g = GameRow(
            match_id=m.id, index=0, winner="a", points_a=1, points_b=2, totals_a=3, totals_b=4
        )
        s.add(g)
        s.flush()
        s.add(
            HandRow(
                game_id=g.id,
                match_id=m.id,
                index=0,
                dealer="b",
                outcome="gin",
                winner="a",
                points=25,
                log={"deck": "As 2s", "actions": [[0, {"t": 1}]]},
            )
        )
        s.add(RatingHistoryRow(bot_id=a.id, match_id=m.id, before=1500.0, after=1512.0))
        ids = (a.id, b.id, t.id, m.id)

    a_id, b_id, t_id, m_id = ids
    with db.session() as s:
        bot_b = s.get_one(BotRow, b_id)
        assert bot_b.status is BotStatus.INACTIVE and bot_b.elo == 1612.5
        assert bot_b.created_at.tzinfo is not None
        assert s.get_one(BotStatsRow, a_id).latency_histogram == [0, 2, 5]
        t = s.get_one(TournamentRow, t_id)
        assert t.seed == big_seed and t.options == {"rounds": 3}
        assert t.started_at == when and t.status is TournamentStatus.RUNNING
        assert [(e.bot_id, e.withdrawn) for e in t.entries] == [(a_id, False), (b_id, True)]
        m = s.get_one(MatchRow, m_id)
        assert m.seed == big_seed
        assert m.rules == {"target": 100, "nested": {"k": [1, 2]}}
        assert m.status is MatchStatus.FINISHED
        assert m.lease_expires_at == when + timedelta(seconds=30)
        assert m.lease_expires_at is not None and m.lease_expires_at.tzinfo is not None
        assert m.result is not None and m.result.summary == {"winner": "a"}
        assert [g.index for g in m.games] == [0]
        hand = m.games[0].hands[0]
        assert hand.log == {"deck": "As 2s", "actions": [[0, {"t": 1}]]}
        assert s.scalars(select(RatingHistoryRow.after)).all() == [1512.0]


def test_naive_datetimes_are_refused(db: Database) -> None:
    with pytest.raises(Exception, match="naive datetime"), db.session() as s:
        s.add(
            TournamentRow(
                name="x", format="swiss", rules={}, seed=1, started_at=datetime(2024, 1, 1)
            )
        )
