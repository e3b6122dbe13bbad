"""The results store: bots, versions, seasons, schedules, results, faults, records, stderr.

SQLAlchemy Core over a SQLite file (the default) or PostgreSQL (by URL), with the same code
on both; ``Store.open`` migrates the database to the newest schema (worker/store/migrations/).
A result is written exactly once per match id: a retried or duplicated job's
``record_results`` says False and writes nothing (a unique key + ON CONFLICT DO NOTHING,
so it holds across processes and machines).
"""

from __future__ import annotations

from saloon.referee.record import Outcome
from saloon.worker.store.bots import Bots
from saloon.worker.store.claims import Claims, PendingClaim
from saloon.worker.store.connections import HeldConnection
from saloon.worker.store.recording import PendingResults, PreparedResult, Recording
from saloon.worker.store.results import Results
from saloon.worker.store.rows import (
    BotRow,
    FaultRow,
    MatchState,
    MatchStatus,
    Progress,
    ResultRow,
    ScheduledMatch,
    ScheduledMatchRow,
    SeasonRow,
    SeasonStatus,
    SeatRow,
    VersionRow,
)
from saloon.worker.store.seasons import Seasons

__all__ = [
    "BotRow",
    "FaultRow",
    "HeldConnection",
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
    "SeatRow",
    "Store",
    "VersionRow",
]


class Store(Bots, Seasons, Claims, Recording, Results):
    """The results store; open one per process with :meth:`open` (safe across threads).

    One class, its parts by concept: connections and the public API for the layers above
    (:mod:`~saloon.worker.store.connections`), bots (:mod:`~saloon.worker.store.bots`),
    seasons and their schedules (:mod:`~saloon.worker.store.seasons`), claims
    (:mod:`~saloon.worker.store.claims`), recording results
    (:mod:`~saloon.worker.store.recording`) and reading them
    (:mod:`~saloon.worker.store.results`).
    """
