"""The connection a store keeps for one-statement reads repeated very often (Store.fetch).

A board's walk runs one statement per update, many times a second on a busy arena: on
PostgreSQL it runs on one connection held per store, in autocommit (one statement sees
one snapshot; no pool check-out, BEGIN or COMMIT per run), through the driver's cursor
(no SQLAlchemy result processing: the rows come back as the driver's tuples). On SQLite
each run checks a pooled connection out. Failures are mapped by the store's one mapping
(engine.unavailable); a held connection that fails is dropped, and the next run opens
another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Compiled

from saloon.worker.store.engine import unavailable


class HeldReader:
    """Runs compiled read statements for one store (thread-safe: one at a time)."""

    def __init__(self, engine: Callable[[], sa.Engine], url: str) -> None:
        #: The store's engine as Store.engine gives it (a forked child's own).
        self._engine = engine
        self._url = url
        self._lock = threading.Lock()
        self._hold = engine().dialect.name == "postgresql"
        self._raw: Any = None
        sa.event.listen(engine(), "engine_disposed", self._disposed)

    def _disposed(self, _engine: sa.Engine) -> None:
        """The store closed (or a forked child dropped its parent's connections)."""
        with self._lock:
            raw, self._raw = self._raw, None
        if raw is not None:
            raw.invalidate()

    def fetch(self, what: str, statement: Compiled, values: Mapping[str, Any]) -> list[Any]:
        """``statement``'s rows with ``values`` bound (see Store.fetch)."""
        compiled: Any = statement  # an SQLCompiler: its binds' names in order when positional
        params: Any = compiled.construct_params(dict(values))
        if compiled.positional:
            params = tuple(params[name] for name in compiled.positiontup)
        sql = compiled.string
        with self._lock:
            raw = self._raw
            try:
                if raw is None:
                    raw = self._engine().raw_connection()
                    if self._hold:
                        driver: Any = raw.driver_connection
                        driver.autocommit = True
                        self._raw = raw
                cursor = raw.cursor()
                if self._hold:
                    # Not prepared: measured, a prepared walk costs this process more CPU
                    # per run (psycopg 3.3) than sending the text.
                    cursor.execute(sql, params, prepare=False)
                else:
                    cursor.execute(sql, params)
                rows: list[Any] = cursor.fetchall()
                cursor.close()
            except Exception as exc:
                if raw is not None and self._hold and isinstance(exc, self._dbapi_error):
                    self._raw = None
                    raw.invalidate()
                lost = unavailable(what, self._url, exc)
                if lost is None:
                    raise
                raise lost from exc
            finally:
                if raw is not None and not self._hold:
                    raw.close()
            return rows

    @property
    def _dbapi_error(self) -> type[BaseException]:
        error: type[BaseException] = self._engine().dialect.loaded_dbapi.Error
        return error
