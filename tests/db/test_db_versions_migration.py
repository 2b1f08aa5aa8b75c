"""Migration 0005 gives every bot stored before versions its version 1, and loses nothing
(SQLite and PostgreSQL): bots, matches and rating history as they were, each bot's version 1
at its URL and live Elo made its current version, and the matches and history recorded before
it with no version (the arena cannot tell which code played them). Migration 0006 marks the
bots with a rating history rated (``rated_at``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from old_schema import database_at
from sqlalchemy import func, select, text

from arena.db.migrate import upgrade
from arena.db.models import BotRow, BotVersionRow, MatchRow, RatingHistoryRow
from arena.db.session import Database
from arena.reading.queries.bot_versions import bot_versions
from arena.reading.queries.bots import ratings_board
from arena.services.versions import observe_reported_version

NOW = "2026-01-01 00:00:00"


@pytest.fixture(params=["sqlite", "postgresql"])
def at_0004(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A database migrated only to revision 0004 (before versions)."""
    with database_at("0004", request.param, tmp_path) as db:
        yield db


def _fill(db: Database) -> None:
    """Three bots, two finished rated matches with their rating history, one pending."""
    with db.engine.begin() as conn:
        for i, (name, elo) in enumerate((("ann", 1523.5), ("bob", 1476.5), ("cid", 1500.0))):
            conn.execute(
                text(
                    "INSERT INTO bots (id, name, owner, url, protocol_version, token_hash, secret,"
                    " status, elo, created_at, updated_at) VALUES (:id, :name, 'o', :url,"
                    " 'gin-arena/1', :hash, 's', 'active', :elo, :now, :now)"
                ),
                {
                    "id": i + 1,
                    "name": name,
                    "url": f"http://bots.example/{name}",
                    "hash": f"h{i}",
                    "elo": elo,
                    "now": NOW,
                },
            )
        for match_id, status, winner in (
            (1, "finished", "a"),
            (2, "finished", "a"),
            (3, "pending", None),
        ):
            conn.execute(
                text(
                    "INSERT INTO matches (id, status, bot_a_id, bot_b_id, rules, seed, rated,"
                    " winner, games_won_a, games_won_b, attempt, created_at) VALUES (:id, :status,"
                    " 1, 2, '{}', :id, true, :winner, 0, 0, 1, :now)"
                ),
                {"id": match_id, "status": status, "winner": winner, "now": NOW},
            )
        for row_id, (bot_id, match_id, before, after) in enumerate(
            (
                (1, 1, 1500.0, 1512.0),
                (2, 1, 1500.0, 1488.0),
                (1, 2, 1512.0, 1523.5),
                (2, 2, 1488.0, 1476.5),
            ),
            start=1,
        ):
            conn.execute(
                text(
                    "INSERT INTO rating_history (id, bot_id, match_id, before, after, recorded_at)"
                    " VALUES (:id, :bot, :match, :before, :after, :now)"
                ),
                {
                    "id": row_id,
                    "bot": bot_id,
                    "match": match_id,
                    "before": before,
                    "after": after,
                    "now": NOW,
                },
            )


def test_migration_0005_gives_each_stored_bot_its_version_1_and_loses_nothing(
    at_0004: Database,
) -> None:
    _fill(at_0004)
    upgrade(at_0004)
    with at_0004.session() as session:
        bots = {b.name: b for b in session.scalars(select(BotRow))}
        versions = {v.bot_id: v for v in session.scalars(select(BotVersionRow))}
        assert sorted(bots) == ["ann", "bob", "cid"]
        assert len(versions) == 3, "exactly one version per bot"
        for bot in bots.values():
            version = versions[bot.id]
            assert bot.current_version_id == version.id
            assert (version.number, version.reason, version.label) == (1, "registered", None)
            assert (version.url, version.elo) == (bot.url, bot.elo)
            assert version.created_at == bot.created_at
        assert bots["ann"].elo == 1523.5 and bots["bob"].elo == 1476.5
        matches = session.execute(
            select(
                MatchRow.id, MatchRow.status, MatchRow.version_a_id, MatchRow.version_b_id
            ).order_by(MatchRow.id)
        ).all()
        assert [(m.id, m.status.value, m.version_a_id, m.version_b_id) for m in matches] == [
            (1, "finished", None, None),
            (2, "finished", None, None),
            (3, "pending", None, None),
        ]
        history = session.execute(
            select(
                RatingHistoryRow.bot_id, RatingHistoryRow.after, RatingHistoryRow.version_id
            ).order_by(RatingHistoryRow.id)
        ).all()
        assert [tuple(h) for h in history] == [
            (1, 1512.0, None),
            (2, 1488.0, None),
            (1, 1523.5, None),
            (2, 1476.5, None),
        ]
    listed = bot_versions(at_0004, bots["ann"].id)
    assert [(v["number"], v["current"], v["elo"], v["matches"]) for v in listed] == [
        (1, True, 1523.5, 0)
    ]


def test_after_migration_0005_a_reported_string_names_version_1_then_makes_version_2(
    at_0004: Database,
) -> None:
    _fill(at_0004)
    upgrade(at_0004)
    with at_0004.session() as session:
        assert observe_reported_version(session, 1, "1.0") is None
        new = observe_reported_version(session, 1, "1.1")
    with at_0004.session() as session:
        rows = session.execute(
            select(BotVersionRow.number, BotVersionRow.label, BotVersionRow.elo)
            .where(BotVersionRow.bot_id == 1)
            .order_by(BotVersionRow.number)
        ).all()
        assert [tuple(r) for r in rows] == [(1, "1.0", 1523.5), (2, "1.1", 1523.5)]
        assert session.get_one(BotRow, 1).current_version_id == new
        assert session.scalar(select(func.count()).select_from(BotVersionRow)) == 4


def test_migration_0006_marks_the_bots_with_a_rating_history_rated(at_0004: Database) -> None:
    """``rated_at`` is backfilled from each bot's first rating-history row, so the unrated list
    (read by ``rated_at`` from ``ix_bots_unrated``) holds only the bot that never played."""
    _fill(at_0004)
    upgrade(at_0004)
    with at_0004.session() as session:
        rows = session.execute(select(BotRow.name, BotRow.rated_at)).all()
        rated = {name: stamp for name, stamp in rows}  # noqa: C416 (rows, not a mapping)
    assert rated["cid"] is None
    for name in ("ann", "bob"):
        stamp = rated[name]
        assert stamp is not None and stamp.strftime("%Y-%m-%d %H:%M:%S") == NOW
    ranked, unrated = ratings_board(at_0004)
    assert sorted(row["name"] for row in ranked) == ["ann", "bob"]
    assert [row["name"] for row in unrated] == ["cid"]
