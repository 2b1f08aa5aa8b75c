"""whole-history rating fits and withdrawal order

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 14:33:10.463778
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "rating_fits",
        sa.Column("bot_id", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=False),
        sa.Column("ci_high", sa.Float(), nullable=False),
        sa.Column("stderr", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("provisional", sa.Boolean(), nullable=False),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("bot_id"),
    )
    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("withdrawn_order", sa.Integer(), nullable=True))


def downgrade() -> None:

    with op.batch_alter_table("tournament_entries", schema=None) as batch_op:
        batch_op.drop_column("withdrawn_order")

    op.drop_table("rating_fits")
