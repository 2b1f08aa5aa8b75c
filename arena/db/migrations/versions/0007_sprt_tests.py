"""SPRT tests: the ``sprt_tests`` table, and ``matches.test_id`` (unique with ``match_key``)

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 19:09:22.189830

A test plays unrated duplicate pairs between two bots, their seeds derived from the test's
``seed``; each of its matches names it (``test_id``, key ``pair:leg``), so the test's state is
recomputed from its stored matches.
Existing matches belong to no test.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "sprt_tests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("candidate_id", sa.Integer(), nullable=False),
        sa.Column("baseline_id", sa.Integer(), nullable=False),
        sa.Column("candidate_version_id", sa.Integer(), nullable=True),
        sa.Column("baseline_version_id", sa.Integer(), nullable=True),
        sa.Column("elo0", sa.Float(), nullable=False),
        sa.Column("elo1", sa.Float(), nullable=False),
        sa.Column("alpha", sa.Float(), nullable=False),
        sa.Column("beta", sa.Float(), nullable=False),
        sa.Column("max_pairs", sa.Integer(), nullable=False),
        sa.Column("concurrency", sa.Integer(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("scheduled_pairs", sa.Integer(), nullable=False),
        sa.Column("pairs", sa.Integer(), nullable=False),
        sa.Column("pentanomial", sa.JSON(), nullable=False),
        sa.Column("llr", sa.Float(), nullable=False),
        sa.Column("llr_history", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["baseline_id"], ["bots.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["baseline_version_id"], ["bot_versions.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["candidate_id"], ["bots.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["candidate_version_id"], ["bot_versions.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("sprt_tests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_sprt_tests_baseline_id"), ["baseline_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_sprt_tests_candidate_id"), ["candidate_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_sprt_tests_status"), ["status"], unique=False)

    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("test_id", sa.Integer(), nullable=True))
        batch_op.create_index(batch_op.f("ix_matches_test_id"), ["test_id"], unique=False)
        batch_op.create_unique_constraint("uq_match_test_key", ["test_id", "match_key"])
        batch_op.create_foreign_key(
            "fk_matches_test_id", "sprt_tests", ["test_id"], ["id"], ondelete="CASCADE"
        )


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_constraint("fk_matches_test_id", type_="foreignkey")
        batch_op.drop_constraint("uq_match_test_key", type_="unique")
        batch_op.drop_index(batch_op.f("ix_matches_test_id"))
        batch_op.drop_column("test_id")

    with op.batch_alter_table("sprt_tests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sprt_tests_status"))
        batch_op.drop_index(batch_op.f("ix_sprt_tests_candidate_id"))
        batch_op.drop_index(batch_op.f("ix_sprt_tests_baseline_id"))

    op.drop_table("sprt_tests")
