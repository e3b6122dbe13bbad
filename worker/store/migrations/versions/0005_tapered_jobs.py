"""Whether a season's jobs are tapered (seasons.batch_tapered): full jobs of seasons.batch
matches, then a tail of smaller ones (saloon.worker.matches.batching.JobLayout). Seasons
started before keep their uniform jobs. And an index on results (game, finished_at): a
season's first start reads the game's latest results (Store.recent_match_ms), which was a
sort of all the game's results (it replaces the index on game alone, one index fewer to
keep up per recorded match); and results.match_ms, the match's own time (it was read
out of every such result's compressed record).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision: str | None = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add seasons.batch_tapered (NULL or false: uniform jobs of seasons.batch)."""
    with op.batch_alter_table("seasons") as batch:
        batch.add_column(sa.Column("batch_tapered", sa.Boolean, nullable=True))
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("match_ms", sa.Float, nullable=True))
    op.create_index("ix_results_game_finished_at", "results", ["game", "finished_at"])
    op.drop_index("ix_results_game", table_name="results")


def downgrade() -> None:
    """Drop seasons.batch_tapered and the index."""
    op.create_index("ix_results_game", "results", ["game"])
    op.drop_index("ix_results_game_finished_at", table_name="results")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("match_ms")
    with op.batch_alter_table("seasons") as batch:
        batch.drop_column("batch_tapered")
