"""Where the results store lives and how it behaves: every default in this one place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from saloon.worker.store.codec import DEFAULT_ZSTD_LEVEL

#: Environment variable naming the store: a SQLAlchemy URL or a path to a SQLite file.
STORE_ENV = "SALOON_STORE"
#: The SQLite file used when neither a URL nor $SALOON_STORE is given (in the current folder).
DEFAULT_STORE_PATH = "saloon.db"
#: How long a SQLite writer waits for another process's write lock before giving up.
DEFAULT_BUSY_TIMEOUT_MS = 30_000
#: Bytes of one seat's captured stderr kept per match (the head; the rest is counted).
DEFAULT_STDERR_CAP_BYTES = 64 * 1024
#: Zstandard level for stored match records (saloon.worker.store.codec): 1, its fastest
#: ordinary level; on a match of a few ms the time counts more than a few % of bytes.
DEFAULT_COMPRESS_LEVEL = DEFAULT_ZSTD_LEVEL
#: SQLite's fsync policy. FULL: a commit survives a power cut, not only a killed process
#: (NORMAL, with WAL, survives a killed process but may roll back the last commits on a
#: power cut; it saves an fsync per recorded match).
DEFAULT_SQLITE_SYNCHRONOUS = "FULL"
SQLITE_SYNCHRONOUS_LEVELS = ("OFF", "NORMAL", "FULL", "EXTRA")
#: Connections a process keeps open to PostgreSQL (one store per worker process).
DEFAULT_POOL_SIZE = 5
#: A pooled PostgreSQL connection idle this long (seconds) is pinged before use (a server
#: restart is then a silent reconnect); one in steady use is not (a round trip saved per
#: transaction; a failure fails the transaction as StoreUnavailable, and the job retries).
DEFAULT_PING_AFTER_IDLE_S = 1.0


@dataclass(frozen=True)
class StoreConfig:
    """Tunables of one open store; the defaults suit a laptop and a worker fleet alike."""

    busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS
    stderr_cap_bytes: int = DEFAULT_STDERR_CAP_BYTES
    compress_level: int = DEFAULT_COMPRESS_LEVEL
    pool_size: int = DEFAULT_POOL_SIZE
    sqlite_synchronous: str = DEFAULT_SQLITE_SYNCHRONOUS
    ping_after_idle_s: float = DEFAULT_PING_AFTER_IDLE_S

    def __post_init__(self) -> None:
        if self.sqlite_synchronous.upper() not in SQLITE_SYNCHRONOUS_LEVELS:
            raise ValueError(
                f"sqlite_synchronous {self.sqlite_synchronous!r} is not one of "
                + ", ".join(SQLITE_SYNCHRONOUS_LEVELS)
            )


DEFAULT_STORE_CONFIG = StoreConfig()


def resolve_url(url: str | os.PathLike[str] | None = None) -> str:
    """The SQLAlchemy URL for ``url``: None -> $SALOON_STORE or ./saloon.db; a path -> SQLite.

    ``postgresql://`` and ``postgres://`` get the psycopg (3) driver, the one installed.
    """
    if url is None:
        url = os.environ.get(STORE_ENV) or DEFAULT_STORE_PATH
    text = os.fspath(url)
    if "://" not in text:
        return "sqlite:///" + str(Path(text).expanduser().resolve())
    for prefix in ("postgresql://", "postgres://"):
        if text.startswith(prefix):
            return "postgresql+psycopg://" + text[len(prefix) :]
    return text
