"""the living arena: bot versions, health probes, ladder rounds and ratings, the event outbox
and webhook endpoints, deliveries and attempts

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 16:00:00.000000

Every bot already registered gets its version 1 (reason ``registered``, its URL and live Elo),
which becomes its current version; matches and rating history recorded before versions existed
keep a null version.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ladder_rounds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("preset", sa.String(length=32), nullable=False),
        sa.Column("slot", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("scheduled", sa.Integer(), nullable=False),
        sa.Column("policy", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("preset", "slot", name="uq_ladder_round_slot"),
    )
    op.create_table(
        "bot_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=64), nullable=True),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("elo", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("bot_id", "number", name="uq_bot_version_number"),
    )
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_bot_versions_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "health_probes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("probed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("trigger", sa.String(length=16), nullable=False),
        sa.Column(
            "status_after",
            sa.Enum(
                "active", "inactive", "suspended", name="bot_status", native_enum=False, length=16
            ),
            nullable=False,
        ),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("health_probes", schema=None) as batch_op:
        batch_op.create_index("ix_health_probes_bot_time", ["bot_id", "probed_at"], unique=False)

    op.create_table(
        "ladder_ratings",
        sa.Column("preset", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("elo", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("preset", "bot_id"),
    )
    op.create_table(
        "webhook_endpoints",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("event_types", sa.JSON(), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column("previous_secret", sa.String(length=200), nullable=True),
        sa.Column("previous_secret_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.Text(), nullable=True),
        sa.Column("failed_attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_webhook_endpoints_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "version_rating_fits",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=False),
        sa.Column("ci_high", sa.Float(), nullable=False),
        sa.Column("stderr", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["version_id"], ["bot_versions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("version_id"),
    )
    with op.batch_alter_table("version_rating_fits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_version_rating_fits_bot_id"), ["bot_id"], unique=False)

    op.create_table(
        "events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("message_id", sa.String(length=64), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("bot_id", sa.Integer(), nullable=True),
        sa.Column("tournament_id", sa.Integer(), nullable=True),
        sa.Column("match_id", sa.Integer(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["match_id"], ["matches.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["tournament_id"], ["tournaments.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("message_id"),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index("ix_events_bot", ["bot_id", "id"], unique=False)
        batch_op.create_index("ix_events_match", ["match_id", "id"], unique=False)
        batch_op.create_index("ix_events_tournament", ["tournament_id", "id"], unique=False)

    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("endpoint_id", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "pending",
                "delivered",
                "failed",
                name="delivery_status",
                native_enum=False,
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_owner", sa.String(length=128), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=True),
        sa.Column("last_latency_ms", sa.Float(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["endpoint_id"], ["webhook_endpoints.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["event_id"], ["events.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("endpoint_id", "event_id", name="uq_delivery_endpoint_event"),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index("ix_deliveries_due", ["status", "next_attempt_at"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_webhook_deliveries_endpoint_id"), ["endpoint_id"], unique=False
        )

    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.Integer(), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["delivery_id"], ["webhook_deliveries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_attempts_delivery_id"), ["delivery_id"], unique=False
        )

    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("current_version_id", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("failed_probes", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(
            sa.Column("passed_probes", sa.Integer(), server_default="0", nullable=False)
        )
        batch_op.add_column(sa.Column("last_probed_at", sa.DateTime(timezone=True), nullable=True))

    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ladder_round_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("version_a_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("version_b_id", sa.Integer(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_matches_ladder_round_id"), ["ladder_round_id"], unique=False
        )
        batch_op.create_unique_constraint("uq_match_ladder_key", ["ladder_round_id", "match_key"])
        batch_op.create_foreign_key(
            "fk_matches_ladder_round",
            "ladder_rounds",
            ["ladder_round_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_foreign_key(
            "fk_matches_version_b", "bot_versions", ["version_b_id"], ["id"]
        )
        batch_op.create_foreign_key(
            "fk_matches_version_a", "bot_versions", ["version_a_id"], ["id"]
        )

    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.add_column(sa.Column("version_id", sa.Integer(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_rating_history_version_id"), ["version_id"], unique=False
        )
        batch_op.create_foreign_key(
            "fk_rating_history_version", "bot_versions", ["version_id"], ["id"], ondelete="CASCADE"
        )

    _backfill_versions()

    # The leaderboard walks the best fits, and the Elo-only bots above the 100th, by index.
    op.create_index("ix_rating_fits_rank", "rating_fits", ["rating", "matches", "bot_id"])
    op.create_index("ix_bots_elo", "bots", ["elo"])


def _backfill_versions() -> None:
    """Version 1 of every bot, made its current version."""
    bots = sa.table(
        "bots",
        sa.column("id", sa.Integer),
        sa.column("url", sa.String),
        sa.column("elo", sa.Float),
        sa.column("created_at", sa.DateTime),
        sa.column("current_version_id", sa.Integer),
    )
    versions = sa.table(
        "bot_versions",
        sa.column("id", sa.Integer),
        sa.column("bot_id", sa.Integer),
        sa.column("number", sa.Integer),
        sa.column("url", sa.String),
        sa.column("reason", sa.String),
        sa.column("elo", sa.Float),
        sa.column("created_at", sa.DateTime),
    )
    op.execute(
        versions.insert().from_select(
            ["bot_id", "number", "url", "reason", "elo", "created_at"],
            sa.select(
                bots.c.id,
                sa.literal(1),
                bots.c.url,
                sa.literal("registered"),
                bots.c.elo,
                bots.c.created_at,
            ),
        )
    )
    op.execute(
        bots.update().values(
            current_version_id=sa.select(versions.c.id)
            .where(versions.c.bot_id == bots.c.id, versions.c.number == 1)
            .scalar_subquery()
        )
    )


def downgrade() -> None:
    op.drop_index("ix_bots_elo", table_name="bots")
    op.drop_index("ix_rating_fits_rank", table_name="rating_fits")
    with op.batch_alter_table("rating_history", schema=None) as batch_op:
        batch_op.drop_constraint("fk_rating_history_version", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_rating_history_version_id"))
        batch_op.drop_column("version_id")

    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint("fk_matches_version_a", type_="foreignkey")
        batch_op.drop_constraint("fk_matches_version_b", type_="foreignkey")
        batch_op.drop_constraint("fk_matches_ladder_round", type_="foreignkey")
        batch_op.drop_constraint("uq_match_ladder_key", type_="unique")
        batch_op.drop_index(batch_op.f("ix_matches_ladder_round_id"))
        batch_op.drop_column("version_b_id")
        batch_op.drop_column("version_a_id")
        batch_op.drop_column("ladder_round_id")

    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("last_probed_at")
        batch_op.drop_column("passed_probes")
        batch_op.drop_column("failed_probes")
        batch_op.drop_column("current_version_id")

    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_attempts_delivery_id"))

    op.drop_table("webhook_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_deliveries_endpoint_id"))
        batch_op.drop_index("ix_deliveries_due")

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_tournament")
        batch_op.drop_index("ix_events_match")
        batch_op.drop_index("ix_events_bot")

    op.drop_table("events")
    with op.batch_alter_table("version_rating_fits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_version_rating_fits_bot_id"))

    op.drop_table("version_rating_fits")
    with op.batch_alter_table("webhook_endpoints", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_endpoints_bot_id"))

    op.drop_table("webhook_endpoints")
    op.drop_table("ladder_ratings")
    with op.batch_alter_table("health_probes", schema=None) as batch_op:
        batch_op.drop_index("ix_health_probes_bot_time")

    op.drop_table("health_probes")
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_bot_versions_bot_id"))

    op.drop_table("bot_versions")
    op.drop_table("ladder_rounds")
