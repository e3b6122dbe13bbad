"""Tournaments (saloon.arena.tournament): a deadline, the versions each owner marked as
final, the frozen field, the finals' batches and the published report.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision: str | None = "0005"
branch_labels = None
depends_on = None

ID = sa.String(200)
TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the tournaments and their final marks."""
    op.create_table(
        "tournaments",
        sa.Column("tournament_id", ID, nullable=False),
        sa.Column("organiser", ID, nullable=False),
        sa.Column("game", ID, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("phase", sa.String(20), nullable=False),
        sa.Column("deadline", TIME, nullable=False),
        sa.Column("frozen_at", TIME, nullable=True),
        sa.Column("field", sa.JSON, nullable=True),
        sa.Column("batches", sa.Integer, nullable=False),
        sa.Column("state", sa.JSON, nullable=False),
        sa.Column("report", sa.JSON, nullable=True),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", name="pk_tournaments"),
    )
    op.create_table(
        "tournament_finals",
        sa.Column("tournament_id", ID, nullable=False),
        sa.Column("bot", ID, nullable=False),
        sa.Column("version", ID, nullable=False),
        sa.Column("owner", ID, nullable=False),
        sa.Column("marked_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("tournament_id", "bot", "version", name="pk_tournament_finals"),
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_table("tournament_finals")
    op.drop_table("tournaments")
