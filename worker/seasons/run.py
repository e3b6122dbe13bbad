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
from saloon.worker.matches.spec import MatchSpec, match_id
from saloon.worker.queue.jobs import JobOutcome, run_match
from saloon.worker.queue.season_queue import Enqueued, SeasonQueue, reap_abandoned, rescue_popped
from saloon.worker.seasons.schedule import SeasonSpec, expand
from saloon.worker.store.rows import (
    MatchState,
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
    (:func:`requeue_lost`), and its jobs' layout: ``batch`` matches a full job, else
    measured, the tail tapered (saloon.worker.matches.batching), fixed at the season's
    first start."""
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
    done = frozenset(s.match_id for s, st in rows if st is MatchStatus.DONE)
    todo = [s for s, st in rows if st is not MatchStatus.CANCELLED]
    return queue.enqueue(todo, store_url, done, lambda m: _recorded(store, m), layout=layout)


def job_layout(store: Store, season: SeasonRow) -> JobLayout:
    """How the season's schedule is cut into queue jobs (as its first start decided)."""
    total = store.progress(season.season_id).total if season.batch_tapered else 0
    return JobLayout(season.batch, total, season.batch_tapered)


#: Statuses of a match the store says is still to be played.
PENDING = (MatchStatus.PENDING, MatchStatus.QUEUED, MatchStatus.RUNNING)


def lost_matches(store: Store, queue: SeasonQueue, season: SeasonRow) -> list[MatchState]:
    """The season's matches the store says are still to be played but no live job holds:
    their job is absent from Redis (a Redis without persistence restarted, a flushed
    queue) or over (RQ failed it for good without the store knowing: the store was away
    when its retries were spent; finished, stopped, cancelled), and they are not being
    played: a RUNNING match whose job is absent counts as played while its claiming
    worker is alive and running that job (a worker that lost the job's run, alive and
    idle, plays it no more). Two light queries of the store, two round trips to Redis."""
    return _lost(store, queue, season, store.match_states(season.season_id, PENDING))


def _lost(
    store: Store, queue: SeasonQueue, season: SeasonRow, rows: list[MatchState]
) -> list[MatchState]:
    if not rows:
        return []
    layout = job_layout(store, season)
    holders = {r.match_id: match_id(season.season_id, layout.first_of_job(r.index)) for r in rows}
    over = queue.not_live(sorted(set(holders.values())))
    lost = [r for r in rows if holders[r.match_id] in over]
    claimers = [
        r.detail
        for r in lost
        if r.status is MatchStatus.RUNNING and r.detail and over[holders[r.match_id]] is None
    ]
    playing = queue.playing(claimers)

    def being_played(r: MatchState) -> bool:
        if r.status is not MatchStatus.RUNNING or over[holders[r.match_id]] is not None:
            return False  # not claimed, or its job is over: no one plays it
        if r.detail not in playing:
            return False  # its claimer is gone
        job = playing[r.detail]
        return job is None or job == holders[r.match_id]  # None: a worker that does not say

    return [r for r in lost if not being_played(r)]


def requeue_lost(store: Store, queue: SeasonQueue, store_url: str) -> int:
    """Enqueue again what the store says is pending in the running seasons started on this
    queue and no live job holds (the store is the truth; Redis only carries jobs; see
    :func:`lost_matches`); how many. A running season with nothing left to play is
    settled here (done, or failed if a match failed), so that its status does not wait
    for someone to read its progress.

    Workers' keepers (saloon.worker.queue.worker) and ``saloon serve`` run it every 10 s,
    so a season whose jobs Redis lost, or RQ failed while the store was away, completes
    with no one running ``start``. A look costs one query for the running seasons and one
    light query each (their specs are read only when some of their matches are lost).
    """
    added = 0
    for season in store.seasons_on_queue(queue.queue.name, SeasonStatus.RUNNING):
        rows = store.match_states(season.season_id, PENDING)
        if not rows:
            settle(store, season.season_id)
            continue
        lost = {r.match_id for r in _lost(store, queue, season, rows)}
        if not lost:
            continue
        scheduled = store.scheduled(season.season_id, PENDING)
        specs = [MatchSpec.from_json(r.spec) for r in scheduled if r.match_id in lost]
        enq = queue.enqueue(
            specs,
            store_url,
            recorded=lambda m: _recorded(store, m),
            layout=job_layout(store, season),
        )
        if enq.added:
            log.warning(
                "season %s: %d pending matches were queued nowhere; enqueued again",
                season.season_id,
                enq.added,
            )
        added += enq.added
    return added


def settle(store: Store, season_id: str) -> SeasonStatus | None:
    """Settle a created or running season with no match left to play: DONE, or FAILED
    when a match failed (``start`` again retries those); its new status, or None when it
    is left as it is. Idempotent."""
    row = store.season(season_id)
    if row is None or row.status not in (SeasonStatus.CREATED, SeasonStatus.RUNNING):
        return None
    counts = store.progress(season_id)
    if counts.remaining:
        return None
    status = SeasonStatus.FAILED if counts.count(MatchStatus.FAILED) else SeasonStatus.DONE
    store.set_season_status(season_id, status)
    return status


def _recorded(store: Store, match_id: str) -> bool:
    row = store.scheduled_match(match_id)
    return row is not None and row.status is MatchStatus.DONE


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
    recorded = 0
    try:
        for spec, status in rows:
            if status in (MatchStatus.DONE, MatchStatus.CANCELLED):
                continue
            outcome = _run_with_retries(store, spec)
            recorded += outcome is JobOutcome.RECORDED
            if on_match is not None:
                on_match(spec, outcome)
    finally:
        close_sandboxes()  # warm containers are for workers, not for one local run
    progress(store, season_id)  # settles the season's status
    return recorded


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
    """The season's progress from the store (abandoned jobs are reaped first if a queue
    is given)."""
    row = store.season(season_id)
    if row is None:
        raise UnknownSeason(f"no season {season_id!r} in the store")
    if queue is not None:
        reap_abandoned(queue.queue)
        rescue_popped(queue.queue)
    counts = store.progress(season_id)
    status = row.status
    failed = counts.count(MatchStatus.FAILED)
    unqueued = None
    on_queue = queue is not None and row.queue == queue.queue.name
    if queue is not None and on_queue and status is SeasonStatus.RUNNING and counts.remaining:
        unqueued = len(lost_matches(store, queue, row))
    if status in (SeasonStatus.CREATED, SeasonStatus.RUNNING) and counts.remaining == 0:
        # Nothing left to play: settle the season (`start` again retries failed matches).
        status = SeasonStatus.FAILED if failed else SeasonStatus.DONE
        store.set_season_status(season_id, status)
    return SeasonProgress(
        season_id=season_id,
        status=status,
        total=counts.total,
        done=counts.done,
        running=counts.count(MatchStatus.RUNNING),
        failed=failed,
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
