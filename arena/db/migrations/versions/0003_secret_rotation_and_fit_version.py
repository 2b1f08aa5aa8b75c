"""secret rotation window and the rating fit's version

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 10:15:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("previous_secret", sa.String(length=200), nullable=True))
        batch_op.add_column(
            sa.Column("previous_secret_expires_at", sa.DateTime(timezone=True), nullable=True)
        )
    op.create_table(
        "rating_fit_state",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("results", sa.Integer(), nullable=False),
        sa.Column("fitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("rating_fit_state")
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("previous_secret_expires_at")
        batch_op.drop_column("previous_secret")
