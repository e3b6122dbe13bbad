"""Engines for the results store: SQLite (WAL, busy timeout, real write locks) or PostgreSQL.

SQLite's driver opens transactions lazily, so two writers that both read first deadlock on
the upgrade to a write lock and one fails at once, whatever the busy timeout. The store
therefore begins its own transactions: ``BEGIN IMMEDIATE`` for writes (they queue on the
busy timeout instead) and a plain ``BEGIN`` for reads, the SQLAlchemy-documented recipe.
"""

from __future__ import annotations

import importlib.resources
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any

import orjson
import psycopg
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from saloon.worker.errors import StoreError, StoreUnavailable
from saloon.worker.store.config import StoreConfig
from saloon.worker.store.schema import SCHEMA_REVISION

log = logging.getLogger(__name__)


def _json_dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


#: JSON columns through orjson (a core dependency): far faster than the stdlib on the hot
#: path.
_JSON_CODEC: dict[str, Any] = {"json_serializer": _json_dumps, "json_deserializer": orjson.loads}

#: Execution option a store connection carries when it is about to write.
WRITE_OPTION = "saloon_store_write"
BACKENDS = ("sqlite", "postgresql")
#: Alembic's bookkeeping table (its default name).
VERSION_TABLE = "alembic_version"
#: One migrator at a time per schema; released when its transaction ends.
_PG_MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('saloon.store:' || current_schema()))"


class ConnectionLost(Exception):
    """A connection found dead by the store's own use of libpq (no driver error to map)."""


def unavailable(what: str, url: str, exc: BaseException) -> StoreUnavailable | None:
    """The store's one mapping of a failure to StoreUnavailable (a lost or unreachable
    database: retry later), or None when ``exc`` is not one (bad input, a constraint: the
    caller's error passes unchanged). ``exc`` is SQLAlchemy's wrapper or the driver's own
    error (psycopg's or sqlite3's, from a raw connection); ``what`` names the operation."""
    orig: BaseException | None
    if isinstance(exc, sa.exc.DBAPIError):
        if not (isinstance(exc, sa.exc.OperationalError) or exc.connection_invalidated):
            return None
        orig = exc.orig
    elif isinstance(exc, sqlite3.OperationalError | psycopg.OperationalError | ConnectionLost):
        orig = exc
    else:
        return None
    cause = first_line(orig if orig is not None else exc)
    return StoreUnavailable(f"{what}: store {url} unavailable ({type(orig).__name__}: {cause})")


def first_line(exc: BaseException) -> str:
    """The first line of a driver's error (libpq's run over several: "server closed the
    connection unexpectedly / This probably means..."), or its type's name: what a log
    line or a one-line message says of it."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def create_engine(url: str, config: StoreConfig) -> sa.Engine:
    """A configured engine for a sqlite:/// or postgresql+psycopg:// URL."""
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError as exc:
        raise StoreError(f"not a store URL: {url!r} ({exc})") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed, config)
    if backend == "postgresql":
        engine = sa.create_engine(parsed, pool_size=config.pool_size, **_JSON_CODEC)
        _ping_idle_connections(engine, config.ping_after_idle_s)
        return engine
    raise StoreError(
        f"unsupported store URL {parsed.render_as_string(hide_password=True)}: "
        "use sqlite:///PATH or postgresql+psycopg://USER@HOST/DB"
    )


def _ping_idle_connections(engine: sa.Engine, idle_s: float) -> None:
    """Ping a pooled connection before use when it has been idle ``idle_s`` or more.

    A connection the server dropped (restart, failover) is then replaced instead of
    failing the next job. SQLAlchemy's pool_pre_ping pings on every checkout: one round
    trip per transaction, two per match; a worker's connection in a season is never idle
    that long, and one that dies mid-season fails its transaction as StoreUnavailable,
    which the job retries (nothing written, SQLAlchemy replaces the connection).
    """

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_conn: Any, record: Any) -> None:
        record.info["saloon_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("saloon_idle_since")
        if since is None or time.monotonic() - since < idle_s:
            return  # a new connection, or one used a moment ago
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as exc:
            # The pool discards this connection and checks out (or opens) another.
            raise sa.exc.DisconnectionError(f"stale connection: {exc}") from exc


def _sqlite_engine(url: sa.URL, config: StoreConfig) -> sa.Engine:
    memory = url.database in (None, "", ":memory:")
    kwargs: dict[str, Any] = {}
    if memory:
        # One shared connection, or every checkout would see a different empty database.
        kwargs = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    elif url.database is not None:
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, **kwargs, **_JSON_CODEC)
    busy = int(config.busy_timeout_ms)
    synchronous = config.sqlite_synchronous.upper()  # checked against a fixed list

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # the "begin" hook below emits BEGIN itself
        cursor = dbapi_conn.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {busy}")
        if not memory:
            _set_wal(cursor, busy)
        cursor.execute(f"PRAGMA synchronous = {synchronous}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        write = conn.get_execution_options().get(WRITE_OPTION, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _set_wal(cursor: Any, busy_ms: int) -> None:
    """Switch the database to WAL, waiting out other openers of a fresh file.

    Changing the journal mode needs an exclusive lock, and SQLite answers "database is
    locked" at once (not after the busy timeout) while another process is creating or
    switching the same new file: retry with a short sleep for up to ``busy_ms``.
    """
    deadline = time.monotonic() + busy_ms / 1000
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def migrations_dir() -> Path:
    """The folder of the Alembic environment shipped in the package."""
    return Path(str(importlib.resources.files("saloon.worker.store.migrations")))


def head_revision() -> str:
    """The newest revision among the shipped migration scripts."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory(str(migrations_dir())).get_current_head()
    if head is None:
        raise StoreError("the store's migrations have no head revision")
    return head


def current_revision(conn: sa.Connection) -> str | None:
    """The revision the database is at (None for an empty database), without Alembic."""
    if not sa.inspect(conn).has_table(VERSION_TABLE):
        return None
    versions = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    return versions[0] if len(versions) == 1 else None


def migrate(engine: sa.Engine) -> None:
    """Bring the database to the head revision; safe when processes open it at once.

    A database already at SCHEMA_REVISION costs one query: Alembic (slow to import) is
    loaded only when there is something to migrate.
    """
    with engine.connect() as conn, conn.begin():
        if current_revision(conn) == SCHEMA_REVISION:
            return
    # Alembic logs its plug-ins' set-up (on import) and each step at INFO: a worker started
    # with INFO logging printed "setup plugin alembic..." lines. Its warnings still show.
    alembic_log = logging.getLogger("alembic")
    if alembic_log.level == logging.NOTSET:
        alembic_log.setLevel(logging.WARNING)
    from alembic import command
    from alembic.config import Config

    with engine.connect() as conn:
        conn.execution_options(**{WRITE_OPTION: True})
        with conn.begin():
            # Concurrent openers queue here: SQLite on BEGIN IMMEDIATE, PostgreSQL on an
            # advisory lock per schema; the second finds the tables made and does nothing.
            if engine.dialect.name == "postgresql":
                conn.execute(sa.text(_PG_MIGRATION_LOCK))
            before = current_revision(conn)
            if before == SCHEMA_REVISION:
                return
            cfg = Config()
            cfg.set_main_option("script_location", str(migrations_dir()))
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
            log.info("store: migrated from %s to %s", before, SCHEMA_REVISION)
