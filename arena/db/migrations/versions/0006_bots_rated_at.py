"""bots.rated_at: when a bot's first rated match was recorded, indexed for the unrated list

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 19:30:00.000000

A bot is rated once a rated, decided match of it is recorded (a ``rating_history`` row). The
leaderboard's ``unrated`` list used to find the others by probing the history of every bot in
id order; ``rated_at`` (null: not rated yet) with the index ``ix_bots_unrated`` on
``(rated_at, id)`` lets it read the first unrated bots straight from the index. Bots rated
before this revision get the time of their first rating-history row (or, fitted on rated
matches without one, of their fit).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("bots") as batch:
        batch.add_column(sa.Column("rated_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE bots SET rated_at = (SELECT min(rating_history.recorded_at) FROM rating_history"
        " WHERE rating_history.bot_id = bots.id)"
    )
    op.execute(
        "UPDATE bots SET rated_at = (SELECT rating_fits.fitted_at FROM rating_fits"
        " WHERE rating_fits.bot_id = bots.id AND rating_fits.matches > 0)"
        " WHERE rated_at IS NULL"
    )
    op.create_index("ix_bots_unrated", "bots", ["rated_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_bots_unrated", table_name="bots")
    with op.batch_alter_table("bots") as batch:
        batch.drop_column("rated_at")
