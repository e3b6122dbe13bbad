"""The queue a season was started on (seasons.queue), so that whatever watches that queue
can re-enqueue the season's pending matches a lost Redis no longer holds, and the number of
matches each of its jobs carries (seasons.batch).

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision: str | None = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add seasons.queue (NULL: never started on a queue, e.g. played in-process) and
    seasons.batch (NULL: one match a job)."""
    with op.batch_alter_table("seasons") as batch:
        batch.add_column(sa.Column("queue", sa.String(200), nullable=True))
        batch.add_column(sa.Column("batch", sa.Integer, nullable=True))


def downgrade() -> None:
    """Drop seasons.queue."""
    with op.batch_alter_table("seasons") as batch:
        batch.drop_column("batch")
        batch.drop_column("queue")
