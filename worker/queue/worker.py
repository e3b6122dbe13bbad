"""``saloon worker``: an RQ worker that plays season matches (``python -m`` runs it too).

Worker class: :class:`MatchWorker`, a non-forking ``rq.SimpleWorker``. A forking worker
runs each job in a fresh child (RQ's isolation), but costs ~7 ms per job here and, above
all, a forked work-horse dies with its job, so it cannot keep a warm pool of bot
containers (or open store connections) from one match to the next. The isolation RQ's
fork gives is kept other ways:

* **time limits**: every job has RQ's timeout (SIGALRM in the worker) set to the match's
  wall-clock cap plus a margin; the referee's own cap fires first and records the match;
* **health**: a keeper thread refreshes the worker's alive key every second; when the
  process dies or hangs past the job timeout, other workers re-enqueue its job
  (saloon.worker.queue.season_queue.reap_abandoned); the same thread re-enqueues jobs a
  worker popped but never started (rescue_popped) and promotes due retries;
* **restart after N jobs** (``--max-jobs``, default :data:`DEFAULT_MAX_JOBS`): the worker
  then re-executes itself as a fresh process, so nothing a job leaks (memory, threads,
  file descriptors) outlives N matches;
* **Redis blips**: RQ's dequeue loop reconnects with backoff; an error outside it restarts
  the worker object after a pause (the abandoned job is reaped and retried).

Redis traffic: a job costs two round trips once the worker is running (RQ's own loop
takes eight): one transaction starts it (RQ's execution record and its start, which RQ
sends separately), one finishes it and pops the next job (RQ: a suspension check, a
WATCH, a read of the job's dependents, the transaction, then BLMOVE and HGETALL). The
worker heartbeat goes at most once a second, on one of them.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.job import Job, JobStatus
from rq.rate_limit import release_slot
from rq.registry import StartedJobRegistry
from rq.suspension import WORKERS_SUSPENDED
from rq.utils import now
from rq.worker import WorkerStatus

from saloon.worker.queue.defaults import DEFAULT_MAX_JOBS, DEFAULT_QUEUE
from saloon.worker.queue.jobs import close_stores, warm_up
from saloon.worker.queue.season_queue import (
    ALIVE_TTL_S,
    alive_key,
    connect,
    promote_due,
    reap_abandoned,
    rescue_popped,
)
from saloon.worker.seasons.cli import add_worker_arguments
from saloon.worker.seasons.play import close_sandboxes, sweep_sandboxes

log = logging.getLogger(__name__)

#: Seconds between the keeper thread's rounds (alive key, reaping, due retries).
KEEPER_INTERVAL_S = 1.0
#: Seconds between the keeper's sweeps for containers of dead workers of this host.
SWEEP_EVERY_S = 5.0
#: Pause before a worker restarts after losing Redis outside RQ's own reconnect loop.
RESTART_PAUSE_S = 1.0
#: Seconds a worker blocks waiting for a job before it looks around (the worker's TTL - 15).
WORKER_TTL_S = 30
#: RQ refreshes its worker key (TTL: WORKER_TTL_S + 60 s) three times per job, three Redis
#: round trips each; once per this many seconds is plenty (bench/seasons.py: ~2-4 ms a job).
HEARTBEAT_EVERY_S = 1.0
#: How old the suspension flag read in a job's finishing transaction may be and still
#: stand for RQ's own check at the top of its loop (``rq suspend``).
SUSPENSION_FRESH_S = 1.0
#: Pop the queue's next job into its intermediate queue and read it, unless workers are
#: suspended (KEYS: queue, intermediate queue, RQ's suspension flag; ARGV: the job key
#: prefix). RQ's own dequeue does the same in two round trips (BLMOVE, then HGETALL).
_POP_NEXT = """
if redis.call('EXISTS', KEYS[3]) == 1 then return false end
local id = redis.call('LMOVE', KEYS[1], KEYS[2], 'LEFT', 'RIGHT')
if not id then return false end
return {id, redis.call('HGETALL', ARGV[1] .. id)}
"""
#: Put a job popped ahead back at the head of its queue, unless a keeper's rescue_popped
#: took it out of the intermediate queue first (KEYS: queue, intermediate; ARGV: job id).
_PUT_BACK = """
if redis.call('LREM', KEYS[2], 1, ARGV[1]) == 1 then redis.call('LPUSH', KEYS[1], ARGV[1]) end
"""


class MatchWorker(SimpleWorker):
    """A non-forking RQ worker with an alive key and a reaper (see the module docstring)."""

    #: The state was set (IDLE) but not yet written to Redis (see set_state).
    _state_unsaved = False
    #: The job's finishing transaction wrote IDLE before RQ sets it (see set_state).
    _idle_sent = False
    #: The job-start transaction RQ's prepare_execution began; prepare_job_execution sends it.
    _start_pipe: Pipeline | None = None
    #: (monotonic time, suspended?) as read by the last job's finishing transaction.
    _suspension_read: tuple[float, bool] | None = None
    #: The next job, popped by the last job's finishing transaction (see handle_job_success).
    _next: tuple[Job, Queue] | None = None
    #: The ``max_jobs`` of the running work loop (the last job pops no next one).
    _max_jobs: int | None = None

    def __init__(self, queues: Sequence[Queue], connection: Redis, **kw: object) -> None:
        super().__init__(list(queues), connection=connection, worker_ttl=WORKER_TTL_S, **kw)  # type: ignore[arg-type]
        self._keeper_stop = threading.Event()
        self._keeper: threading.Thread | None = None
        #: Jobs this worker ran (RQ keeps its own counters in Redis only).
        self.jobs_played = 0

    def work(self, *args: Any, **kwargs: Any) -> bool:
        """RQ's work loop (the job it popped ahead, if any, goes back when the loop ends)."""
        self._max_jobs = kwargs.get("max_jobs")
        return bool(super().work(*args, **kwargs))

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Run the job in this process (SimpleWorker), counting it."""
        self.jobs_played += 1
        super().execute_job(job, queue)

    def prepare_execution(self, job: Job) -> Execution:
        """RQ's execution record (started registry, worker BUSY), not sent yet: it goes in
        one transaction with the rest of the job's start (prepare_job_execution), one round
        trip instead of two. One transaction also means a job is never seen in the started
        registry while still QUEUED."""
        pipe = self.connection.pipeline()
        execution = Execution.create(job, self.get_heartbeat_ttl(job), pipe, self.name)
        self.executions[execution.id] = execution
        self.set_state(WorkerStatus.BUSY, pipeline=pipe)
        self._start_pipe = pipe
        return execution

    def prepare_job_execution(self, job: Job, remove_from_intermediate_queue: bool = False) -> None:
        """RQ's start of a job (heartbeats, STARTED, out of the intermediate queue), sent
        with the execution record prepare_execution queued, in one transaction."""
        pipe, self._start_pipe = self._start_pipe, None
        if pipe is None:
            super().prepare_job_execution(job, remove_from_intermediate_queue)
            return
        try:
            heartbeat_ttl = self.get_heartbeat_ttl(job)
            self.heartbeat(heartbeat_ttl, pipeline=pipe)
            job.prepare_for_execution(self.name, pipeline=pipe)  # sets its heartbeat too
            pipe.persist(job.key)
            if remove_from_intermediate_queue:
                queue = self.queue_class(job.origin, connection=self.connection)
                pipe.lrem(queue.intermediate_queue_key, 1, job.id)
            pipe.execute()
        finally:
            pipe.reset()

    def handle_job_success(
        self,
        job: Job,
        queue: Queue,
        started_job_registry: StartedJobRegistry,
        execution: Execution,
    ) -> None:
        """RQ's finish of a job that returned, in one transaction (RQ's takes three round
        trips: WATCH of the job's dependents, reading them, then the transaction).

        Saloon's jobs never have dependents (nothing of ours enqueues with ``depends_on``)
        nor RQ repeats: a job that does takes RQ's own path. The worker's heartbeat, its
        IDLE state and the suspension flag ride on the same transaction, so the top of
        RQ's loop makes no round trip of its own; so does the dequeue of the next job
        (:data:`_POP_NEXT`), which the loop then starts at once. A job is popped ahead only
        on a single queue, when the worker is neither stopping nor at its last job.
        """
        if job.repeats_left is not None:
            super().handle_job_success(job, queue, started_job_registry, execution)
            return
        assert job.started_at is not None and job.ended_at is not None
        with self.connection.pipeline() as pipe:
            self.increment_successful_job_count(pipeline=pipe)
            self.increment_total_working_time(job.ended_at - job.started_at, pipe)
            result_ttl = job.get_result_ttl(self.default_result_ttl)
            if result_ttl != 0:
                job._handle_success(
                    result_ttl,
                    pipeline=pipe,
                    worker_name=self.name,
                    execution_id=execution.id,
                    execution_started_at=execution.created_at,
                    execution_ended_at=job.ended_at,
                )
            job.cleanup(result_ttl, pipeline=pipe, remove_from_queue=False)
            job._status = JobStatus.FINISHED
            self.cleanup_execution(job, pipeline=pipe, execution=execution)
            self.heartbeat(pipeline=pipe)
            # The IDLE that RQ sets once the job is over; the state itself changes only then
            # (a warm shutdown signal while BUSY waits for the job, see set_state).
            pipe.hset(self.key, "state", WorkerStatus.IDLE)
            self._idle_sent = True
            pipe.exists(WORKERS_SUSPENDED)
            pop = self._may_pop_next()
            if pop:
                pipe.eval(
                    _POP_NEXT,
                    3,
                    queue.key,
                    queue.intermediate_queue_key,
                    WORKERS_SUSPENDED,
                    Job.redis_job_namespace_prefix,
                )
            replies = pipe.execute()
        if pop:
            self._next = self._popped(queue, replies.pop())
        self._suspension_read = (time.monotonic(), bool(replies[-1]))
        release_slot(job)

    def _may_pop_next(self) -> bool:
        last = self._max_jobs is not None and self.jobs_played >= self._max_jobs
        if len(self.queues) != 1 or self._stop_requested or last:
            return False
        # LMOVE (the script's pop) came with Redis 6.2; RQ falls back to LPOP before it.
        version = self.get_redis_server_version()  # type: ignore[no-untyped-call]
        return bool(version >= (6, 2, 0))

    def _popped(self, queue: Queue, reply: Any) -> tuple[Job, Queue] | None:
        """The job :data:`_POP_NEXT` popped, or None (the queue was empty)."""
        if not reply:
            return None
        job_id, flat = reply[0].decode(), reply[1]
        if not flat:  # its hash is gone (deleted): RQ's dequeue skips such ids too
            self.connection.lrem(queue.intermediate_queue_key, 1, job_id)
            return None
        job = self.job_class(job_id, connection=self.connection, serializer=self.serializer)
        job.restore(dict(zip(flat[::2], flat[1::2], strict=True)))
        return job, queue

    def dequeue_job_and_maintain_ttl(
        self, timeout: int | None, max_idle_time: int | None = None
    ) -> tuple[Job, Queue] | None:
        """The job the last one's finishing transaction popped, else RQ's dequeue."""
        popped, self._next = self._next, None
        if popped is None:
            return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        job, _ = popped
        job.redis_server_version = self.get_redis_server_version()  # type: ignore[no-untyped-call]
        self.log.info("Worker %s: %s: %s", self.name, job.origin, job.id)
        return popped

    def teardown(self) -> None:
        """RQ's end of the work loop; a job popped ahead and not started goes back to the
        head of its queue (else the keepers' rescue_popped would, after a few seconds)."""
        popped, self._next = self._next, None
        if popped is not None:
            job, queue = popped
            with contextlib.suppress(RedisError):
                self.connection.eval(_PUT_BACK, 2, queue.key, queue.intermediate_queue_key, job.id)
        super().teardown()  # type: ignore[no-untyped-call]

    def check_for_suspension(self, burst: bool) -> None:
        """RQ's check for ``rq suspend``; a fresh reading from the last job's finishing
        transaction that says "not suspended" stands in for the round trip."""
        read, self._suspension_read = self._suspension_read, None
        if read is not None and not read[1] and time.monotonic() - read[0] < SUSPENSION_FRESH_S:
            return
        super().check_for_suspension(burst)

    def handle_execution_ended(self, job: Job, queue: Queue, heartbeat_ttl: int) -> None:
        """RQ's end of a job's execution; on success without a round trip of its own.

        RQ writes the job's ``last_heartbeat`` field alone here (informational: RQ 3 no
        longer extends the started registry with it); a finished job is saved with the
        field right after, in the transaction that finishes it. A failing job (RQ calls
        this inside its ``except``) keeps RQ's own write.
        """
        if sys.exc_info()[1] is not None:
            super().handle_execution_ended(job, queue, heartbeat_ttl)
            return
        job.ended_at = now()
        job.last_heartbeat = job.ended_at

    def set_state(self, state: str, pipeline: Pipeline | None = None) -> None:
        """RQ's worker state (informational: ``rq info``), without round trips of its own.

        RQ sets IDLE after every job and again before every dequeue, a round trip each:
        an unchanged state is not written again; IDLE after a job (BUSY) was written by
        the job's finishing transaction, or (a failed job) rides on the next pipelined
        heartbeat: the suspension check at the top of RQ's loop.
        """
        if pipeline is None and state == self._state:
            return
        if pipeline is None and state == WorkerStatus.IDLE and self._state == WorkerStatus.BUSY:
            self._state = state
            self._state_unsaved = not self._idle_sent  # the job's finish wrote it already
            self._idle_sent = False
            return
        self._state_unsaved = False
        super().set_state(state, pipeline)

    def heartbeat(self, timeout: int | None = None, pipeline: Pipeline | None = None) -> None:
        """RQ's worker heartbeat, in one round trip and at most once per HEARTBEAT_EVERY_S
        (RQ calls it before and after every dequeue and after every job)."""
        if pipeline is not None:
            super().heartbeat(timeout, pipeline)
            self._save_state(pipeline)
            return
        last = self.last_heartbeat
        recent = last is not None and (now() - last).total_seconds() < HEARTBEAT_EVERY_S
        if timeout is None and recent:
            return
        with self.connection.pipeline(transaction=False) as pipe:
            super().heartbeat(timeout, pipe)
            self._save_state(pipe)
            pipe.execute()

    def _save_state(self, pipeline: Pipeline) -> None:
        if self._state_unsaved:
            pipeline.hset(self.key, "state", self._state)
            self._state_unsaved = False

    def start_keeper(self) -> None:
        """Start the keeper thread (alive key, abandoned jobs, due retries)."""
        self._keep_once()
        self._keeper = threading.Thread(target=self._keep, name="saloon-keeper", daemon=True)
        self._keeper.start()

    def stop_keeper(self) -> None:
        """Stop the keeper thread and drop the alive key."""
        self._keeper_stop.set()
        if self._keeper is not None:
            self._keeper.join(5)
        with contextlib.suppress(RedisError):
            self.connection.delete(alive_key(self.name))

    def _keep(self) -> None:
        swept = time.monotonic()
        while not self._keeper_stop.wait(KEEPER_INTERVAL_S):
            self._keep_once()
            if time.monotonic() - swept >= SWEEP_EVERY_S:
                swept = time.monotonic()
                self._sweep()

    def _sweep(self) -> None:
        """Remove the bot containers that dead workers of this host left running."""
        try:
            if removed := sweep_sandboxes():
                log.warning("worker %s: removed %d dead workers' container(s)", self.name, removed)
        except Exception:  # the engine may be away for a moment: the next sweep tries again
            log.exception("worker %s: sweeping the sandbox failed", self.name)

    def _keep_once(self) -> None:
        try:
            self.connection.set(alive_key(self.name), os.getpid(), ex=ALIVE_TTL_S)
            for queue in self.queues:
                for job_id in reap_abandoned(queue):
                    log.warning("worker %s: re-enqueued abandoned match %s", self.name, job_id)
                rescue_popped(queue)
                promote_due(queue)
        except RedisError as exc:  # Redis is away: RQ's loop waits for it, so do we
            log.warning("worker %s: keeper: %s", self.name, exc)
        except Exception:  # never let the keeper die quietly
            log.exception("worker %s: keeper round failed", self.name)


def run_worker(
    redis_url: str,
    queue_names: Sequence[str],
    *,
    burst: bool = False,
    max_jobs: int = DEFAULT_MAX_JOBS,
    restart: Sequence[str] | None = None,
    store_url: str | None = None,
) -> int:
    """Work the queues until stopped (or until empty with ``burst``); 0 on a clean stop.

    After ``max_jobs`` jobs the process re-executes ``restart`` (argv) when given. Games,
    house bots and the store at ``store_url`` (when given) are warmed up first.
    """
    warm_up(store_url)
    while True:
        try:
            redis = connect(redis_url)
            queues = [Queue(name, connection=redis) for name in queue_names]
            worker = MatchWorker(queues, connection=redis)
            worker.start_keeper()
            try:
                worker.work(burst=burst, max_jobs=max_jobs, logging_level="WARNING")
            finally:
                worker.stop_keeper()
            jobs_done = worker.jobs_played
        except RedisError as exc:
            log.warning("worker: Redis error (%s); restarting in %.0f s", exc, RESTART_PAUSE_S)
            time.sleep(RESTART_PAUSE_S)
            continue
        except Exception as exc:
            from saloon.worker.errors import QueueUnavailable

            if not isinstance(exc, QueueUnavailable) or burst:
                raise
            log.warning("worker: %s; retrying in %.0f s", exc, RESTART_PAUSE_S)
            time.sleep(RESTART_PAUSE_S)
            continue
        if burst or jobs_done < max_jobs or restart is None:
            close_stores()
            close_sandboxes()
            return 0
        log.info("worker: %d jobs played; restarting as a fresh process", jobs_done)
        close_stores()
        close_sandboxes()
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(restart[0], list(restart))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m saloon.worker.queue.worker``: run a match worker."""
    parser = argparse.ArgumentParser(prog="saloon worker", description=__doc__.splitlines()[0])
    add_worker_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    return run_from_args(args, list(argv or sys.argv[1:]))


def run_from_args(args: argparse.Namespace, worker_argv: Sequence[str]) -> int:
    """Run a worker with the options of :func:`add_worker_arguments`; after ``max_jobs`` it
    restarts as ``python -m saloon.worker.queue.worker WORKER_ARGV``."""
    restart = [sys.executable, "-m", "saloon.worker.queue.worker", *worker_argv]
    return run_worker(
        args.redis,
        args.queue or [DEFAULT_QUEUE],
        burst=args.burst,
        max_jobs=args.max_jobs,
        restart=restart,
        store_url=args.store,
    )


if __name__ == "__main__":
    raise SystemExit(main())
