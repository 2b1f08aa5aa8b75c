"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-29 14:28:29.668592
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("protocol_version", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column(
            "status",
            sa.Enum("active", "inactive", name="bot_status", native_enum=False, length=16),
            nullable=False,
        ),
        sa.Column("elo", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_bots_token_hash"), ["token_hash"], unique=False)

    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("format", sa.String(length=32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "created",
                "running",
                "finished",
                "cancelled",
                name="tournament_status",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "bot_stats",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("games_won", sa.Integer(), nullable=False),
        sa.Column("games_lost", sa.Integer(), nullable=False),
        sa.Column("hands_played", sa.Integer(), nullable=False),
        sa.Column("hands_won", sa.Integer(), nullable=False),
        sa.Column("knocks", sa.Integer(), nullable=False),
        sa.Column("gins", sa.Integer(), nullable=False),
        sa.Column("big_gins", sa.Integer(), nullable=False),
        sa.Column("undercut", sa.Integer(), nullable=False),
        sa.Column("undercuts", sa.Integer(), nullable=False),
        sa.Column("misknocks", sa.Integer(), nullable=False),
        sa.Column("deadwood_at_knock", sa.Integer(), nullable=False),
        sa.Column("faults", sa.Integer(), nullable=False),
        sa.Column("forfeits", sa.Integer(), nullable=False),
        sa.Column("calls", sa.Integer(), nullable=False),
        sa.Column("latency_histogram", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("bot_id"),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "pending",
                "running",
                "finished",
                "failed",
                "cancelled",
                name="match_status",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("bot_a_id", sa.Integer(), nullable=False),
        sa.Column("bot_b_id", sa.Integer(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("match_key", sa.String(length=64), nullable=True),
        sa.Column("winner", sa.String(length=1), nullable=True),
        sa.Column("games_won_a", sa.Integer(), nullable=False),
        sa.Column("games_won_b", sa.Integer(), nullable=False),
        sa.Column("forfeit_seat", sa.String(length=4), nullable=True),
        sa.Column("forfeit_reason", sa.Text(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("lease_owner", sa.String(length=128), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("bot_time_ms", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["bot_a_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(
            ["bot_b_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "match_key", name="uq_match_tournament_key"),
    )
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_matches_bot_a_id"), ["bot_a_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_matches_bot_b_id"), ["bot_b_id"], unique=False)
        batch_op.create_index("ix_matches_created", ["created_at", "id"], unique=False)
        batch_op.create_index(batch_op.f("ix_matches_status"), ["status"], unique=False)
        batch_op.create_index(
            "ix_matches_status_lease", ["status", "lease_expires_at"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_matches_tournament_id"), ["tournament_id"], unique=False
        )

    op.create_table(
        "tournament_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("seed_rank", sa.Integer(), nullable=False),
        sa.Column("withdrawn", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"],
            ["bots.id"],
        ),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("tournament_id", "bot_id"),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("winner", sa.String(length=1), nullable=True),
        sa.Column("points_a", sa.Integer(), nullable=False),
        sa.Column("points_b", sa.Integer(), nullable=False),
        sa.Column("totals_a", sa.Integer(), nullable=False),
        sa.Column("totals_b", sa.Integer(), nullable=False),
        sa.Column("shutout", sa.Boolean(), nullable=False),
        sa.Column("complete", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("match_id", "index"),
    )
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_games_match_id"), ["match_id"], unique=False)

    op.create_table(
        "match_results",
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("match_id"),
    )
    op.create_table(
        "rating_history",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("before", sa.Float(), nullable=False),
        sa.Column("after", sa.Float(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "match_id"),
    )
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rating_history_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "hands",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.Integer(), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("dealer", sa.String(length=1), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("winner", sa.String(length=1), nullable=True),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("knocker", sa.String(length=1), nullable=True),
        sa.Column("knocker_deadwood", sa.Integer(), nullable=True),
        sa.Column("defender_deadwood", sa.Integer(), nullable=True),
        sa.Column("misknocks", sa.Integer(), nullable=False),
        sa.Column("log", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "index"),
    )
    with op.batch_alter_table("hands", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_hands_game_id"), ["game_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_hands_match_id"), ["match_id"], unique=False)


def downgrade() -> None:

    with op.batch_alter_table("hands", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hands_match_id"))
        batch_op.drop_index(batch_op.f("ix_hands_game_id"))

    op.drop_table("hands")
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rating_history_bot_id"))

    op.drop_table("rating_history")
    op.drop_table("match_results")
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_games_match_id"))

    op.drop_table("games")
    op.drop_table("tournament_entries")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_matches_tournament_id"))
        batch_op.drop_index("ix_matches_status_lease")
        batch_op.drop_index(batch_op.f("ix_matches_status"))
        batch_op.drop_index("ix_matches_created")
        batch_op.drop_index(batch_op.f("ix_matches_bot_b_id"))
        batch_op.drop_index(batch_op.f("ix_matches_bot_a_id"))

    op.drop_table("matches")
    op.drop_table("bot_stats")
    op.drop_table("tournaments")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_bots_token_hash"))

    op.drop_table("bots")
