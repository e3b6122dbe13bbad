"""Ratings checkpoints (incremental boards) and continuous ladders.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision: str | None = "0002"
branch_labels = None
depends_on = None

ID = sa.String(200)
TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the checkpoint tables and the continuous ladders."""
    op.create_table(
        "rating_boards",
        sa.Column("board", ID, nullable=False),
        sa.Column("position_seq", sa.Integer, nullable=False),
        sa.Column("position_idx", sa.Integer, nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("board", name="pk_rating_boards"),
    )
    op.create_table(
        "rating_entries",
        sa.Column("board", ID, nullable=False),
        sa.Column("bot", ID, nullable=False),
        sa.Column("mu", sa.Float, nullable=True),
        sa.Column("sigma", sa.Float, nullable=True),
        sa.Column("data", sa.JSON, nullable=False),
        sa.PrimaryKeyConstraint("board", "bot", name="pk_rating_entries"),
    )
    op.create_table(
        "rating_history",
        sa.Column("board", ID, nullable=False),
        sa.Column("bot", ID, nullable=False),
        sa.Column("step", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("match_id", ID, nullable=False),
        sa.Column("season", ID, nullable=False),
        sa.Column("version", ID, nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
        sa.PrimaryKeyConstraint("board", "bot", "step", name="pk_rating_history"),
    )
    op.create_table(
        "rating_h2h",
        sa.Column("board", ID, nullable=False),
        sa.Column("a", ID, nullable=False),
        sa.Column("b", ID, nullable=False),
        sa.Column("above", sa.Integer, nullable=False),
        sa.Column("below", sa.Integer, nullable=False),
        sa.Column("tied", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("board", "a", "b", name="pk_rating_h2h"),
    )
    op.create_table(
        "rating_skipped",
        sa.Column("board", ID, nullable=False),
        sa.Column("match_id", ID, nullable=False),
        sa.PrimaryKeyConstraint("board", "match_id", name="pk_rating_skipped"),
    )
    op.create_table(
        "continuous_ladders",
        sa.Column("ladder_id", ID, nullable=False),
        sa.Column("organiser", ID, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("batches", sa.Integer, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("ladder_id", name="pk_continuous_ladders"),
    )


def downgrade() -> None:
    """Drop them."""
    for table in (
        "continuous_ladders",
        "rating_skipped",
        "rating_h2h",
        "rating_history",
        "rating_entries",
        "rating_boards",
    ):
        op.drop_table(table)
