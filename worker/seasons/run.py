"""Season operations over the store and the queue: create, start, run here, status, cancel.

The store is the source of truth (the schedule, every match's status, the results); Redis
only carries the jobs. So a season survives losing Redis: ``start`` again re-enqueues
every match that is not recorded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from saloon.worker.errors import SeasonError, UnknownSeason, WorkerError
from saloon.worker.matches.batching import JobLayout, choose_batch
from saloon.worker.matches.play import close_sandboxes
from saloon.worker.matches.spec import MatchSpec
from saloon.worker.queue.jobs import JobOutcome, run_match
from saloon.worker.queue.keepers import lost_matches, recorded
from saloon.worker.queue.season_queue import Enqueued, SeasonQueue
from saloon.worker.seasons.schedule import SeasonSpec, expand
from saloon.worker.store.rows import (
    MatchStatus,
    ResultRow,
    ScheduledMatch,
    SeasonRow,
    SeasonStatus,
)
from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: Attempts of one match in an in-process run before the run gives up on the store...
LOCAL_ATTEMPTS = 6
#: ... waiting this long (seconds, doubling) between them.
LOCAL_BACKOFF_S = 0.5


@dataclass(frozen=True)
class SeasonProgress:
    """Where a season is: matches done, running, failed, remaining (waiting or queued)."""

    season_id: str
    status: SeasonStatus
    total: int
    done: int
    running: int
    failed: int
    cancelled: int
    #: Matches still to play that no queue holds (None: no queue was looked at).
    unqueued: int | None = None

    @property
    def remaining(self) -> int:
        """Matches not yet played (queued, waiting for a retry, or running)."""
        return self.total - self.done - self.failed - self.cancelled

    @property
    def finished(self) -> bool:
        """True when no match is left to play."""
        return self.remaining == 0


def create(store: Store, season: SeasonSpec) -> list[MatchSpec]:
    """Store the season and its schedule (idempotent); the scheduled matches."""
    specs = expand(season)
    store.create_season(
        season.season_id,
        season.to_json(),
        [ScheduledMatch(s.match_id, s.index, s.to_json()) for s in specs],
    )
    return specs


def scheduled_specs(store: Store, season_id: str) -> list[tuple[MatchSpec, MatchStatus]]:
    """The season's match specs in schedule order, each with its status in the store."""
    if store.season(season_id) is None:
        raise UnknownSeason(f"no season {season_id!r} in the store")
    return _specs(store, season_id)


def start(
    store: Store,
    queue: SeasonQueue,
    season_id: str,
    store_url: str,
    batch: int | None = None,
) -> Enqueued:
    """Enqueue every match of the season not yet recorded (idempotent); the store notes
    the queue, so that whatever watches it re-enqueues what a lost Redis drops
    (saloon.worker.queue.keepers.requeue_lost), and its jobs' layout: ``batch`` matches a
    full job, else measured, the tail tapered (saloon.worker.matches.batching), fixed at
    the season's first start. A season with nothing left to play is settled here."""
    row = _runnable_season(store, season_id)  # read once: it is on the way to the first job
    rows = _specs(store, season_id)
    layout = JobLayout(row.batch, len(rows), row.batch_tapered)
    if row.queue is None:  # its first start on a queue: the layout is decided now
        layout = JobLayout(choose_batch(store, [s for s, _ in rows], batch), len(rows), True)
    if any(st not in (MatchStatus.DONE, MatchStatus.CANCELLED) for _, st in rows):
        # Only a season with something left to play runs again: a finished one keeps its
        # status (DONE stays DONE; FAILED runs again, its failed matches retried).
        store.set_season_status(
            season_id,
            SeasonStatus.RUNNING,
            queue=queue.queue.name,
            batch=layout.size,
            batch_tapered=layout.tapered,
        )
    else:  # e.g. every match cancelled but the recorded ones: no job will settle it
        store.settle_season(season_id)
    done = frozenset(s.match_id for s, st in rows if st is MatchStatus.DONE)
    todo = [s for s, st in rows if st is not MatchStatus.CANCELLED]
    return queue.enqueue(todo, store_url, done, lambda m: recorded(store, m), layout=layout)


def _runnable_season(store: Store, season_id: str) -> SeasonRow:
    """The season, read once; UnknownSeason, or SeasonError when it was cancelled."""
    row = store.season(season_id)
    if row is None:
        raise UnknownSeason(f"no season {season_id!r} in the store")
    if row.status is SeasonStatus.CANCELLED:
        raise SeasonError(f"season {season_id} was cancelled")
    return row


def _specs(store: Store, season_id: str) -> list[tuple[MatchSpec, MatchStatus]]:
    """The season's match specs in schedule order, each with its status (the season known
    to exist)."""
    return [(MatchSpec.from_json(r.spec), r.status) for r in store.scheduled(season_id)]


def run_here(
    store: Store,
    season_id: str,
    on_match: Callable[[MatchSpec, JobOutcome], None] | None = None,
) -> int:
    """Play every unrecorded match of the season in this process, in schedule order.

    The in-process queue: the same job as an RQ worker runs (saloon.worker.queue.jobs.run_match),
    so the same seed gives the same records. Returns how many matches were recorded.
    """
    _runnable_season(store, season_id)
    rows = _specs(store, season_id)
    store.set_season_status(season_id, SeasonStatus.RUNNING)
    played = 0
    try:
        for spec, status in rows:
            if status in (MatchStatus.DONE, MatchStatus.CANCELLED):
                continue
            outcome = _run_with_retries(store, spec)
            played += outcome is JobOutcome.RECORDED
            if on_match is not None:
                on_match(spec, outcome)
    finally:
        close_sandboxes()  # warm containers are for workers, not for one local run
    store.settle_season(season_id)  # each job settles it too; this run may have played none
    return played


def _run_with_retries(store: Store, spec: MatchSpec) -> JobOutcome:
    wait = LOCAL_BACKOFF_S
    for attempt in range(1, LOCAL_ATTEMPTS + 1):
        try:
            return run_match(spec, store, worker="local")
        except WorkerError as exc:
            if attempt == LOCAL_ATTEMPTS:
                raise
            log.warning("%s: attempt %d failed (%s); retrying", spec.match_id, attempt, exc)
            time.sleep(wait)
            wait *= 2
    raise SeasonError(f"{spec.match_id}: no attempt left")  # not reached


def progress(store: Store, season_id: str, queue: SeasonQueue | None = None) -> SeasonProgress:
    """The season's progress from the store, as it is: a read, nothing written (its status
    is settled by whoever records its last match or watches the queue: the job, the
    keepers, ``season run``'s loop). Given the queue it was started on, and while it
    runs, how many of its matches no queue holds (``unqueued``; the keepers enqueue them
    again)."""
    row = store.season(season_id)
    if row is None:
        raise UnknownSeason(f"no season {season_id!r} in the store")
    counts = store.progress(season_id)
    unqueued = None
    on_queue = queue is not None and row.queue == queue.queue.name
    if queue is not None and on_queue and row.status is SeasonStatus.RUNNING and counts.remaining:
        unqueued = len(lost_matches(store, queue, row))
    return SeasonProgress(
        season_id=season_id,
        status=row.status,
        total=counts.total,
        done=counts.done,
        running=counts.count(MatchStatus.RUNNING),
        failed=counts.count(MatchStatus.FAILED),
        cancelled=counts.count(MatchStatus.CANCELLED),
        unqueued=unqueued,
    )


def cancel(store: Store, season_id: str, queue: SeasonQueue | None = None) -> int:
    """Cancel the season: matches not yet played are dropped (recorded ones stay)."""
    rows = scheduled_specs(store, season_id)
    store.set_season_status(season_id, SeasonStatus.CANCELLED)
    dropped = 0
    for spec, status in rows:
        if status in (MatchStatus.PENDING, MatchStatus.QUEUED):
            store.mark_match(spec.match_id, MatchStatus.CANCELLED, "season cancelled")
            dropped += 1
    if queue is not None:
        queue.cancel(season_id)
    return dropped


@dataclass(frozen=True)
class SeasonResult:
    """One recorded match of a season, with its place in the schedule and its deal group."""

    index: int
    #: Duplicate deals: matches sharing ``deal`` replay one deal with rotated seats (None
    #: when the season has no duplicate deals).
    deal: int | None
    result: ResultRow


def season_results(store: Store, season_id: str) -> list[SeasonResult]:
    """The season's recorded results in SCHEDULE order, each with its deal group.

    What ratings fold over: schedule order (never completion order), aborted matches
    included (``result.outcome``; skip them), unplayed matches absent.
    """
    deals = {row.match_id: (row.index, row.spec.get("deal")) for row in store.scheduled(season_id)}
    out = []
    for result in store.results(season_id=season_id):
        index, deal = deals[result.match_id]
        out.append(SeasonResult(index, None if deal is None else int(deal), result))
    return out
