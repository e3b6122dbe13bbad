"""The store's connections: opening and closing, the one error mapping, read and write
transactions, the public API the layers above use (docs/store.md), and the statements a
thread sends to PostgreSQL without waiting for their answer (a batch's claim and flushes,
on a connection the thread holds).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, Self, TypeVar

import orjson
import psycopg
import sqlalchemy as sa
from psycopg import pq
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Compiled

from saloon.worker.errors import (
    InvalidSchedule,
    StoreError,
    StoreUnavailable,
    UnknownSeason,
)
from saloon.worker.store import schema as t
from saloon.worker.store.config import DEFAULT_STORE_CONFIG, StoreConfig, resolve_url
from saloon.worker.store.engine import (
    WRITE_OPTION,
    ConnectionLost,
    create_engine,
    first_line,
    migrate,
    unavailable,
)
from saloon.worker.store.reader import HeldReader

log = logging.getLogger(__name__)


#: Match ids per IN (...) list: well under SQLite's bound-parameter limit.
_CHUNK = 500


_T = TypeVar("_T")


class _ConnectionLost(ConnectionLost):
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


@dataclass(frozen=True)
class HeldConnection:
    """A snapshot of the connection the calling thread holds for the statements it sends
    without waiting (:meth:`StoreBase.held_connection`): read-only, for tests and
    diagnostics; changing it changes nothing in the store."""

    #: The held connection (PostgreSQL), or None: none yet, dropped, or not PostgreSQL.
    connection: sa.Connection | None
    #: A statement sent on it has not been answered yet (the next one takes a pooled one).
    busy: bool


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


class StoreBase:
    """What every part of the store stands on: its engine and connections."""

    def __init__(self, engine: sa.Engine, config: StoreConfig = DEFAULT_STORE_CONFIG) -> None:
        self._engine = engine
        self._config = config
        self._pid = os.getpid()
        self._postgres = engine.dialect.name == "postgresql"
        self._held = _Held()
        self._held_all: list[sa.Connection] = []  # every thread's, closed by close()
        self._held_lock = threading.Lock()
        self._reader = HeldReader(lambda: self.engine, self.url)

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

    @classmethod
    def open(
        cls, url: str | os.PathLike[str] | None = None, *, config: StoreConfig | None = None
    ) -> Self:
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

    def __enter__(self) -> Self:
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

    def held_connection(self) -> HeldConnection:
        """The connection the calling thread holds for the statements it sends without
        waiting (``send_claim``, ``send_results`` on PostgreSQL), as a read-only snapshot:
        which one, and whether a statement sent on it is unanswered. A forked child holds
        none of its parent's."""
        held = self._held
        if held.pid != os.getpid():
            return HeldConnection(None, False)
        return HeldConnection(held.conn, held.busy)

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

    @staticmethod
    def driver_execute(conn: sa.Connection, sql: str, params: Sequence[Any]) -> None:
        """Run ``sql`` (written for this backend, the driver's own placeholders) with
        ``params`` on ``conn``, a :meth:`read` or :meth:`write` connection, in its
        transaction, through the driver's cursor: no SQLAlchemy statement or result
        processing, for a statement sent often with one large parameter (a board
        checkpoint's row set as one JSON document). Errors are mapped by the enclosing
        read or write."""
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            cursor.execute(sql, params)
        finally:
            cursor.close()

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
            log.info(
                "store: connection dropped (%s); once more on a fresh one",
                first_line(cause.orig or cause),
            )
            return attempt()

    @staticmethod
    def _season_pk(conn: sa.Connection, season_id: str) -> int:
        pk = conn.execute(
            sa.select(t.seasons.c.id).where(t.seasons.c.season_id == season_id)
        ).scalar_one_or_none()
        if pk is None:
            raise UnknownSeason(f"no season {season_id!r}")
        return int(pk)

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
                    raise unavailable(what, self.url, exc) or StoreUnavailable(what) from exc
                log.info(
                    "store: connection dropped (%s); once more on a fresh one", first_line(exc)
                )
        raise AssertionError("unreachable")

    def _pg_send(self, name: str, sql: bytes, params: list[bytes], what: str) -> _Flight:
        """Send statement ``sql`` (text parameters) on a pooled connection, through libpq
        (SQLAlchemy and psycopg wait for the answer; libpq need not: psycopg's pipeline
        mode sends the Sync, and so the commit, only where it waits for every result, see
        docs/store.md), prepared as ``name``
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
