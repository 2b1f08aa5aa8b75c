"""Migration 0007 adds SPRT tests and loses nothing (SQLite and PostgreSQL): the matches stored
before it belong to no test, a test stores its seed (62 bits, not null), and a test's matches
are unique on test and ``pair:leg``; the downgrade takes the table and the column away
again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from old_schema import database_at
from sqlalchemy import inspect, select, text

from arena.db.migrate import alembic_config, upgrade
from arena.db.models import MatchRow
from arena.db.session import Database

NOW = "2026-01-01 00:00:00"


@pytest.fixture(params=["sqlite", "postgresql"])
def at_0006(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    with database_at("0006", request.param, tmp_path) as db:
        yield db


def _fill(db: Database) -> None:
    with db.engine.begin() as conn:
        for i in (1, 2):
            conn.execute(
                text(
                    "INSERT INTO bots (id, name, owner, url, protocol_version, token_hash, secret,"
                    " status, elo, created_at, updated_at, failed_probes, passed_probes)"
                    " VALUES (:id, :name, 'o', 'http://b.example', 'gin-arena/1', :h, 's',"
                    " 'active', 1500, :now, :now, 0, 0)"
                ),
                {"id": i, "name": f"bot{i}", "h": f"h{i}", "now": NOW},
            )
        conn.execute(
            text(
                "INSERT INTO matches (id, status, bot_a_id, bot_b_id, rules, seed, rated,"
                " games_won_a, games_won_b, attempt, created_at) VALUES (1, 'pending', 1, 2,"
                " '{}', 7, true, 0, 0, 0, :now)"
            ),
            {"now": NOW},
        )


def test_matches_stored_before_0007_belong_to_no_test(at_0006: Database) -> None:
    _fill(at_0006)
    upgrade(at_0006)
    with at_0006.session() as session:
        match = session.scalars(select(MatchRow)).one()
        assert match.test_id is None
        assert match.seed == 7
    names = inspect(at_0006.engine).get_table_names()
    assert "sprt_tests" in names


def test_a_test_stores_its_seed_at_full_width(at_0006: Database) -> None:
    _fill(at_0006)
    upgrade(at_0006)
    seed = 2**62 - 1  # the widest seed a test takes: BIGINT, not INTEGER
    with at_0006.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO sprt_tests (id, candidate_id, baseline_id, elo0, elo1, alpha, beta,"
                " max_pairs, concurrency, rules, seed, status, created_by, scheduled_pairs,"
                " pairs, pentanomial, llr, llr_history, created_at) VALUES (1, 1, 2, 0, 40,"
                " 0.05, 0.05, 10, 2, '{}', :seed, 'running', 'organiser', 0, 0, '[0,0,0,0,0]',"
                " 0, '[]', :now)"
            ),
            {"seed": seed, "now": NOW},
        )
        assert conn.execute(text("SELECT seed FROM sprt_tests")).scalar_one() == seed
    columns = {c["name"]: c for c in inspect(at_0006.engine).get_columns("sprt_tests")}
    assert columns["seed"]["nullable"] is False


def test_downgrade_from_0007_drops_the_tests(at_0006: Database) -> None:
    _fill(at_0006)
    upgrade(at_0006)
    command.downgrade(alembic_config(str(at_0006.engine.url.render_as_string(False))), "0006")
    inspector = inspect(at_0006.engine)
    assert "sprt_tests" not in inspector.get_table_names()
    assert "test_id" not in {c["name"] for c in inspector.get_columns("matches")}
