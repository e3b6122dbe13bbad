"""The first schema: bots, versions, seasons, scheduled matches, results, faults, records.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision: str | None = None
branch_labels = None
depends_on = None

ID = sa.String(200)
TIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create every table of the first schema."""
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", ID, nullable=False),
        sa.Column("owner", ID, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_bots"),
        sa.UniqueConstraint("name", name="uq_bots_name"),
    )
    op.create_table(
        "bot_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("bot_id", sa.Integer, nullable=False),
        sa.Column("version", ID, nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_bot_versions"),
        sa.ForeignKeyConstraint(["bot_id"], ["bots.id"], name="fk_bot_versions_bot_id_bots"),
        sa.UniqueConstraint("bot_id", "version", name="uq_bot_versions_bot_id_version"),
        sa.UniqueConstraint("bot_id", "seq", name="uq_bot_versions_bot_id_seq"),
    )
    op.create_table(
        "seasons",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("season_id", ID, nullable=False),
        sa.Column("game", ID, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("created_at", TIME, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_seasons"),
        sa.UniqueConstraint("season_id", name="uq_seasons_season_id"),
    )
    op.create_index("ix_seasons_game", "seasons", ["game"])
    op.create_table(
        "scheduled_matches",
        sa.Column("match_id", ID, nullable=False),
        sa.Column("season_pk", sa.Integer, nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("updated_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("match_id", name="pk_scheduled_matches"),
        sa.ForeignKeyConstraint(
            ["season_pk"], ["seasons.id"], name="fk_scheduled_matches_season_pk_seasons"
        ),
        sa.UniqueConstraint("season_pk", "idx", name="uq_scheduled_matches_season_pk_idx"),
    )
    op.create_table(
        "results",
        sa.Column("match_id", ID, nullable=False),
        sa.Column("game", ID, nullable=False),
        sa.Column("options", sa.JSON, nullable=False),
        sa.Column("seed", sa.String(40), nullable=False),
        sa.Column("outcome", sa.String(20), nullable=False),
        sa.Column("abort_reason", sa.Text, nullable=False),
        sa.Column("saloon_version", sa.String(40), nullable=False),
        sa.Column("finished_at", TIME, nullable=False),
        sa.PrimaryKeyConstraint("match_id", name="pk_results"),
    )
    op.create_index("ix_results_game", "results", ["game"])
    op.create_table(
        "result_seats",
        sa.Column("match_id", ID, nullable=False),
        sa.Column("seat", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("bot", ID, nullable=False),
        sa.Column("version", ID, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("rank", sa.Integer, nullable=True),
        sa.Column("played_out", sa.Boolean, nullable=False),
        sa.Column("faults", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("match_id", "seat", name="pk_result_seats"),
        sa.ForeignKeyConstraint(
            ["match_id"], ["results.match_id"], name="fk_result_seats_match_id_results"
        ),
    )
    op.create_index("ix_result_seats_bot", "result_seats", ["bot"])
    op.create_table(
        "faults",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("match_id", ID, nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("decision", sa.Integer, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_faults"),
        sa.ForeignKeyConstraint(
            ["match_id"], ["results.match_id"], name="fk_faults_match_id_results"
        ),
    )
    op.create_index("ix_faults_match_id", "faults", ["match_id"])
    op.create_table(
        "match_records",
        sa.Column("match_id", ID, nullable=False),
        sa.Column("encoding", sa.String(20), nullable=False),
        sa.Column("raw_bytes", sa.Integer, nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
        sa.PrimaryKeyConstraint("match_id", name="pk_match_records"),
        sa.ForeignKeyConstraint(
            ["match_id"], ["results.match_id"], name="fk_match_records_match_id_results"
        ),
    )
    op.create_table(
        "seat_stderr",
        sa.Column("match_id", ID, nullable=False),
        sa.Column("seat", sa.Integer, nullable=False, autoincrement=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("dropped_bytes", sa.Integer, nullable=False),
        sa.PrimaryKeyConstraint("match_id", "seat", name="pk_seat_stderr"),
        sa.ForeignKeyConstraint(
            ["match_id"], ["results.match_id"], name="fk_seat_stderr_match_id_results"
        ),
    )


def downgrade() -> None:
    """Drop every table of the first schema (children first)."""
    for table in (
        "seat_stderr",
        "match_records",
        "faults",
        "result_seats",
        "results",
        "scheduled_matches",
        "seasons",
        "bot_versions",
        "bots",
    ):
        op.drop_table(table)
