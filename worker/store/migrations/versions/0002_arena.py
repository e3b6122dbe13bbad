"""The arena's tables: users (hashed tokens), the package registry, season owners, schedules.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision: str | None = "0001"
branch_labels = None
depends_on = None

ID = sa.String(200)
TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the arena's tables."""
    op.create_table(
        "users",
        sa.Column("name", ID, nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_users"),
    )
    op.create_table(
        "packages",
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("digest", name="pk_packages"),
    )
    op.create_table(
        "season_owners",
        sa.Column("season_id", ID, nullable=False),
        sa.Column("organiser", ID, nullable=False),
        sa.Column("schedule_id", ID, nullable=False),
        sa.PrimaryKeyConstraint("season_id", name="pk_season_owners"),
    )
    op.create_table(
        "schedules",
        sa.Column("schedule_id", ID, nullable=False),
        sa.Column("organiser", ID, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("every_s", sa.Integer, nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        sa.Column("made", sa.Integer, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("schedule_id", name="pk_schedules"),
    )


def downgrade() -> None:
    """Drop the arena's tables."""
    for table in ("schedules", "season_owners", "packages", "users"):
        op.drop_table(table)
