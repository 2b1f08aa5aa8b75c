"""the forfeit's kind and the stored record's schema version

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 14:00:00.000000

``matches.forfeit_kind`` is filled in once for the forfeits already stored, from the start of
their reason text (the only place the kind was kept until now); a reason that names none of
today's kinds leaves it null. Every stored record so far is schema version 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Each kind and the reason texts (LIKE patterns) the match runner wrote for it.
BACKFILL = (
    ("unreachable_at_start", "unreachable at the start%"),
    ("signature_refused_at_start", "refused the arena's signature at the start%"),
    ("max_strikes", "% faults (max_strikes %"),
)


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "forfeit_kind",
                sa.Enum(
                    "unreachable_at_start",
                    "signature_refused_at_start",
                    "max_strikes",
                    name="forfeit_kind",
                    native_enum=False,
                    length=32,
                ),
                nullable=True,
            )
        )
    with op.batch_alter_table("match_results", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("schema_version", sa.Integer(), server_default="1", nullable=False)
        )
    matches = sa.table(
        "matches", sa.column("forfeit_kind", sa.String), sa.column("forfeit_reason", sa.Text)
    )
    for kind, pattern in BACKFILL:
        op.execute(
            matches.update()
            .where(matches.c.forfeit_reason.like(pattern), matches.c.forfeit_kind.is_(None))
            .values(forfeit_kind=kind)
        )


def downgrade() -> None:
    with op.batch_alter_table("match_results", schema=None) as batch_op:
        batch_op.drop_column("schema_version")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("forfeit_kind")
