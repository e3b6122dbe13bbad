"""Every use Saloon makes of RQ's internals, in one module, written against RQ 3.0.0.

Why one module: the match worker keeps RQ's bookkeeping (registries, retries, callbacks,
``rq info``) but sends it in two Redis transactions a job, and its keepers repair within
seconds what RQ repairs after minutes. Both need more of RQ than its documented API; all
of that lives here, pyproject.toml pins RQ to :data:`RQ_VERSION`, and
tests/unit/test_rq_internals.py names what changed when an upgrade moves any of it.
Outside this module Saloon uses only RQ's documented API: ``Queue`` (``enqueue``,
``enqueue_in``, ``enqueue_job``, ``get_job_ids``, ``remove``, ``delete``, its registries),
the registries' ``get_job_ids``, ``remove``, ``schedule`` and ``get_scheduled_time``,
``Job`` (``fetch``, ``exists``, ``get_status``, ``delete`` and its documented fields),
``Retry``, ``Callback``, ``get_current_job``, and ``SimpleWorker`` / ``Worker``
(construct, ``work``, ``all``, ``get_state``).

What this module relies on, as of RQ 3.0.0:

* **Overridden** ``BaseWorker`` / ``SimpleWorker`` methods (each keeps RQ's signature; RQ
  calls them in this order per job: ``check_for_suspension``,
  ``dequeue_job_and_maintain_ttl``, ``execute_job`` -> ``prepare_execution`` ->
  ``perform_job`` -> ``prepare_job_execution`` -> the job -> ``handle_execution_ended``
  -> ``handle_job_success`` -> ``set_state(IDLE)``, then ``heartbeat``; ``teardown`` when
  ``work`` ends): ``work``, ``execute_job``, ``prepare_execution``,
  ``prepare_job_execution``, ``handle_job_success``, ``handle_execution_ended``,
  ``dequeue_job_and_maintain_ttl``, ``check_for_suspension``, ``set_state``,
  ``heartbeat``, ``teardown``, ``_install_signal_handlers`` (RQ's SIGINT/SIGTERM
  handlers, ``request_stop`` then ``request_force_stop``).
* **Private** attributes and methods: ``BaseWorker._state``, ``BaseWorker._stop_requested``,
  ``Job._status``, ``Job._handle_success``.
* **Undocumented** methods and fields: ``BaseWorker.executions``, ``default_result_ttl``,
  ``last_heartbeat``, ``key``, ``job_class``, ``serializer``, ``queue_class``, ``log``,
  ``get_heartbeat_ttl``, ``get_redis_server_version``, ``increment_successful_job_count``,
  ``increment_total_working_time``, ``cleanup_execution``; ``Job.prepare_for_execution``,
  ``cleanup``, ``get_result_ttl``, ``restore``, ``retry``, ``set_status``, ``key``,
  ``repeats_left``, ``redis_server_version``, ``ended_at``, ``last_heartbeat``;
  ``Execution.create`` and its ``id`` / ``created_at``; ``rq.rate_limit.release_slot``;
  ``rq.utils.now``; ``rq.worker.WorkerStatus``; ``Queue.key``,
  ``Queue.intermediate_queue_key``, ``Queue.intermediate_queue`` (``IntermediateQueue``:
  ``key``, ``get_job_ids``, ``set_first_seen``, ``get_first_seen``,
  ``get_first_seen_key``); ``BaseRegistry.key``,
  ``StartedJobRegistry.get_job_and_execution_ids``,
  ``ScheduledJobRegistry.get_jobs_to_schedule``, ``FailedJobRegistry.add(exc_string=)``;
  ``rq.suspension.WORKERS_SUSPENDED``, ``rq.worker_registration.WORKERS_BY_QUEUE_KEY``.
* **Key layout** (the Lua scripts and the keepers write RQ's keys themselves): the queue
  ``rq:queue:<name>``, a list of job ids; RQ's dequeue LMOVEs an id into the
  intermediate queue ``rq:queue:<name>:intermediate`` and the job's start LREMs it from
  there; ``<intermediate>:first_seen:<job id>`` marks; the started registry
  ``rq:wip:<name>``, a sorted set of ``<job id>:<execution id>`` (an execution id is 32
  hex digits); a job is the hash ``rq:job:<id>`` (HGETALL then ``Job.restore``); the
  suspension flag ``rq:suspended`` (``rq suspend``); the queue's worker set
  ``rq:workers:<name>``.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
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
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

#: The RQ release this module was written against (pyproject.toml pins exactly this one).
RQ_VERSION = "3.0.0"

#: RQ refreshes its worker key (TTL: the worker TTL + 60 s) three times per job, three
#: Redis round trips each; once per this many seconds is plenty.
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


class PipelinedWorker(SimpleWorker):
    """A non-forking RQ worker whose job costs two Redis round trips (see the module
    docstring): one transaction starts a job, one finishes it and pops the next."""

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

    def __init__(
        self,
        queues: Sequence[Queue],
        connection: Redis,
        on_stop_signal: Callable[[], None] | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(list(queues), connection=connection, **kw)
        #: Jobs this worker ran (RQ keeps its own counters in Redis only).
        self.jobs_played = 0
        self._on_stop_signal = on_stop_signal

    def _install_signal_handlers(self) -> None:
        """RQ's SIGINT/SIGTERM handling (the first: warm shutdown, a second: cold), telling
        ``on_stop_signal`` first: a stop requested while Redis is away ends RQ's loop with
        a Redis error from its teardown, which must not read as "restart the worker"."""

        def on_signal(signum: int, frame: Any) -> None:
            if self._on_stop_signal is not None:
                self._on_stop_signal()
            self.request_stop(signum, frame)  # type: ignore[no-untyped-call]

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)

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


def drop_started(queue: Queue, job_id: str) -> int:
    """Remove every execution of ``job_id`` from the queue's started registry; how many were
    (of several keepers, the one whose removal counts handles the job)."""
    registry = queue.started_job_registry
    entries = [
        f"{j}:{e}" for j, e in registry.get_job_and_execution_ids(cleanup=False) if j == job_id
    ]
    return int(registry.connection.zrem(registry.key, *entries)) if entries else 0


def retry_or_fail(job: Job, queue: Queue, exc_string: str) -> None:
    """Retry a job whose run was lost as RQ retries a failed one (a retry spent, its
    backoff in the scheduled registry), or, with no retry left, fail it for good."""
    with queue.connection.pipeline() as pipe:
        if job.retries_left and job.retries_left > 0:
            job.retry(queue, pipe)
        else:
            job.set_status(JobStatus.FAILED, pipeline=pipe)
            queue.failed_job_registry.add(job, exc_string=exc_string, pipeline=pipe)
        pipe.execute()


def popped_job_ids(queue: Queue) -> list[str]:
    """Ids that RQ's dequeue moved to the queue's intermediate queue, not started yet."""
    return list(queue.intermediate_queue.get_job_ids())


def first_seen(queue: Queue, job_id: str) -> datetime | None:
    """When a look at the intermediate queue first saw ``job_id`` there (this look, if none
    did before): RQ's own mark, which its intermediate-queue cleanup reads too."""
    inter = queue.intermediate_queue
    inter.set_first_seen(job_id)
    seen: datetime | None = inter.get_first_seen(job_id)
    return seen


def take_popped(queue: Queue, job_id: str) -> bool:
    """Take ``job_id`` out of the intermediate queue; False if it was not there (another
    keeper, or its worker's start, took it first)."""
    return bool(queue.connection.lrem(queue.intermediate_queue.key, 1, job_id))


def due_job_ids(queue: Queue) -> list[str]:
    """Ids in the queue's scheduled registry whose time has come (retries past backoff)."""
    return list(queue.scheduled_job_registry.get_jobs_to_schedule())


def queue_keys(queue: Queue) -> list[str | bytes]:
    """The Redis keys RQ keeps for ``queue`` besides the queue and its jobs: its
    registries, its intermediate queue and that queue's first-seen marks, its worker set."""
    registries = [
        queue.started_job_registry,
        queue.finished_job_registry,
        queue.failed_job_registry,
        queue.scheduled_job_registry,
        queue.deferred_job_registry,
        queue.canceled_job_registry,
    ]
    inter = queue.intermediate_queue
    seen = list(queue.connection.scan_iter(inter.get_first_seen_key("*")))
    return [*(r.key for r in registries), inter.key, WORKERS_BY_QUEUE_KEY % queue.name, *seen]
