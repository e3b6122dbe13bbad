"""The results store: bots, versions, seasons, schedules, results, faults, records, stderr.

SQLAlchemy Core over a SQLite file (the default) or PostgreSQL (by URL), with the same code
on both; ``Store.open`` migrates the database to the newest schema (worker/store/migrations/).
A result is written exactly once per match id: a retried or duplicated job's
``record_result`` returns False and writes nothing (a unique key + ON CONFLICT DO NOTHING,
so it holds across processes and machines).
"""

from __future__ import annotations

import binascii
import contextlib
import json
import logging
import os
import select
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeVar

import orjson
import psycopg
import sqlalchemy as sa
from psycopg import pq
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Compiled

from saloon.referee.errors import RecordError
from saloon.referee.faults import FaultKind
from saloon.referee.record import MatchRecord
from saloon.worker.errors import (
    BotNameTaken,
    InvalidRecord,
    InvalidSchedule,
    SeasonConflict,
    StoreError,
    StoreUnavailable,
    UnknownBot,
    UnknownMatch,
    UnknownSeason,
)
from saloon.worker.store import schema as t
from saloon.worker.store.codec import RECORD_ENCODING, compress_record, decode_record
from saloon.worker.store.config import DEFAULT_STORE_CONFIG, StoreConfig, resolve_url
from saloon.worker.store.engine import WRITE_OPTION, create_engine, migrate, unavailable
from saloon.worker.store.reader import HeldReader
from saloon.worker.store.rows import (
    BotRow,
    FaultRow,
    MatchState,
    MatchStatus,
    Outcome,
    Progress,
    ResultRow,
    ScheduledMatch,
    ScheduledMatchRow,
    SeasonRow,
    SeasonStatus,
    SeatResult,
    VersionRow,
)

__all__ = [
    "BotRow",
    "FaultRow",
    "MatchState",
    "MatchStatus",
    "Outcome",
    "PendingClaim",
    "PendingResults",
    "PreparedResult",
    "Progress",
    "ResultRow",
    "ScheduledMatch",
    "ScheduledMatchRow",
    "SeasonRow",
    "SeasonStatus",
    "SeatResult",
    "Store",
    "VersionRow",
]

log = logging.getLogger(__name__)

# Built once: statement objects memoise their cache keys, so the hot path skips that work.
_INSERT_RESULT = t.results.insert()
_INSERT_SEATS = t.result_seats.insert()
_INSERT_FAULTS = t.faults.insert()
_INSERT_RECORD = t.match_records.insert()
_INSERT_STDERR = t.seat_stderr.insert()
#: PostgreSQL: record a match in one statement (Store._record_once_pg). Every write hangs
#: off the result row that the first CTE inserts, so a match recorded already (ON
#: CONFLICT: no row) writes nothing at all. Faults keep their order (their ids are the
#: order faults() reads back): WITH ORDINALITY, inserted in that order.
_RECORD_PG = sa.text(
    """
WITH r AS (
    INSERT INTO results
        (match_id, game, options, seed, outcome, abort_reason, saloon_version, finished_at,
         match_ms)
    VALUES (:match_id, :game, CAST(:options AS JSON), :seed, :outcome, :abort_reason,
            :saloon_version, :finished_at, :match_ms)
    ON CONFLICT (match_id) DO NOTHING
    RETURNING match_id
), seats AS (
    INSERT INTO result_seats (match_id, seat, bot, version, score, rank, played_out, faults)
    SELECT r.match_id, x.seat, x.bot, x.version, x.score, x.rank, x.played_out, x.faults
    FROM r CROSS JOIN json_to_recordset(CAST(:seats AS JSON)) AS x(
        seat INTEGER, bot TEXT, version TEXT, score DOUBLE PRECISION, rank INTEGER,
        played_out BOOLEAN, faults INTEGER)
), faults AS (
    INSERT INTO faults (match_id, seat, kind, decision, detail)
    SELECT r.match_id, CAST(x.f ->> 'seat' AS INTEGER), x.f ->> 'kind',
           CAST(x.f ->> 'decision' AS INTEGER), x.f ->> 'detail'
    FROM r CROSS JOIN json_array_elements(CAST(:faults AS JSON)) WITH ORDINALITY AS x(f, n)
    ORDER BY x.n
), record AS (
    INSERT INTO match_records (match_id, encoding, raw_bytes, data)
    SELECT r.match_id, :encoding, :raw_bytes, :data FROM r
), stderr AS (
    INSERT INTO seat_stderr (match_id, seat, "text", dropped_bytes)
    SELECT r.match_id, x.seat, x."text", x.dropped_bytes
    FROM r CROSS JOIN json_to_recordset(CAST(:stderr AS JSON)) AS x(
        seat INTEGER, "text" TEXT, dropped_bytes INTEGER)
), done AS (
    UPDATE scheduled_matches SET status = :done, updated_at = :at
    WHERE match_id IN (SELECT match_id FROM r)
)
SELECT match_id FROM r
"""
)
#: PostgreSQL: record SEVERAL matches in one statement (Store.record_results and
#: send_results): the same shape as _RECORD_PG, each row set keyed by its match id, every
#: write hanging off the result rows the first CTE inserts (a match recorded already writes
#: nothing). Sent through libpq itself (Store._pg_send), so every parameter is text: the
#: row sets as JSON arrays ($1 results, $2 seats, $3 faults, $4 stderr, $5 records, their
#: compressed blobs in base64), $6 the encoding, $7 DONE, $8 the time of the DONE marks (each
#: result row carries its own finish time).
_RECORD_MANY_PG = b"""
WITH r AS (
    INSERT INTO results
        (match_id, game, options, seed, outcome, abort_reason, saloon_version, finished_at,
         match_ms)
    SELECT x.match_id, x.game, x.options, x.seed, x.outcome, x.abort_reason,
           x.saloon_version, x.finished_at, x.match_ms
    FROM json_to_recordset(CAST($1 AS JSON)) AS x(
        match_id TEXT, game TEXT, options JSON, seed TEXT, outcome TEXT, abort_reason TEXT,
        saloon_version TEXT, finished_at TIMESTAMPTZ, match_ms DOUBLE PRECISION)
    ON CONFLICT (match_id) DO NOTHING
    RETURNING match_id
), seats AS (
    INSERT INTO result_seats (match_id, seat, bot, version, score, rank, played_out, faults)
    SELECT x.match_id, x.seat, x.bot, x.version, x.score, x.rank, x.played_out, x.faults
    FROM json_to_recordset(CAST($2 AS JSON)) AS x(
        match_id TEXT, seat INTEGER, bot TEXT, version TEXT, score DOUBLE PRECISION,
        rank INTEGER, played_out BOOLEAN, faults INTEGER)
    JOIN r ON r.match_id = x.match_id
), faults AS (
    INSERT INTO faults (match_id, seat, kind, decision, detail)
    SELECT x.f ->> 'match_id', CAST(x.f ->> 'seat' AS INTEGER), x.f ->> 'kind',
           CAST(x.f ->> 'decision' AS INTEGER), x.f ->> 'detail'
    FROM json_array_elements(CAST($3 AS JSON)) WITH ORDINALITY AS x(f, n)
    JOIN r ON r.match_id = x.f ->> 'match_id'
    ORDER BY x.n
), record AS (
    INSERT INTO match_records (match_id, encoding, raw_bytes, data)
    SELECT x.match_id, CAST($6 AS TEXT), x.raw_bytes, decode(x.data, 'base64')
    FROM json_to_recordset(CAST($5 AS JSON)) AS x(match_id TEXT, raw_bytes INTEGER, data TEXT)
    JOIN r ON r.match_id = x.match_id
), stderr AS (
    INSERT INTO seat_stderr (match_id, seat, "text", dropped_bytes)
    SELECT x.match_id, x.seat, x."text", x.dropped_bytes
    FROM json_to_recordset(CAST($4 AS JSON)) AS x(
        match_id TEXT, seat INTEGER, "text" TEXT, dropped_bytes INTEGER)
    JOIN r ON r.match_id = x.match_id
), done AS (
    UPDATE scheduled_matches SET status = CAST($7 AS TEXT), updated_at = CAST($8 AS TIMESTAMPTZ)
    WHERE match_id IN (SELECT match_id FROM r)
)
SELECT match_id FROM r
"""
#: The name _RECORD_MANY_PG is prepared under, on each connection that sends it.
_RECORD_MANY_NAME = "saloon_record_many_2"
#: PostgreSQL: claim a batch's matches (Store.claim_matches, send_claim) in ONE round trip
#: (sent through libpq as _RECORD_MANY_PG is: $1 the ids as a JSON array, $2 the worker,
#: $3 the time; @STATUS stands for MatchStatus.STATUS's value), autocommit:
#: each scheduled id RUNNING (an attempt) unless DONE or CANCELLED, and every scheduled
#: id's status afterwards (the outer SELECT sees the rows as before the UPDATE, so a
#: claimed one is reported RUNNING from the CTE). The claim is advisory (the result is
#: what counts): set_config(..., true) makes this statement's commit skip the WAL flush.
_CLAIM_MANY_PG = b"""
WITH ids AS (SELECT json_array_elements_text(CAST($1 AS JSON)) AS match_id),
c AS (
    UPDATE scheduled_matches
    SET status = '@RUNNING', detail = $2, attempts = attempts + 1,
        updated_at = CAST($3 AS TIMESTAMPTZ)
    WHERE match_id IN (SELECT match_id FROM ids) AND status NOT IN ('@DONE', '@CANCELLED')
      AND set_config('synchronous_commit', 'off', true) IS NOT NULL
    RETURNING match_id
)
SELECT m.match_id, CASE WHEN c.match_id IS NULL THEN m.status ELSE '@RUNNING' END
FROM scheduled_matches AS m LEFT JOIN c ON c.match_id = m.match_id
WHERE m.match_id IN (SELECT match_id FROM ids)
"""
for _status in (MatchStatus.RUNNING, MatchStatus.DONE, MatchStatus.CANCELLED):
    _CLAIM_MANY_PG = _CLAIM_MANY_PG.replace(f"@{_status.name}".encode(), _status.value.encode())
_CLAIM_MANY_NAME = "saloon_claim_many_1"
#: Match ids per IN (...) list: well under SQLite's bound-parameter limit.
_CHUNK = 500


_T = TypeVar("_T")


class PreparedResult(NamedTuple):
    """One match's result as the store will write it (Store.prepare_result): its rows,
    checked, and its record encoded and compressed. A worker prepares each match as it
    ends, while the record is still in the CPU's caches, and keeps only this."""

    result: dict[str, Any]
    seats: list[dict[str, Any]]
    faults: list[dict[str, Any]]
    record: dict[str, Any]
    stderr: list[dict[str, Any]]
    at: datetime


class _ConnectionLost(Exception):
    """A pooled PostgreSQL connection turned out dead while recording (Store._pg_send)."""


class _Flight(NamedTuple):
    """A record statement sent and not yet answered: its connection, checked out (the
    thread's held one, or one of the pool's)."""

    conn: sa.Connection
    pgconn: Any
    held: bool


class _Held(threading.local):
    """The PostgreSQL connection a thread keeps for the statements it sends without
    waiting (a batch job's claim and flushes, one after another): checked out once, not
    for every statement (a pool check-out and check-in cost ~0.1 ms of CPU each)."""

    conn: sa.Connection | None = None
    #: A statement sent on it has not been answered yet.
    busy: bool = False
    pid: int = 0


class PendingClaim:
    """A batch's claim on its way to the store (Store.send_claim); :meth:`wait` for it."""

    def __init__(
        self,
        statuses: dict[str, MatchStatus] | None,
        collect: Callable[[], dict[str, MatchStatus]] | None = None,
    ) -> None:
        self._statuses = statuses
        self._collect = collect

    @property
    def done(self) -> bool:
        """True once :meth:`wait` returned or raised (the claim's connection is free)."""
        return self._collect is None

    def wait(self) -> dict[str, MatchStatus]:
        """Each scheduled id's status after the claim (RUNNING: claimed); ids not scheduled
        are absent. StoreUnavailable when the database could not be reached (the claim is
        then over: a caller retries the job)."""
        if self._statuses is None:
            if self._collect is None:
                raise StoreUnavailable("claim matches: its answer was lost")
            collect, self._collect = self._collect, None
            self._statuses = collect()
        return self._statuses


class PendingResults:
    """Results on their way into the store (Store.send_results); :meth:`wait` for them."""

    def __init__(
        self,
        match_ids: list[str],
        written: set[str] | None,
        collect: Callable[[], set[str]] | None = None,
    ) -> None:
        self.match_ids = match_ids
        self._written = written
        self._collect = collect

    @property
    def settled(self) -> bool:
        """True once the store's answer is in (wait() returns at once)."""
        return self._written is not None

    def wait(self) -> list[bool]:
        """For each match, True when this recording wrote it (False: recorded already).
        StoreUnavailable when the database could not be reached: the caller may retry."""
        if self._written is None:
            if self._collect is None:
                raise StoreUnavailable("record results: the answer was lost")
            collect, self._collect = self._collect, None
            self._written = collect()
        return [m in self._written for m in self.match_ids]


@contextmanager
def _dropped_if_broken(conn: sa.Connection) -> Iterator[None]:
    """Whatever fails inside drops ``conn`` (invalidated, not back to the pool); a psycopg
    error is re-raised as _ConnectionLost (the caller may send again on a fresh one)."""
    try:
        yield
    except BaseException as exc:
        conn.invalidate()
        conn.close()
        if isinstance(exc, psycopg.Error):
            raise _ConnectionLost(str(exc).strip() or type(exc).__name__) from exc
        raise


def _now() -> datetime:
    return datetime.now(UTC)


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes (stored as UTC); PostgreSQL aware ones.
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _as_json(value: Any, what: str) -> Any:
    """``value`` as it will come back from the database (tuples -> lists...)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidSchedule(f"{what} is not plain JSON: {exc}") from None


class Store:
    """The results store; open one per process with :meth:`open` (safe across threads)."""

    def __init__(self, engine: sa.Engine, config: StoreConfig = DEFAULT_STORE_CONFIG) -> None:
        self._engine = engine
        self._config = config
        self._pid = os.getpid()
        self._postgres = engine.dialect.name == "postgresql"
        self._held = _Held()
        self._held_all: list[sa.Connection] = []  # every thread's, closed by close()
        self._held_lock = threading.Lock()
        self._reader = HeldReader(lambda: self.engine, self.url)
        # Built once: record_result is the hot path, and building a statement per call
        # costs more than running it.
        self._mark_done = (
            t.scheduled_matches.update()
            .where(t.scheduled_matches.c.match_id == sa.bindparam("b_match_id"))
            .values(status=sa.bindparam("b_status"), updated_at=sa.bindparam("b_at"))
        )

        self._claim = self._claim_statement()
        # SQLite's claim of a batch (PostgreSQL's is _CLAIM_MANY_PG): built once, the id
        # list bound at execution (an expanding IN), so a call compiles nothing.
        self._claim_many = self._claim_statement(many=True)
        matches = t.scheduled_matches
        self._recorded = sa.select(t.results.c.match_id).where(
            t.results.c.match_id.in_(sa.bindparam("b_ids", expanding=True))
        )
        self._statuses = sa.select(matches.c.match_id, matches.c.status).where(
            matches.c.match_id.in_(sa.bindparam("b_ids", expanding=True))
        )

    @contextmanager
    def _advisory_write(self, what: str) -> Iterator[sa.Connection]:
        """A write transaction whose commit need not be durable at once (SQLite).

        Committed with ``synchronous = NORMAL`` (no fsync): with WAL that loses nothing on
        a killed process, only the last such commits on a power cut. For the claim, whose
        status is advisory (the result is what counts). SQLite takes the setting only
        outside a transaction, so it is set before BEGIN and restored after COMMIT.
        """
        level = self._config.sqlite_synchronous.upper()  # checked against a fixed list
        with self.guard(what), self.engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
            raw = conn.connection.dbapi_connection
            if raw is None or level not in ("FULL", "EXTRA"):
                with conn.begin():
                    yield conn
                return
            raw.execute("PRAGMA synchronous = NORMAL")
            try:
                with conn.begin():
                    yield conn
            finally:
                raw.execute(f"PRAGMA synchronous = {level}")

    def _claim_statement(self, many: bool = False) -> Any:
        """UPDATE a scheduled match (``b_match_id``; RETURNING its status) or, ``many``,
        several (``b_ids``, an expanding IN; RETURNING the ids claimed) to RUNNING (an
        attempt) unless DONE or CANCELLED."""
        matches = t.scheduled_matches
        left_alone = (MatchStatus.DONE.value, MatchStatus.CANCELLED.value)
        key = (
            matches.c.match_id.in_(sa.bindparam("b_ids", expanding=True))
            if many
            else matches.c.match_id == sa.bindparam("b_match_id")
        )
        where = key & matches.c.status.not_in(left_alone)
        if self._postgres and not many:  # PostgreSQL's batch claim is _CLAIM_MANY_PG
            # The claim is advisory (the result is what counts): its commit need not wait
            # for the WAL flush. set_config(..., true) lasts until this statement's own
            # (implicit) transaction commits, and PostgreSQL reads the setting at commit.
            off = sa.func.set_config("synchronous_commit", "off", sa.true())
            where = where & off.is_not(None)
        return (
            matches.update()
            .where(where)
            .values(
                status=MatchStatus.RUNNING.value,
                detail=sa.bindparam("b_worker"),
                attempts=matches.c.attempts + 1,
                updated_at=sa.bindparam("b_at"),
            )
            .returning(matches.c.match_id if many else matches.c.status)
        )

    # -- opening -----------------------------------------------------------------------

    @classmethod
    def open(
        cls, url: str | os.PathLike[str] | None = None, *, config: StoreConfig | None = None
    ) -> Store:
        """Open (and migrate to the newest schema) the store at ``url``.

        None -> ``$SALOON_STORE`` or ``./saloon.db``; a plain path is a SQLite file;
        ``postgresql+psycopg://USER@HOST/DB`` (or ``postgresql://``) is PostgreSQL.
        """
        config = config or DEFAULT_STORE_CONFIG
        engine = create_engine(resolve_url(url), config)
        store = cls(engine, config)
        try:
            with store.guard("open"):
                migrate(engine)
        except BaseException:
            engine.dispose()
            raise
        return store

    def close(self) -> None:
        """Close every pooled connection; the store is unusable afterwards."""
        with self._held_lock:
            held, self._held_all = self._held_all, []
        for conn in held:
            with contextlib.suppress(sa.exc.SQLAlchemyError, psycopg.Error):
                conn.close()
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def backend(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self._engine.dialect.name

    @property
    def sends_in_background(self) -> bool:
        """True when :meth:`send_results` returns before the database has answered
        (PostgreSQL); False when it records before returning (SQLite, in-process)."""
        return self._postgres

    @property
    def url(self) -> str:
        """The store's URL with any password hidden."""
        return self._engine.url.render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    # -- connections -------------------------------------------------------------------

    @property
    def engine(self) -> sa.Engine:
        """The engine (a forked child drops its parent's pooled connections first)."""
        if os.getpid() != self._pid:
            # Sockets inherited over fork belong to the parent: never reuse them.
            self._engine.dispose(close=False)
            self._pid = os.getpid()
        return self._engine

    @contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """The store's one error mapping: a lost or unreachable database inside becomes
        StoreUnavailable (``what`` names the operation in its message; a job retries),
        whether SQLAlchemy or the driver itself raised it. Every other error passes."""
        try:
            yield
        except Exception as exc:
            lost = unavailable(what, self.url, exc)
            if lost is None:
                raise
            raise lost from exc

    @contextmanager
    def _one_statement(self, what: str) -> Iterator[sa.Connection]:
        """Where a write of one statement runs: its own transaction on PostgreSQL
        (autocommit: one round trip, not BEGIN, the statement and COMMIT), a write
        transaction on SQLite."""
        if not self._postgres:
            with self.write(what) as conn:
                yield conn
            return
        with self.guard(what), self.engine.connect() as conn:
            yield conn.execution_options(isolation_level="AUTOCOMMIT")

    @contextmanager
    def write(self, what: str) -> Iterator[sa.Connection]:
        """A write transaction (``BEGIN IMMEDIATE`` on SQLite: writers queue on the busy
        timeout), committed when the block ends, rolled back when it raises; errors mapped
        by :meth:`guard`."""
        with self.guard(what), self.engine.connect() as conn:
            conn.execution_options(**{WRITE_OPTION: True})
            with conn.begin():
                yield conn

    @contextmanager
    def read(self, what: str) -> Iterator[sa.Connection]:
        """A read transaction (one snapshot on PostgreSQL); errors mapped by :meth:`guard`."""
        with self.guard(what), self.engine.connect() as conn, conn.begin():
            yield conn

    def insert(self, table: sa.Table) -> Any:
        """INSERT into ``table`` in the backend's dialect: it offers
        ``on_conflict_do_nothing`` and ``on_conflict_do_update`` (an upsert) on both."""
        if self._postgres:
            return pg_dialect.insert(table)
        return sqlite_dialect.insert(table)

    def insert_ignore(self, table: sa.Table, keys: Sequence[str]) -> Any:
        """INSERT ... ON CONFLICT (keys) DO NOTHING: insert-if-absent, on both backends."""
        return self.insert(table).on_conflict_do_nothing(index_elements=keys)

    def fetch(self, what: str, statement: Compiled, values: Mapping[str, Any]) -> list[Any]:
        """Run ONE read statement, compiled once by the caller for this store's dialect
        (``query.compile(dialect=store.engine.dialect)``), with ``values`` bound: its rows
        as tuples. PostgreSQL: on a connection the store holds for such reads, in
        autocommit (the statement sees one snapshot, and no pool check-out or BEGIN is
        paid per call); SQLite: on a pooled one. For a read repeated very often (a
        board's walk); errors mapped by :meth:`guard`."""
        return self._reader.fetch(what, statement, values)

    def _bytewise(self, column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
        # Text order by bytes on both backends (PostgreSQL's default collation is locale's).
        return column.collate("C") if self._postgres else column

    # -- bots and versions -------------------------------------------------------------

    def add_bot(self, name: str, owner: str) -> BotRow:
        """Register bot ``name`` for ``owner``; the same again is a no-op (BotNameTaken if
        another owner has the name)."""
        if not name or not owner:
            raise StoreError("a bot needs a name and an owner")
        with self.write("add bot") as conn:
            conn.execute(
                self.insert_ignore(t.bots, ["name"]).values(
                    name=name, owner=owner, created_at=_now()
                )
            )
            row = conn.execute(sa.select(t.bots).where(t.bots.c.name == name)).one()
        if row.owner != owner:
            raise BotNameTaken(f"bot name {name!r} is taken by another owner")
        return BotRow(row.name, row.owner, _utc(row.created_at))

    def bot(self, name: str) -> BotRow | None:
        """The bot called ``name``, or None."""
        with self.read("bot") as conn:
            row = conn.execute(sa.select(t.bots).where(t.bots.c.name == name)).one_or_none()
        return None if row is None else BotRow(row.name, row.owner, _utc(row.created_at))

    def bots(self) -> list[BotRow]:
        """Every bot, by name."""
        with self.read("bots") as conn:
            rows = conn.execute(sa.select(t.bots).order_by(self._bytewise(t.bots.c.name))).all()
        return [BotRow(r.name, r.owner, _utc(r.created_at)) for r in rows]

    def add_version(self, bot: str, version: str, meta: dict[str, Any] | None = None) -> VersionRow:
        """Add ``version`` of ``bot``; the same version again returns the stored row (its
        first meta kept)."""
        if not version:
            raise StoreError(f"bot {bot!r}: a version needs a non-empty id")
        meta_json = _as_json(meta or {}, f"meta of {bot}@{version}")
        with self.write("add version") as conn:
            # Row lock on the bot (PostgreSQL): versions of one bot get seq numbers in turn.
            bot_id = conn.execute(
                sa.select(t.bots.c.id).where(t.bots.c.name == bot).with_for_update()
            ).scalar_one_or_none()
            if bot_id is None:
                raise UnknownBot(f"no bot named {bot!r}; add_bot first")
            where = (t.bot_versions.c.bot_id == bot_id) & (t.bot_versions.c.version == version)
            row = conn.execute(sa.select(t.bot_versions).where(where)).one_or_none()
            if row is None:
                seq = conn.execute(
                    sa.select(sa.func.coalesce(sa.func.max(t.bot_versions.c.seq), 0)).where(
                        t.bot_versions.c.bot_id == bot_id
                    )
                ).scalar_one()
                conn.execute(
                    t.bot_versions.insert().values(
                        bot_id=bot_id,
                        version=version,
                        seq=seq + 1,
                        meta=meta_json,
                        created_at=_now(),
                    )
                )
                row = conn.execute(sa.select(t.bot_versions).where(where)).one()
        return VersionRow(bot, row.version, row.seq, dict(row.meta), _utc(row.created_at))

    def versions(self, bot: str) -> list[VersionRow]:
        """The versions of ``bot``, oldest first ([] for an unknown bot)."""
        query = (
            sa.select(t.bot_versions)
            .join(t.bots, t.bots.c.id == t.bot_versions.c.bot_id)
            .where(t.bots.c.name == bot)
            .order_by(t.bot_versions.c.seq)
        )
        with self.read("versions") as conn:
            rows = conn.execute(query).all()
        return [VersionRow(bot, r.version, r.seq, dict(r.meta), _utc(r.created_at)) for r in rows]

    # -- seasons and schedules ---------------------------------------------------------

    def create_season(
        self, season_id: str, spec: dict[str, Any], matches: Sequence[ScheduledMatch]
    ) -> bool:
        """Store a season and its schedule in one transaction.

        True when created; False when it exists with the same spec (SeasonConflict when the
        spec differs, or when a match id is scheduled by another season).
        """
        if not season_id:
            raise InvalidSchedule("a season needs a non-empty id")
        spec_json = _as_json(spec, f"season {season_id}: spec")
        game = spec_json.get("game") if isinstance(spec_json, dict) else None
        if not isinstance(game, str) or not game:
            raise InvalidSchedule(f"season {season_id}: spec needs a 'game' id")
        rows = self._schedule_rows(season_id, matches)
        now = _now()
        try:
            with self.write("create season") as conn:
                season_pk = conn.execute(
                    self.insert_ignore(t.seasons, ["season_id"])
                    .values(
                        season_id=season_id,
                        game=game,
                        spec=spec_json,
                        status=SeasonStatus.CREATED.value,
                        created_at=now,
                        updated_at=now,
                    )
                    .returning(t.seasons.c.id)
                ).scalar_one_or_none()
                if season_pk is None:
                    stored = conn.execute(
                        sa.select(t.seasons.c.spec).where(t.seasons.c.season_id == season_id)
                    ).scalar_one()
                    if stored != spec_json:
                        raise SeasonConflict(
                            f"season {season_id!r} exists already with a different spec"
                        )
                    return False
                if rows:
                    for row in rows:
                        row.update(season_pk=season_pk, updated_at=now)
                    conn.execute(t.scheduled_matches.insert(), rows)
        except sa.exc.IntegrityError:
            raise SeasonConflict(
                f"season {season_id!r}: a match id of its schedule belongs to another season"
            ) from None
        log.info("store: season %s created with %d matches", season_id, len(rows))
        return True

    @staticmethod
    def _schedule_rows(season_id: str, matches: Sequence[ScheduledMatch]) -> list[dict[str, Any]]:
        ids: set[str] = set()
        indices: set[int] = set()
        rows = []
        for match in matches:
            if not match.match_id:
                raise InvalidSchedule(f"season {season_id}: a match needs a non-empty id")
            if match.match_id in ids:
                raise InvalidSchedule(f"season {season_id}: match id {match.match_id!r} twice")
            if match.index in indices:
                raise InvalidSchedule(f"season {season_id}: schedule index {match.index} twice")
            ids.add(match.match_id)
            indices.add(match.index)
            rows.append(
                {
                    "match_id": match.match_id,
                    "idx": match.index,
                    "spec": _as_json(match.spec, f"match {match.match_id}: spec"),
                    "status": MatchStatus.PENDING.value,
                    "attempts": 0,
                    "detail": "",
                }
            )
        return rows

    def season(self, season_id: str) -> SeasonRow | None:
        """The season ``season_id``, or None."""
        with self.read("season") as conn:
            row = conn.execute(
                sa.select(t.seasons).where(t.seasons.c.season_id == season_id)
            ).one_or_none()
        return None if row is None else _season_row(row)

    def seasons(self, game: str | None = None) -> list[SeasonRow]:
        """Every season (of ``game``), in creation order."""
        query = sa.select(t.seasons).order_by(t.seasons.c.id)
        if game is not None:
            query = query.where(t.seasons.c.game == game)
        with self.read("seasons") as conn:
            return [_season_row(r) for r in conn.execute(query).all()]

    def seasons_on_queue(self, queue: str, status: SeasonStatus) -> list[SeasonRow]:
        """The seasons in ``status`` last started on ``queue``, in creation order."""
        query = (
            sa.select(t.seasons)
            .where(t.seasons.c.queue == queue)
            .where(t.seasons.c.status == SeasonStatus(status).value)
            .order_by(t.seasons.c.id)
        )
        with self.read("seasons on queue") as conn:
            return [_season_row(r) for r in conn.execute(query).all()]

    def recent_match_ms(self, game: str, limit: int = 16) -> list[float]:
        """The match times (``timing.match_ms`` of the records) of the game's ``limit``
        latest recorded matches, newest first (what a season's batch size is measured on):
        the results' own column, or, for results recorded before it was kept there, read
        from their records."""
        r, mr = t.results, t.match_records
        latest = sa.select(r.c.match_id, r.c.match_ms).where(r.c.game == game)
        latest = latest.order_by(r.c.finished_at.desc()).limit(limit)
        with self.read("recent match times") as conn:
            rows = conn.execute(latest).all()
            older = [m for m, ms in rows if ms is None]
            blobs = (
                dict(
                    (m, (encoding, data))
                    for m, encoding, data in conn.execute(
                        sa.select(mr.c.match_id, mr.c.encoding, mr.c.data).where(
                            mr.c.match_id.in_(older)
                        )
                    ).all()
                )
                if older
                else {}
            )
        out = []
        for match_id, ms in rows:
            if ms is None and match_id in blobs:
                loaded = decode_record(*blobs[match_id])
                timing = (loaded.get("timing") if isinstance(loaded, dict) else None) or {}
                if isinstance(timing, dict) and isinstance(timing.get("match_ms"), int | float):
                    ms = float(timing["match_ms"])
            if ms is not None:
                out.append(float(ms))
        return out

    def set_season_status(
        self,
        season_id: str,
        status: SeasonStatus,
        queue: str | None = None,
        batch: int | None = None,
        batch_tapered: bool | None = None,
    ) -> None:
        """Set a season's status, and the queue it runs on, its matches per job and whether
        its jobs are tapered when given (UnknownSeason if there is no such season)."""
        status = SeasonStatus(status)
        values: dict[str, Any] = {"status": status.value, "updated_at": _now()}
        if queue is not None:
            values["queue"] = queue
        if batch is not None:
            values["batch"] = int(batch)
        if batch_tapered is not None:
            values["batch_tapered"] = bool(batch_tapered)
        update = t.seasons.update().where(t.seasons.c.season_id == season_id).values(**values)
        with self._one_statement("set season status") as conn:
            done = conn.execute(update).rowcount
        if done == 0:
            raise UnknownSeason(f"no season {season_id!r}")

    def scheduled(
        self, season_id: str, statuses: Iterable[MatchStatus] | None = None
    ) -> list[ScheduledMatchRow]:
        """The season's matches in schedule order, with status and attempts (only those in
        ``statuses`` when given)."""
        query = (
            sa.select(t.scheduled_matches, t.seasons.c.season_id)
            .join(t.seasons, t.seasons.c.id == t.scheduled_matches.c.season_pk)
            .where(t.seasons.c.season_id == season_id)
            .order_by(t.scheduled_matches.c.idx)
        )
        if statuses is not None:
            wanted = [MatchStatus(x).value for x in statuses]
            query = query.where(t.scheduled_matches.c.status.in_(wanted))
        with self.read("scheduled") as conn:
            rows = conn.execute(query).all()
            if not rows:
                self._season_pk(conn, season_id)  # UnknownSeason, or a season with none
        return [_scheduled_row(r) for r in rows]

    def match_states(self, season_id: str, statuses: Iterable[MatchStatus]) -> list[MatchState]:
        """The season's matches in ``statuses``, in schedule order, without their specs:
        one light query (none for an unknown season)."""
        m = t.scheduled_matches
        query = (
            sa.select(m.c.match_id, m.c.idx, m.c.status, m.c.detail)
            .join(t.seasons, t.seasons.c.id == m.c.season_pk)
            .where(t.seasons.c.season_id == season_id)
            .where(m.c.status.in_([MatchStatus(x).value for x in statuses]))
            .order_by(m.c.idx)
        )
        with self.read("match states") as conn:
            rows = conn.execute(query).all()
        return [MatchState(r.match_id, r.idx, MatchStatus(r.status), r.detail) for r in rows]

    def scheduled_match(self, match_id: str) -> ScheduledMatchRow | None:
        """One scheduled match by id, or None."""
        query = (
            sa.select(t.scheduled_matches, t.seasons.c.season_id)
            .join(t.seasons, t.seasons.c.id == t.scheduled_matches.c.season_pk)
            .where(t.scheduled_matches.c.match_id == match_id)
        )
        with self.read("scheduled match") as conn:
            row = conn.execute(query).one_or_none()
        return None if row is None else _scheduled_row(row)

    def mark_match(self, match_id: str, status: MatchStatus, detail: str = "") -> None:
        """Set a scheduled match's status; RUNNING counts an attempt; DONE is never undone."""
        self.mark_matches([match_id], status, detail)

    def mark_matches(self, match_ids: Sequence[str], status: MatchStatus, detail: str = "") -> int:
        """Set the status of many scheduled matches in one transaction (enqueueing a season);
        returns how many changed (DONE ones never do). UnknownMatch, and nothing changed,
        if any id is not scheduled."""
        status = MatchStatus(status)
        ids = list(dict.fromkeys(match_ids))
        values: dict[str, Any] = {"status": status.value, "detail": detail, "updated_at": _now()}
        if status is MatchStatus.RUNNING:
            values["attempts"] = t.scheduled_matches.c.attempts + 1
        column = t.scheduled_matches.c.match_id
        changed = 0
        with self.write("mark matches") as conn:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                found = set(conn.execute(sa.select(column).where(column.in_(chunk))).scalars())
                missing = [m for m in chunk if m not in found]
                if missing:
                    raise UnknownMatch(
                        f"no scheduled match {missing[0]!r}"
                        + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                    )
                # DONE is never undone; CANCELLED only by another CANCELLED (a failed
                # batch marks its matches QUEUED again, never the cancelled ones).
                kept = [MatchStatus.DONE.value]
                if status is not MatchStatus.CANCELLED:
                    kept.append(MatchStatus.CANCELLED.value)
                changed += conn.execute(
                    t.scheduled_matches.update()
                    .where(column.in_(chunk))
                    .where(t.scheduled_matches.c.status.not_in(kept))
                    .values(**values)
                ).rowcount
        return changed

    def claim_match(self, match_id: str, worker: str = "") -> MatchStatus | None:
        """Mark a scheduled match RUNNING (an attempt) unless it is DONE or CANCELLED, in one
        round trip; its status afterwards (RUNNING when claimed), None if not scheduled.

        The seasons' jobs call it before every match. The status is advisory (the result
        is what counts), so on PostgreSQL this commit does not wait for the WAL flush.
        """
        values = {"b_match_id": match_id, "b_worker": worker, "b_at": _now()}
        return self._again_if_dropped(lambda: self._claim_once(match_id, values))

    def claim_matches(self, match_ids: Sequence[str], worker: str = "") -> dict[str, MatchStatus]:
        """:meth:`claim_match` for several matches (a batch job), each by its own id, in one
        round trip (PostgreSQL: one statement; SQLite: an UPDATE, and a read of the rest
        when some were DONE or CANCELLED); each scheduled id's status afterwards (RUNNING
        when claimed); ids not scheduled are absent."""
        ids = list(dict.fromkeys(match_ids))
        if not ids:
            return {}
        return self._again_if_dropped(lambda: self._claim_many_once(ids, worker))

    def _claim_many_once(self, ids: list[str], worker: str) -> dict[str, MatchStatus]:
        if self._postgres:
            return self.send_claim(ids, worker).wait()
        out: dict[str, MatchStatus] = {}
        with self._claim_connection() as conn:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                claimed = set(
                    conn.execute(
                        self._claim_many, {"b_ids": chunk, "b_worker": worker, "b_at": _now()}
                    ).scalars()
                )
                out.update(dict.fromkeys(claimed, MatchStatus.RUNNING))
                rest = [m for m in chunk if m not in claimed]
                if rest:
                    for m, st in conn.execute(self._statuses, {"b_ids": rest}).all():
                        out[m] = MatchStatus(st)
        return out

    def send_claim(self, match_ids: Sequence[str], worker: str = "") -> PendingClaim:
        """:meth:`claim_matches` without waiting for the database (PostgreSQL: sent, its
        answer read by ``wait()``; SQLite: claimed before the call returns). A batch job
        plays its first match meanwhile and looks at the claim before recording it."""
        ids = list(dict.fromkeys(match_ids))
        if not ids:
            return PendingClaim({})
        if not self._postgres:
            return PendingClaim(self.claim_matches(ids, worker))
        what = "claim matches"
        params = [orjson.dumps(ids), worker.encode(), _now().isoformat().encode()]
        flight: _Flight | None
        try:
            flight = self._pg_send(_CLAIM_MANY_NAME, _CLAIM_MANY_PG, params, what)
        except _ConnectionLost as exc:  # a dropped pooled connection: wait() retries
            log.info("store: connection dropped (%s); the claim is retried", exc)
            flight = None

        def collect() -> dict[str, MatchStatus]:
            rows = self._pg_run(_CLAIM_MANY_NAME, _CLAIM_MANY_PG, params, what, flight)
            return {m: MatchStatus(st) for m, st in rows}

        return PendingClaim(None, collect)

    @contextmanager
    def _claim_connection(self) -> Iterator[sa.Connection]:
        """Where claims run: autocommit on PostgreSQL (each statement its own transaction,
        one round trip), an advisory write on SQLite."""
        if not self._postgres:
            with self._advisory_write("claim matches") as conn:
                yield conn
            return
        with self.guard("claim matches"), self.engine.connect() as conn:
            yield conn.execution_options(isolation_level="AUTOCOMMIT")

    def _claim_once(self, match_id: str, values: dict[str, Any]) -> MatchStatus | None:
        matches = t.scheduled_matches
        if self._postgres:
            # One statement in autocommit: one round trip instead of BEGIN, SET LOCAL,
            # UPDATE and COMMIT.
            with self.guard("claim match"), self.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
                claimed = conn.execute(self._claim, values).scalar_one_or_none()
                if claimed is None:
                    claimed = conn.execute(
                        sa.select(matches.c.status).where(matches.c.match_id == match_id)
                    ).scalar_one_or_none()
        else:
            with self._advisory_write("claim match") as conn:
                claimed = conn.execute(self._claim, values).scalar_one_or_none()
                if claimed is None:
                    claimed = conn.execute(
                        sa.select(matches.c.status).where(matches.c.match_id == match_id)
                    ).scalar_one_or_none()
        return None if claimed is None else MatchStatus(claimed)

    def progress(self, season_id: str) -> Progress:
        """How many of the season's matches are in each status."""
        with self.read("progress") as conn:
            season_pk = self._season_pk(conn, season_id)
            rows = conn.execute(
                sa.select(t.scheduled_matches.c.status, sa.func.count())
                .where(t.scheduled_matches.c.season_pk == season_pk)
                .group_by(t.scheduled_matches.c.status)
            ).all()
        counts = {MatchStatus(status): int(n) for status, n in rows}
        return Progress(season_id, sum(counts.values()), counts)

    @staticmethod
    def _season_pk(conn: sa.Connection, season_id: str) -> int:
        pk = conn.execute(
            sa.select(t.seasons.c.id).where(t.seasons.c.season_id == season_id)
        ).scalar_one_or_none()
        if pk is None:
            raise UnknownSeason(f"no season {season_id!r}")
        return int(pk)

    # -- results -----------------------------------------------------------------------

    def record_result(
        self,
        match_id: str,
        record: dict[str, Any] | MatchRecord,
        stderr: Mapping[int, str],
        *,
        parsed: MatchRecord | None = None,
    ) -> bool:
        """Store a finished match once: True when this call wrote it, False when it was
        already recorded (a retried or duplicated job). Marks the scheduled match DONE.

        ``record``: the record's JSON object, or the MatchRecord itself (a worker that just
        played the match: encoded once, straight to its stored form, nothing parsed back).
        ``parsed``: the MatchRecord that a JSON ``record`` is the JSON of, when the caller
        holds it: its header is then not parsed again.
        StoreUnavailable when the database is unreachable or drops the connection: nothing
        was written, so the job may simply retry.
        """
        rows = self._record_rows(match_id, record, stderr, parsed)
        return self._again_if_dropped(lambda: self._record_once(match_id, rows))

    def prepare_result(
        self,
        match_id: str,
        record: dict[str, Any] | MatchRecord,
        stderr: Mapping[int, str],
        *,
        parsed: MatchRecord | None = None,
    ) -> PreparedResult:
        """What :meth:`record_results` writes for one match (arguments as
        :meth:`record_result`'s), built now: InvalidRecord when the record is malformed.
        Its finish time is now."""
        return self._record_rows(match_id, record, stderr, parsed)

    def record_results(self, items: Sequence[PreparedResult]) -> list[bool]:
        """:meth:`record_result` for several prepared matches (a batch job): each written
        once by its own id, all in one transaction (one statement on PostgreSQL, one
        executemany per table on SQLite); for each, True when this call wrote it. Nothing
        is written when the database is unreachable (StoreUnavailable): the caller may
        simply retry."""
        if not items:
            return []
        built = [(p.result["match_id"], p) for p in items]
        written = self._again_if_dropped(lambda: self._record_many_once(built))
        return [m in written for m, _ in built]

    def send_results(self, items: Sequence[PreparedResult]) -> PendingResults:
        """:meth:`record_results` without waiting for the database (a batch job plays its
        next matches meanwhile); the handle's ``wait()`` gives what record_results would.

        PostgreSQL: the statement is sent and the call returns; the server executes and
        commits it (durably) while the caller goes on, and ``wait()`` reads its answer.
        Until then the result is not known to be stored: a caller reports nothing as
        recorded before ``wait()`` returned. SQLite: recorded before the call returns.
        StoreUnavailable from ``wait()``.
        """
        built = [(p.result["match_id"], p) for p in items]
        if not built:
            return PendingResults([], set())
        if not self._postgres:
            written = self._again_if_dropped(lambda: self._record_many_once(built))
            return PendingResults([m for m, _ in built], written)
        what = f"record {len(built)} results"
        params = self._record_params(built)
        try:
            flight = self._pg_send(_RECORD_MANY_NAME, _RECORD_MANY_PG, params, what)
        except _ConnectionLost as exc:  # a dropped pooled connection: wait() retries
            log.info("store: connection dropped (%s); the record is retried", exc)
            flight = None
        return PendingResults(
            [m for m, _ in built], None, lambda: self._pg_record(built, flight, params)
        )

    def _record_many_once(self, built: list[tuple[str, PreparedResult]]) -> set[str]:
        if not self._postgres:
            with self.write(f"record {len(built)} results") as conn:
                return self._insert_many(conn, built)
        return self._pg_record(built)

    def _pg_record(
        self,
        built: list[tuple[str, PreparedResult]],
        flight: _Flight | None = None,
        params: list[bytes] | None = None,
    ) -> set[str]:
        """PostgreSQL: collect ``flight`` (or send ``built`` and collect it); once more on
        a fresh connection if the one used turned out dead (a result is written once, so
        sending it again is safe)."""
        what = f"record {len(built)} results"
        params = params or self._record_params(built)
        rows = self._pg_run(_RECORD_MANY_NAME, _RECORD_MANY_PG, params, what, flight)
        return {row[0] for row in rows}

    def _pg_run(
        self, name: str, sql: bytes, params: list[bytes], what: str, flight: _Flight | None = None
    ) -> list[list[str]]:
        """Collect ``flight`` (or send the statement and collect it): its rows. Once more on
        a fresh connection if the one used turned out dead (for idempotent statements)."""
        for attempt in (1, 2):
            try:
                if flight is None:
                    flight = self._pg_send(name, sql, params, what)
                return self._pg_collect(flight, what)
            except _ConnectionLost as exc:
                flight = None
                if attempt == 2:
                    raise StoreUnavailable(f"{what}: store {self.url} unavailable ({exc})") from exc
                log.info("store: connection dropped (%s); once more on a fresh one", exc)
        raise AssertionError("unreachable")

    def _record_params(self, built: list[tuple[str, PreparedResult]]) -> list[bytes]:
        """_RECORD_MANY_PG's parameters for ``built`` (a match id twice: the first)."""
        results, seats, faults, stderr, records = [], [], [], [], []
        seen: set[str] = set()
        for match_id, rows in built:
            if match_id in seen:  # twice in one call: the first is written
                continue
            seen.add(match_id)
            results.append(rows.result)
            seats.extend(rows.seats)
            faults.extend(rows.faults)
            stderr.extend(rows.stderr)
            blob = rows.record
            data = binascii.b2a_base64(blob["data"], newline=False).decode("ascii")
            records.append({"match_id": match_id, "raw_bytes": blob["raw_bytes"], "data": data})
        return [
            orjson.dumps(results),
            orjson.dumps(seats),
            orjson.dumps(faults),
            orjson.dumps(stderr),
            orjson.dumps(records),
            RECORD_ENCODING.encode(),
            MatchStatus.DONE.value.encode(),
            max(rows.at for _, rows in built).isoformat().encode(),
        ]

    def _pg_send(self, name: str, sql: bytes, params: list[bytes], what: str) -> _Flight:
        """Send statement ``sql`` (text parameters) on a pooled connection, through libpq
        (SQLAlchemy and psycopg wait for the answer; libpq need not), prepared as ``name``
        once per connection (the server parses it once, and plans it once it has seen
        that a generic plan does), and return without waiting. _ConnectionLost when the
        connection is dead; StoreUnavailable when none can be opened."""
        conn, held = self._send_connection(what)
        with self._dropped_if_broken(conn, held):
            pgconn = conn.connection.dbapi_connection.pgconn  # type: ignore[union-attr]
            if pgconn.transaction_status != pq.TransactionStatus.IDLE:
                raise _ConnectionLost(f"connection not idle ({pgconn.transaction_status!r})")
            info = conn.connection.info  # lives as long as this database connection
            if not info.get(name):
                res = pgconn.prepare(name.encode(), sql)
                if res.status != pq.ExecStatus.COMMAND_OK:
                    message = (res.error_message or b"").decode(errors="replace").strip()
                    if pgconn.status != pq.ConnStatus.OK:
                        raise _ConnectionLost(message or "connection lost")
                    raise StoreError(f"{what}: {message}")
                info[name] = True
            pgconn.send_query_prepared(name.encode(), params)
            while pgconn.flush():  # 1: more to send (a non-blocking connection)
                select.select([pgconn.socket], [pgconn.socket], [])
                pgconn.consume_input()
        return _Flight(conn, pgconn, held)

    def _send_connection(self, what: str) -> tuple[sa.Connection, bool]:
        """(a connection to send a statement on, whether it is the thread's held one): the
        held one unless a statement sent on it is still unanswered."""
        held = self._held
        if held.pid != os.getpid():  # a forked child never reuses its parent's
            held.conn, held.busy, held.pid = None, False, os.getpid()
        if held.conn is None:
            with self.guard(what):
                held.conn = self.engine.connect()
            with self._held_lock:
                self._held_all.append(held.conn)
        elif held.busy:
            with self.guard(what):
                return self.engine.connect(), False
        held.busy = True
        return held.conn, True

    @contextmanager
    def _dropped_if_broken(self, conn: sa.Connection, held: bool) -> Iterator[None]:
        """_dropped_if_broken for a connection a statement was sent on; a held one that
        breaks is forgotten (the next statement checks out a fresh one)."""
        try:
            with _dropped_if_broken(conn):
                yield
        except BaseException:
            if held:
                self._held.conn, self._held.busy = None, False
                with self._held_lock:
                    if conn in self._held_all:
                        self._held_all.remove(conn)
            raise

    def _pg_collect(self, flight: _Flight, what: str) -> list[list[str]]:
        """Wait for ``flight``'s answer: its rows, as text. Its connection is free again
        (the pool's goes back to the pool), or, broken, dropped: _ConnectionLost."""
        conn, pgconn = flight.conn, flight.pgconn
        with self._dropped_if_broken(conn, flight.held):
            pgconn.consume_input()
            while pgconn.is_busy():
                select.select([pgconn.socket], [], [])
                pgconn.consume_input()
            rows: list[list[str]] = []
            error = ""
            while (res := pgconn.get_result()) is not None:
                if res.status == pq.ExecStatus.TUPLES_OK:
                    for i in range(res.ntuples):
                        rows.append([res.get_value(i, j).decode() for j in range(res.nfields)])
                else:
                    error = (res.error_message or b"").decode(errors="replace").strip()
            if pgconn.status != pq.ConnStatus.OK:
                raise _ConnectionLost(error or "connection lost")
        if flight.held:
            self._held.busy = False
        else:
            conn.close()
        if error:
            raise StoreError(f"{what}: {error}")
        return rows

    def _record_rows(
        self,
        match_id: str,
        record: dict[str, Any] | MatchRecord,
        stderr: Mapping[int, str],
        parsed: MatchRecord | None,
    ) -> PreparedResult:
        """The rows of one match's result, checked (InvalidRecord when it is malformed)."""
        if isinstance(record, MatchRecord):
            # A worker's own record, just played: encoded once, straight to its stored form.
            if record.match_id != match_id:
                raise InvalidRecord(
                    f"record of match {record.match_id!r} given for match {match_id!r}"
                )
            parsed, outcome = record, Outcome(record.outcome.value)
            abort_reason = record.abort_reason.value if record.abort_reason else ""
            try:
                raw = record.json_bytes()
            except TypeError as exc:
                raise InvalidRecord(f"match {match_id}: not plain JSON: {exc}") from None
        else:
            if not isinstance(record, dict):
                raise InvalidRecord(f"match {match_id}: a match record is a JSON object")
            try:
                # Checked before the record is parsed, so the message is the store's own.
                outcome = Outcome(record.get("outcome", Outcome.COMPLETED.value))
            except ValueError:
                raise InvalidRecord(
                    f"match {match_id}: outcome {record.get('outcome')!r} is not completed|aborted"
                ) from None
            if (
                parsed is None
                or parsed.match_id != match_id
                or not isinstance(record.get("log"), list)
            ):
                parsed = _parse_record(match_id, record)
            abort_reason = str(record.get("abort_reason") or "")
            try:
                raw = orjson.dumps(record)
            except TypeError as exc:
                raise InvalidRecord(
                    f"match {match_id}: the record is not plain JSON: {exc}"
                ) from None
        blob = compress_record(raw, self._config.compress_level)
        faults_per_seat: dict[int, int] = {}
        for fault in parsed.faults:
            faults_per_seat[fault.seat] = faults_per_seat.get(fault.seat, 0) + 1
        played_out = set(parsed.played_out)
        seats = [
            {
                "match_id": match_id,
                "seat": info.seat,
                "bot": info.bot,
                "version": info.version,
                "score": parsed.scores[info.seat] if info.seat < len(parsed.scores) else None,
                "rank": parsed.ranks[info.seat] if info.seat < len(parsed.ranks) else None,
                "played_out": info.seat in played_out,
                "faults": faults_per_seat.get(info.seat, 0),
            }
            for info in parsed.seats
        ]
        fault_rows = [
            {
                "match_id": match_id,
                "seat": f.seat,
                "kind": f.kind.value,
                "decision": f.decision,
                "detail": f.detail,
            }
            for f in parsed.faults
        ]
        stderr_rows = [
            self._stderr_row(match_id, seat, text) for seat, text in sorted(stderr.items()) if text
        ]
        now = _now()
        result_row = {
            "match_id": match_id,
            "game": parsed.game,
            "options": dict(parsed.options),
            "seed": str(parsed.seed),
            "outcome": outcome.value,
            "abort_reason": abort_reason,
            "saloon_version": parsed.saloon_version,
            "finished_at": now,
            "match_ms": _match_ms(parsed),
        }
        blob_row = {
            "match_id": match_id,
            "encoding": RECORD_ENCODING,
            "raw_bytes": len(raw),
            "data": blob,
        }
        return PreparedResult(result_row, seats, fault_rows, blob_row, stderr_rows, now)

    def _again_if_dropped(self, attempt: Callable[[], _T]) -> _T:
        """Run a hot-path transaction; once more if the connection turned out dead.

        Pooled connections in steady use are not pinged (store_engine); one the server
        dropped fails its first statement, SQLAlchemy replaces it, and the second attempt
        runs on a fresh connection. Both callers are idempotent (a result is written once).
        """
        try:
            return attempt()
        except StoreUnavailable as exc:
            cause = exc.__cause__
            if not (isinstance(cause, sa.exc.DBAPIError) and cause.connection_invalidated):
                raise
            log.info("store: connection dropped (%s); once more on a fresh one", cause.orig)
            return attempt()

    def _record_once(self, match_id: str, rows: PreparedResult) -> bool:
        if self._postgres:
            return self._record_once_pg(match_id, rows)
        with self.write(f"record result of {match_id}") as conn:
            return match_id in self._insert_many(conn, [(match_id, rows)])

    def _insert_many(
        self, conn: sa.Connection, built: list[tuple[str, PreparedResult]]
    ) -> set[str]:
        """SQLite: the rows of matches not recorded yet, in the caller's write transaction
        (BEGIN IMMEDIATE: no other writer between the read and the inserts), one
        executemany per table; the ids written (a match recorded already is dropped)."""
        ids = list(dict.fromkeys(m for m, _ in built))
        known: set[str] = set()
        for start in range(0, len(ids), _CHUNK):
            known.update(
                conn.execute(self._recorded, {"b_ids": ids[start : start + _CHUNK]}).scalars()
            )
        fresh: list[PreparedResult] = []
        for match_id, rows in built:
            if match_id in known:
                log.info("store: %s already recorded; this copy is dropped", match_id)
                continue
            known.add(match_id)
            fresh.append(rows)
        if not fresh:
            return set()
        conn.execute(_INSERT_RESULT, [r.result for r in fresh])
        for statement, many in (
            (_INSERT_SEATS, [x for r in fresh for x in r.seats]),
            (_INSERT_FAULTS, [x for r in fresh for x in r.faults]),
            (_INSERT_RECORD, [r.record for r in fresh]),
            (_INSERT_STDERR, [x for r in fresh for x in r.stderr]),
        ):
            if many:
                conn.execute(statement, many)
        done = MatchStatus.DONE.value
        conn.execute(
            self._mark_done,
            [{"b_match_id": r.result["match_id"], "b_status": done, "b_at": r.at} for r in fresh],
        )
        return {r.result["match_id"] for r in fresh}

    def _record_once_pg(self, match_id: str, rows: PreparedResult) -> bool:
        """PostgreSQL: the whole result in ONE statement, in autocommit (one round trip).

        The statement is its own transaction (all of it or nothing, a durable commit);
        its inserts and the DONE mark all hang off the result row the first CTE inserts,
        so when the match is recorded already (ON CONFLICT) the statement writes nothing.
        Row sets (seats, faults, stderr) travel as JSON arrays.
        """
        result_row, seats, fault_rows, blob_row, stderr_rows, now = rows
        params = {
            **result_row,
            "options": _json_text(result_row["options"]),
            "seats": _json_text(seats),
            "faults": _json_text(fault_rows),
            "stderr": _json_text(stderr_rows),
            "encoding": blob_row["encoding"],
            "raw_bytes": blob_row["raw_bytes"],
            "data": blob_row["data"],
            "done": MatchStatus.DONE.value,
            "at": now,
        }
        with self.guard(f"record result of {match_id}"), self.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            written = conn.execute(_RECORD_PG, params).scalar_one_or_none()
        if written is None:
            log.info("store: %s already recorded; this copy is dropped", match_id)
            return False
        return True

    def _stderr_row(self, match_id: str, seat: int, text: str) -> dict[str, Any]:
        data = text.encode("utf-8", errors="replace")
        cap = self._config.stderr_cap_bytes
        kept = data[:cap].decode("utf-8", errors="ignore")  # never split a character
        return {
            "match_id": match_id,
            "seat": int(seat),
            "text": kept,
            "dropped_bytes": len(data) - len(kept.encode("utf-8")),
        }

    def _results_query(self, where: sa.ColumnElement[bool] | None) -> sa.Select[Any]:
        joined = t.results.outerjoin(
            t.scheduled_matches, t.scheduled_matches.c.match_id == t.results.c.match_id
        ).outerjoin(t.seasons, t.seasons.c.id == t.scheduled_matches.c.season_pk)
        query = sa.select(t.results, t.seasons.c.season_id, t.scheduled_matches.c.idx).select_from(
            joined
        )
        return query if where is None else query.where(where)

    def _fetch_results(
        self, conn: sa.Connection, where: sa.ColumnElement[bool] | None
    ) -> list[ResultRow]:
        query = self._results_query(where).order_by(
            # Schedule order: seasons by creation, then index; matches outside any season
            # after them, by id. Never completion order.
            sa.case((t.seasons.c.id.is_(None), 1), else_=0),
            t.seasons.c.id,
            t.scheduled_matches.c.idx,
            self._bytewise(t.results.c.match_id),
        )
        rows = conn.execute(query).all()
        if not rows:
            return []
        ids = self._results_query(where).with_only_columns(t.results.c.match_id)
        seats: dict[str, list[SeatResult]] = {}
        c = t.result_seats.c
        # Plain tuples, fetched at once: a ratings fold reads every result of a game.
        for match_id, seat, bot, version, score, rank, played_out, faults in conn.execute(
            sa.select(c.match_id, c.seat, c.bot, c.version, c.score, c.rank, c.played_out, c.faults)
            .where(c.match_id.in_(ids.scalar_subquery()))
            .order_by(c.match_id, c.seat)
        ).all():
            seats.setdefault(match_id, []).append(
                SeatResult(seat, bot, version, score, rank, bool(played_out), faults)
            )
        return [
            ResultRow(
                match_id=r.match_id,
                season_id=r.season_id,
                index=r.idx,
                game=r.game,
                options=dict(r.options),
                seed=int(r.seed),
                outcome=Outcome(r.outcome),
                abort_reason=r.abort_reason,
                seats=tuple(seats.get(r.match_id, ())),
                saloon_version=r.saloon_version,
                finished_at=_utc(r.finished_at),
            )
            for r in rows
        ]

    def result(self, match_id: str) -> ResultRow | None:
        """The recorded result of ``match_id``, or None."""
        with self.read("result") as conn:
            found = self._fetch_results(conn, t.results.c.match_id == match_id)
        return found[0] if found else None

    def results(self, *, game: str | None = None, season_id: str | None = None) -> list[ResultRow]:
        """Recorded results in SCHEDULE order (season creation order, then schedule index;
        matches outside seasons last, by id), never completion order."""
        conditions: list[sa.ColumnElement[bool]] = []
        if game is not None:
            conditions.append(t.results.c.game == game)
        if season_id is not None:
            conditions.append(t.seasons.c.season_id == season_id)
        with self.read("results") as conn:
            if season_id is not None:
                self._season_pk(conn, season_id)
            return self._fetch_results(conn, sa.and_(*conditions) if conditions else None)

    def faults(self, match_id: str) -> list[FaultRow]:
        """The faults of a recorded match, in the order they happened."""
        with self.read("faults") as conn:
            rows = conn.execute(
                sa.select(t.faults).where(t.faults.c.match_id == match_id).order_by(t.faults.c.id)
            ).all()
        return [FaultRow(r.match_id, r.seat, FaultKind(r.kind), r.decision, r.detail) for r in rows]

    def match_record(self, match_id: str) -> dict[str, Any] | None:
        """The full match record as it was recorded (decompressed), or None."""
        with self.read("match record") as conn:
            row = conn.execute(
                sa.select(t.match_records).where(t.match_records.c.match_id == match_id)
            ).one_or_none()
        if row is None:
            return None
        loaded: dict[str, Any] = decode_record(row.encoding, row.data, f"match {match_id}")
        return loaded

    def stderr(self, match_id: str, seat: int) -> str:
        """What seat ``seat`` wrote to stderr in the match (capped); "" if nothing."""
        with self.read("stderr") as conn:
            row = conn.execute(
                sa.select(t.seat_stderr).where(
                    (t.seat_stderr.c.match_id == match_id) & (t.seat_stderr.c.seat == seat)
                )
            ).one_or_none()
        if row is None:
            return ""
        if row.dropped_bytes:
            return f"{row.text}\n[... {row.dropped_bytes} more bytes of stderr dropped]\n"
        return str(row.text)


def _match_ms(record: MatchRecord) -> float | None:
    """The record's own measure of its match's time (``timing.match_ms``), if any."""
    value = record.timing.get("match_ms") if isinstance(record.timing, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _parse_record(match_id: str, record: dict[str, Any]) -> MatchRecord:
    """The record's header, seats, faults, scores and ranks, checked; the log is only
    checked to be a list (parsing ~240 entries would cost more than storing them)."""
    if not isinstance(record.get("log"), list):
        raise InvalidRecord(f"match {match_id}: the record has no 'log' list")
    try:
        parsed = MatchRecord.from_json({**record, "log": []})
    except RecordError as exc:
        raise InvalidRecord(f"match {match_id}: {exc}") from None
    if parsed.match_id != match_id:
        raise InvalidRecord(f"record of match {parsed.match_id!r} given for match {match_id!r}")
    return parsed


def _season_row(row: sa.Row[Any]) -> SeasonRow:
    return SeasonRow(
        season_id=row.season_id,
        game=row.game,
        spec=dict(row.spec),
        status=SeasonStatus(row.status),
        seq=row.id,
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
        queue=row.queue,
        batch=row.batch or 1,
        batch_tapered=bool(row.batch_tapered),
    )


def _scheduled_row(row: sa.Row[Any]) -> ScheduledMatchRow:
    return ScheduledMatchRow(
        match_id=row.match_id,
        season_id=row.season_id,
        index=row.idx,
        spec=dict(row.spec),
        status=MatchStatus(row.status),
        attempts=row.attempts,
        detail=row.detail,
        updated_at=_utc(row.updated_at),
    )
