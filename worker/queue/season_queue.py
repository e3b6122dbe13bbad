"""Seasons on RQ: one job per match (job id = match id) or per batch of a season's matches,
retries, abandoned-job reaping.

* **Batches**: with a batch size B > 1, the season's matches go in jobs of consecutive
  ones of its schedule, laid out by saloon.worker.matches.batching.JobLayout (full jobs
  of B, then a tapered tail; uniform jobs of B for seasons started before tapering). A
  job has the id of its first match (:func:`holder_id`), so every rule below holds for it
  as for a one-match job, and the job that holds a match is known from the match's index
  and the layout alone. The job claims and records each match by its own id; a retried
  batch skips the ones recorded already.

* **Enqueue once**: the job id is the match id; a match whose job exists (queued, running,
  waiting for a retry) or whose result is recorded is not enqueued again, so starting a
  season twice does not double it. A job that failed for good is re-enqueued. Finished
  jobs expire after a minute (the store holds the result).
* **Retries**: every job carries ``Retry(max=JOB_RETRIES, interval=RETRY_INTERVALS_S)``:
  an infrastructure failure (store unavailable, sandbox error, the job timed out) retries
  with backoff. Bot faults are results and never fail a job.
* **Abandoned jobs**: a worker killed with -9 leaves its job in RQ's StartedJobRegistry,
  where RQ would only notice after the job's timeout. Each saloon worker keeps a short-lived
  alive key (:func:`alive_key`); :func:`reap_abandoned` re-enqueues (as a retry) every
  started job whose worker's key has expired. Workers' keepers run it every second
  (saloon.worker.queue.worker).
* **Popped, never started**: :func:`rescue_popped` re-enqueues a job a worker took off
  the queue but never started (it lost Redis or died in between).
* **Backoff without RQ's scheduler process**: retries with an interval sit in RQ's
  ScheduledJobRegistry; :func:`promote_due` moves the due ones back to the queue (the
  worker's keeper thread calls it), so no extra scheduler process is needed.

Each of the three says why RQ's own upkeep (which RQ's work loop still runs) does not
cover it. What they need of RQ beyond its documented API is in
saloon.worker.queue.rq_internals.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq import Callback, Queue, Retry
from rq.exceptions import DuplicateJobError, NoSuchJobError
from rq.job import Job, JobStatus

from saloon.games import get_game
from saloon.worker.errors import QueueUnavailable
from saloon.worker.matches.batching import JobLayout
from saloon.worker.matches.spec import MatchSpec, in_season, match_id
from saloon.worker.queue.defaults import DEFAULT_QUEUE
from saloon.worker.queue.rq_internals import (
    drop_started,
    due_job_ids,
    first_seen,
    job_statuses,
    popped_job_ids,
    queue_keys,
    retry_or_fail,
    take_popped,
)

log = logging.getLogger(__name__)

#: Retries of a match job after an infrastructure failure...
JOB_RETRIES = 5
#: ... with these waits (seconds) before each retry.
RETRY_INTERVALS_S = (1, 2, 4, 8, 16)
#: How long a finished job stays in Redis (the store holds the result; a second ``start``
#: skips recorded matches and re-enqueues any other finished job). Not 0: RQ deletes a job
#: with a TTL of 0 at once, which reads its status and executions first (more round trips
#: a job, docs/seasons.md); a TTL only adds EXPIREs to the finishing transaction.
RESULT_TTL_S = 60
#: How long a job that failed for good stays in RQ's failed registry.
FAILURE_TTL_S = 7 * 24 * 3600
#: A worker's alive key lives this long; the worker refreshes it every second.
ALIVE_TTL_S = 5
ALIVE_PREFIX = "saloon:alive:"
PLAYING_PREFIX = "saloon:playing:"
#: The statuses of a job that will still run: it holds its matches.
LIVE_STATUSES = frozenset(
    {JobStatus.QUEUED, JobStatus.STARTED, JobStatus.SCHEDULED, JobStatus.DEFERRED}
)
#: A job per match.
ONE_A_JOB = JobLayout()


def connect(url: str) -> Redis:
    """A Redis connection that answers PING; QueueUnavailable when none does."""
    redis = Redis.from_url(url, socket_connect_timeout=2, health_check_interval=10)
    try:
        redis.ping()
    except RedisError as exc:
        raise QueueUnavailable(f"no Redis answers at {url} ({exc})") from None
    return redis


def alive_key(worker_name: str) -> str:
    """The Redis key that says worker ``worker_name`` is alive (expires when it is not)."""
    return ALIVE_PREFIX + worker_name


def playing_key(worker_name: str) -> str:
    """The Redis key that names the job worker ``worker_name`` is running ("" between
    jobs); written with its alive key, every second."""
    return PLAYING_PREFIX + worker_name


@dataclass(frozen=True)
class Enqueued:
    """What enqueueing a season did."""

    added: int
    #: Matches left alone: their job exists or their result is recorded.
    present: int


class SeasonQueue:
    """The RQ queue that season matches go through."""

    def __init__(self, redis: Redis, name: str = DEFAULT_QUEUE) -> None:
        self.redis = redis
        self.queue = Queue(name, connection=redis)

    def enqueue(
        self,
        specs: Sequence[MatchSpec],
        store_url: str,
        done: frozenset[str] = frozenset(),
        recorded: Callable[[str], bool] | None = None,
        layout: JobLayout = ONE_A_JOB,
    ) -> Enqueued:
        """Enqueue a job per spec (``layout.size`` > 1: per job of the season's layout, see
        the module docstring) unless it is queued already or ``done`` (recorded).

        A job that finished (it stays RESULT_TTL_S) is enqueued again unless ``recorded``
        says its matches are recorded now (``done`` was read a moment earlier and may be
        stale); without ``recorded``, always. Redis may hold a finished job of another
        store's match of the same id: the store decides.
        """
        added = present = 0
        groups: dict[str, list[MatchSpec]] = {}
        for spec in specs:
            groups.setdefault(holder_id(spec, layout), []).append(spec)
        for job_id, group in groups.items():
            todo = [s for s in group if s.match_id not in done]
            present += len(group) - len(todo)
            all_recorded = None
            if recorded is not None:
                all_recorded = _all_recorded([s.match_id for s in todo], recorded)
            if not todo or self._job_present(job_id, all_recorded):
                present += len(todo)
                continue
            try:
                self._enqueue_job(job_id, todo, store_url, layout.size)
            except DuplicateJobError:  # another enqueuer was first: still enqueued once
                present += len(todo)
                continue
            added += len(todo)
        log.info("queue %s: %d matches enqueued, %d present", self.queue.name, added, present)
        return Enqueued(added, present)

    def _enqueue_job(
        self, job_id: str, specs: Sequence[MatchSpec], store_url: str, batch: int
    ) -> None:
        from saloon.worker.queue.jobs import batch_job, match_job, on_match_failure

        timeout = sum(s.job_timeout_s(get_game(s.game).max_length) for s in specs)
        if batch == 1:
            function: Callable[..., str] = match_job
            payload: Any = specs[0].to_json()
            description = f"match {job_id}"
        else:
            function, payload = batch_job, [s.to_json() for s in specs]
            description = f"matches {specs[0].match_id} .. {specs[-1].match_id}"
        self.queue.enqueue(
            function,
            payload,
            store_url,
            job_id=job_id,
            job_timeout=timeout,
            retry=Retry(max=JOB_RETRIES, interval=list(RETRY_INTERVALS_S)),
            result_ttl=RESULT_TTL_S,
            failure_ttl=FAILURE_TTL_S,
            on_failure=Callback(on_match_failure),
            description=description,
            # Atomic in Redis: two enqueuers of one season cannot both add a match.
            unique=True,
        )

    def _job_present(self, job_id: str, recorded: Callable[[str], bool] | None) -> bool:
        try:
            job = Job.fetch(job_id, connection=self.redis)
        except NoSuchJobError:
            return False
        status = job.get_status(refresh=False)
        if status is JobStatus.FINISHED and recorded is not None and recorded(job_id):
            return True  # recorded a moment ago (the job stays RESULT_TTL_S)
        if status in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.STOPPED, JobStatus.CANCELED):
            job.delete()  # over (failed for good, refused...): a new start gives a new chance
            return False
        if job.origin != self.queue.name:
            # RQ's job ids are global in a Redis database: another arena's (another
            # store's) season of the same id. Its job must end first; the keepers
            # (requeue_lost) enqueue ours then. docs/operator-guide.md: one database each.
            log.warning(
                "queue %s: job %s is live on queue %s of this Redis database (another "
                "arena's season of the same id?); this match waits until it ends",
                self.queue.name,
                job_id,
                job.origin,
            )
        return True

    def cancel(self, season_id: str) -> int:
        """Drop the season's jobs that have not started (running ones finish; their
        results are kept). Returns how many were dropped."""
        dropped = 0
        for job_id in self.queue.get_job_ids():
            if in_season(job_id, season_id):
                self.queue.remove(job_id)
                Job(job_id, connection=self.redis).delete(remove_from_queue=False)
                dropped += 1
        scheduled = self.queue.scheduled_job_registry
        for job_id in scheduled.get_job_ids():
            if in_season(job_id, season_id):
                scheduled.remove(job_id, delete_job=True)
                dropped += 1
        return dropped

    def purge(self) -> int:
        """Delete the queue with every job it holds or held and its registries (tests,
        benchmarks, a queue being retired); how many jobs were deleted."""
        q = self.queue
        registries = [
            q.started_job_registry,
            q.finished_job_registry,
            q.failed_job_registry,
            q.scheduled_job_registry,
            q.deferred_job_registry,
            q.canceled_job_registry,
        ]
        ids = set(q.get_job_ids()) | set(popped_job_ids(q))
        for registry in registries:
            ids.update(registry.get_job_ids(cleanup=False))
        for job_id in ids:
            with contextlib.suppress(NoSuchJobError):
                Job.fetch(job_id, connection=self.redis).delete()
        self.redis.delete(*queue_keys(q))
        q.delete(delete_jobs=True)
        return len(ids)

    def missing(self, job_ids: Sequence[str]) -> list[str]:
        """The ids among ``job_ids`` of which Redis holds no job at all (one round trip)."""
        return [job_id for job_id, status in self.not_live(job_ids).items() if status is None]

    def not_live(self, job_ids: Sequence[str]) -> dict[str, str | None]:
        """The ids among ``job_ids`` whose job will not run: absent from Redis (None), or
        over (its status: failed for good, finished, stopped, cancelled); a job queued,
        started, or waiting for a retry or a dependency is live (one round trip)."""
        statuses = job_statuses(self.redis, job_ids)
        return {
            job_id: status
            for job_id, status in zip(job_ids, statuses, strict=True)
            if status not in LIVE_STATUSES
        }

    def alive(self, worker_names: Sequence[str]) -> set[str]:
        """The names among ``worker_names`` whose alive key exists (one round trip)."""
        return set(self.playing(worker_names))

    def playing(self, worker_names: Sequence[str]) -> dict[str, str | None]:
        """The live workers among ``worker_names`` (their alive key exists), each with the
        id of the job it is running ("" between jobs; None: it does not say, a worker
        older than the key), in one round trip."""
        names = sorted(set(worker_names))
        if not names:
            return {}
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.mget([alive_key(n) for n in names])
            pipe.mget([playing_key(n) for n in names])
            alive, jobs = pipe.execute()
        return {
            n: None if job is None else (job.decode() if isinstance(job, bytes) else str(job))
            for n, there, job in zip(names, alive, jobs, strict=True)
            if there is not None
        }

    def running(self, season_id: str) -> list[str]:
        """Ids of the season's matches being played right now."""
        ids = self.queue.started_job_registry.get_job_ids(cleanup=False)
        return [i for i in ids if in_season(i, season_id)]

    def queued(self, season_id: str) -> int:
        """How many of the season's matches wait in the queue (or for a retry)."""
        waiting = self.queue.get_job_ids() + self.queue.scheduled_job_registry.get_job_ids()
        return sum(1 for i in waiting if in_season(i, season_id))


def holder_id(spec: MatchSpec, layout: JobLayout) -> str:
    """The id of the job that carries ``spec``'s match: its own id (one match a job), or
    the id of the first match of its job in the season's layout."""
    if layout.size <= 1 or not spec.season_id:
        return spec.match_id
    return match_id(spec.season_id, layout.first_of_job(spec.index))


def _all_recorded(ids: list[str], recorded: Callable[[str], bool]) -> Callable[[str], bool]:
    """``recorded`` for a job: all of its matches (the job id is the first one's)."""
    return lambda _job_id: all(recorded(m) for m in ids)


def reap_abandoned(queue: Queue, min_age_s: float = ALIVE_TTL_S) -> list[str]:
    """Re-enqueue started jobs whose worker is gone (its alive key expired); their ids.

    A job that started less than ``min_age_s`` ago is left alone (its worker may not have
    written its alive key yet). A re-enqueued job spends one retry; one without retries
    left goes to the failed registry (the store marks it FAILED through the callback).

    RQ's own reaping (StartedJobRegistry.cleanup, in RQ's registry maintenance) handles
    an entry only once it expires, the job's timeout (the match's cap) plus a minute after
    it started, and is exclusive only under RQ's maintenance lock; this one acts within
    seconds of the death, and of several keepers only the one that removes the entry acts.
    """
    from saloon.worker.queue.jobs import on_match_failure

    redis = queue.connection
    reaped = []
    for job_id in queue.started_job_registry.get_job_ids(cleanup=False):
        try:
            job = Job.fetch(job_id, connection=redis)
        except NoSuchJobError:
            drop_started(queue, job_id)
            continue
        if job.get_status(refresh=False) != JobStatus.STARTED:
            continue
        if job.worker_name and redis.exists(alive_key(job.worker_name)):
            continue
        started = job.started_at.timestamp() if job.started_at else 0.0
        if time.time() - started < min_age_s:
            continue
        if not drop_started(queue, job.id):
            continue  # another worker's keeper reaped it first
        log.warning("%s: worker %s is gone; the job is abandoned", job.id, job.worker_name)
        on_match_failure(job, redis, AbandonedByWorker, AbandonedByWorker(job.worker_name), None)
        retry_or_fail(job, queue, "abandoned by its worker")
        reaped.append(job.id)
    return reaped


def rescue_popped(queue: Queue, min_age_s: float = ALIVE_TTL_S) -> list[str]:
    """Re-enqueue jobs a worker popped from the queue but never started (it lost Redis or
    died in between); their ids.

    RQ parks a popped job in its intermediate queue until the job starts. RQ's own
    cleanup of it (IntermediateQueue.cleanup, in RQ's registry maintenance) acts after a
    minute, counts it a failed attempt (a retry spent, or failed for good) though it
    never ran, and skips a job whose execution is in the started registry though it never
    started (below). Here it goes back to its queue after ``min_age_s``, no retry spent.
    """
    started = set(queue.started_job_registry.get_job_ids(cleanup=False))
    rescued = []
    for job_id in popped_job_ids(queue):
        first = first_seen(queue, job_id)  # the first look starts its clock
        if first is None or time.time() - first.timestamp() < min_age_s:
            continue
        if job_id in started:
            # RQ records the job's execution (the started registry) before it starts the
            # job; a worker that lost Redis in between may see its transaction fail while
            # Redis had applied it. A job still QUEUED there never ran: drop the entry.
            try:
                status = Job.fetch(job_id, connection=queue.connection).get_status(refresh=False)
            except NoSuchJobError:
                continue
            if status != JobStatus.QUEUED or not drop_started(queue, job_id):
                continue
        if not take_popped(queue, job_id):
            continue  # another worker's keeper rescued it first
        try:
            job = Job.fetch(job_id, connection=queue.connection)
        except NoSuchJobError:
            continue
        log.warning("%s: popped but never started; enqueued again", job_id)
        queue.enqueue_job(job)  # it never ran: no retry spent
        rescued.append(job_id)
    return rescued


class AbandonedByWorker(Exception):
    """The worker running a job died (killed, lost its host) before finishing it."""


def promote_due(queue: Queue) -> int:
    """Move retries whose backoff is over from the scheduled registry to the queue.

    RQ's scheduler (``work(with_scheduler=True)``) does this from a process it forks off
    the worker, for the one worker per queue that holds its lock: a lock holder killed
    with -9 stalls every retry until the lock expires a minute later, and its promotion
    is not exclusive without the lock. Here every keeper promotes, every second, and only
    the one that removes the entry enqueues the job.
    """
    registry = queue.scheduled_job_registry
    moved = 0
    for job_id in due_job_ids(queue):
        # Only the keeper that removes the entry enqueues it (several workers promote).
        if not registry.remove(job_id):
            continue
        try:
            job = Job.fetch(job_id, connection=queue.connection)
        except NoSuchJobError:
            continue
        queue.enqueue_job(job)
        moved += 1
    return moved
