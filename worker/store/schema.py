"""The results store's tables (SQLAlchemy Core); migrations/ creates them, store.py uses them.

Changing a table here needs a new Alembic revision in worker/store/migrations/versions/; a test
compares a freshly migrated database with this metadata, so the two cannot drift apart.
"""

from __future__ import annotations

import sqlalchemy as sa

#: Stable constraint names on both backends, so later migrations can name what they drop.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

#: The migration revision these tables correspond to (a test checks it is the newest).
SCHEMA_REVISION = "0006"

metadata = sa.MetaData(naming_convention=NAMING_CONVENTION)

ID = sa.String(200)
TIME = sa.DateTime(timezone=True)

bots = sa.Table(
    "bots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", ID, nullable=False, unique=True),
    sa.Column("owner", ID, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

bot_versions = sa.Table(
    "bot_versions",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("version", ID, nullable=False),
    # 1, 2, 3... per bot: the order versions were added, stable across backends.
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.UniqueConstraint("bot_id", "version"),
    sa.UniqueConstraint("bot_id", "seq"),
)

seasons = sa.Table(
    "seasons",
    metadata,
    # The surrogate key is the creation order that results() sorts by.
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("season_id", ID, nullable=False, unique=True),
    sa.Column("game", ID, nullable=False, index=True),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    # The RQ queue the season was last started on (NULL: never; played in-process).
    sa.Column("queue", ID, nullable=True),
    # Matches per job, fixed at its first start (NULL: one).
    sa.Column("batch", sa.Integer, nullable=True),
    # Its jobs tapered (full jobs of `batch`, then smaller ones; NULL or false: uniform).
    sa.Column("batch_tapered", sa.Boolean, nullable=True),
)

scheduled_matches = sa.Table(
    "scheduled_matches",
    metadata,
    sa.Column("match_id", ID, primary_key=True),
    sa.Column("season_pk", sa.Integer, sa.ForeignKey("seasons.id"), nullable=False),
    sa.Column("idx", sa.Integer, nullable=False),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
    sa.UniqueConstraint("season_pk", "idx"),
)

results = sa.Table(
    "results",
    metadata,
    sa.Column("match_id", ID, primary_key=True),
    sa.Column("game", ID, nullable=False),
    sa.Column("options", sa.JSON, nullable=False),
    # Text: a user's seed for a local match may not fit a 64-bit integer column.
    sa.Column("seed", sa.String(40), nullable=False),
    sa.Column("outcome", sa.String(20), nullable=False),
    sa.Column("abort_reason", sa.Text, nullable=False),
    sa.Column("saloon_version", sa.String(40), nullable=False),
    sa.Column("finished_at", TIME, nullable=False),
    # The match's own time (the record's timing.match_ms; NULL before it was kept here).
    sa.Column("match_ms", sa.Float, nullable=True),
    # A game's results, its latest first (Store.recent_match_ms: a season's batch size);
    # it serves every look-up by game too (the index on game alone it replaced did).
    sa.Index("ix_results_game_finished_at", "game", "finished_at"),
)

result_seats = sa.Table(
    "result_seats",
    metadata,
    sa.Column("match_id", ID, sa.ForeignKey("results.match_id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("bot", ID, nullable=False, index=True),
    sa.Column("version", ID, nullable=False),
    # NULL when the match was aborted before the engine scored it.
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("rank", sa.Integer, nullable=True),
    sa.Column("played_out", sa.Boolean, nullable=False),
    sa.Column("faults", sa.Integer, nullable=False),
)

faults = sa.Table(
    "faults",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("match_id", ID, sa.ForeignKey("results.match_id"), nullable=False, index=True),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("kind", sa.String(20), nullable=False),
    sa.Column("decision", sa.Integer, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
)

match_records = sa.Table(
    "match_records",
    metadata,
    sa.Column("match_id", ID, sa.ForeignKey("results.match_id"), primary_key=True),
    sa.Column("encoding", sa.String(20), nullable=False),
    sa.Column("raw_bytes", sa.Integer, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)

seat_stderr = sa.Table(
    "seat_stderr",
    metadata,
    sa.Column("match_id", ID, sa.ForeignKey("results.match_id"), primary_key=True),
    sa.Column("seat", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("dropped_bytes", sa.Integer, nullable=False),
)

# -- the arena's tables (revision 0002): accounts, the package registry, season owners ---

users = sa.Table(
    "users",
    metadata,
    sa.Column("name", ID, primary_key=True),
    # "user" or "organiser".
    sa.Column("role", sa.String(20), nullable=False),
    # sha256 hex of the token's secret part; the token itself is never stored.
    sa.Column("token_hash", sa.String(64), nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

packages = sa.Table(
    "packages",
    metadata,
    # sha256 hex of ``data`` (the whole digest: a package's key must not be forgeable).
    sa.Column("digest", sa.String(64), primary_key=True),
    # The package's files as a gzip-compressed tar (saloon.worker.sandbox.stored).
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.Column("size", sa.Integer, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

season_owners = sa.Table(
    "season_owners",
    metadata,
    sa.Column("season_id", ID, primary_key=True),
    sa.Column("organiser", ID, nullable=False),
    # The repeating schedule that made it ("" when made by hand).
    sa.Column("schedule_id", ID, nullable=False),
)

schedules = sa.Table(
    "schedules",
    metadata,
    sa.Column("schedule_id", ID, primary_key=True),
    sa.Column("organiser", ID, nullable=False),
    # The season request repeated (game, options, players, rounds, house bots, ...).
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("every_s", sa.Integer, nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
    # How many seasons it has made (the next one's number).
    sa.Column("made", sa.Integer, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
)

# -- ratings checkpoints and continuous ladders (revision 0003) ---------------------------
# A board's checkpoint (saloon.ratings.incremental): the fold's state at the end of the
# contiguous prefix of its results in schedule order, kept row by row so that extending it
# by one result writes only what that result changed.

rating_boards = sa.Table(
    "rating_boards",
    metadata,
    # "all-time:<ladder>", "season:<id>", "ladder:<id>" (saloon.ratings.incremental).
    sa.Column("board", ID, primary_key=True),
    # The prefix ends after this scheduled match: (season surrogate key, schedule index).
    sa.Column("position_seq", sa.Integer, nullable=False),
    sa.Column("position_idx", sa.Integer, nullable=False),
    # Bumped at every change, so a cached board knows it is stale with one read.
    sa.Column("generation", sa.Integer, nullable=False),
    # Comparisons, matches, seat counts, the seasons whose bots are known, the fold format.
    sa.Column("state", sa.JSON, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)

rating_entries = sa.Table(
    "rating_entries",
    metadata,
    sa.Column("board", ID, primary_key=True),
    sa.Column("bot", ID, primary_key=True),
    # The rating of the version the bot was last rated with (NULL: listed, unrated).
    sa.Column("mu", sa.Float, nullable=True),
    sa.Column("sigma", sa.Float, nullable=True),
    # The bot's statistics and every rated version's exact TrueSkill state (pi, tau).
    sa.Column("data", sa.JSON, nullable=False),
)

rating_history = sa.Table(
    "rating_history",
    metadata,
    sa.Column("board", ID, primary_key=True),
    sa.Column("bot", ID, primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("match_id", ID, nullable=False),
    sa.Column("season", ID, nullable=False),
    sa.Column("version", ID, nullable=False),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
)

rating_h2h = sa.Table(
    "rating_h2h",
    metadata,
    sa.Column("board", ID, primary_key=True),
    sa.Column("a", ID, primary_key=True),
    sa.Column("b", ID, primary_key=True),
    sa.Column("above", sa.Integer, nullable=False),
    sa.Column("below", sa.Integer, nullable=False),
    sa.Column("tied", sa.Integer, nullable=False),
)

rating_skipped = sa.Table(
    "rating_skipped",
    metadata,
    # Scheduled matches the prefix passed without a result (a failed match of a settled
    # season, a season never started): if one is recorded later, the board is rebuilt.
    sa.Column("board", ID, primary_key=True),
    sa.Column("match_id", ID, primary_key=True),
)

continuous_ladders = sa.Table(
    "continuous_ladders",
    metadata,
    sa.Column("ladder_id", ID, primary_key=True),
    sa.Column("organiser", ID, nullable=False),
    # The ladder's request and matchmaker settings (saloon.arena.ladder.ContinuousRequest).
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("active", sa.Boolean, nullable=False),
    # Batches made so far (each batch is a season ``<ladder_id>-b<k>``).
    sa.Column("batches", sa.Integer, nullable=False),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)

# -- tournaments (revision 0006): saloon.arena.tournament ---------------------------------

tournaments = sa.Table(
    "tournaments",
    metadata,
    sa.Column("tournament_id", ID, primary_key=True),
    sa.Column("organiser", ID, nullable=False),
    sa.Column("game", ID, nullable=False),
    # The tournament's request: options, seats, seed, house bots, finals policy, ...
    sa.Column("spec", sa.JSON, nullable=False),
    # open, frozen, finals, reporting, done or cancelled (changed by the server's driver only;
    # reporting -> done by its report thread).
    sa.Column("phase", sa.String(20), nullable=False),
    sa.Column("deadline", TIME, nullable=False),
    # When the driver found the deadline crossed and froze the field (NULL: not yet).
    sa.Column("frozen_at", TIME, nullable=True),
    # The frozen field: its entrants' seat references, in order (NULL while open).
    sa.Column("field", sa.JSON, nullable=True),
    # Finals batches made so far (each batch is a season ``<id>-f<k>``).
    sa.Column("batches", sa.Integer, nullable=False),
    # The driver's notes: the qualifying season, the stop reason, match counts.
    sa.Column("state", sa.JSON, nullable=False),
    # The published result (saloon.ratings.finals.Report.to_json()); NULL until done.
    sa.Column("report", sa.JSON, nullable=True),
    sa.Column("created_at", TIME, nullable=False),
    sa.Column("updated_at", TIME, nullable=False),
)

tournament_finals = sa.Table(
    "tournament_finals",
    metadata,
    # The versions an owner marked as final for a tournament (before its deadline).
    sa.Column("tournament_id", ID, primary_key=True),
    sa.Column("bot", ID, primary_key=True),
    sa.Column("version", ID, primary_key=True),
    sa.Column("owner", ID, nullable=False),
    sa.Column("marked_at", TIME, nullable=False),
)
