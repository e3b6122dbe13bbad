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
  handlers, ``request_stop`` then ``request_force_stop``), and, for a job that failed
  only because the platform was away (:meth:`PipelinedWorker.puts_back`),
  ``handle_exception`` and ``handle_job_failure`` (RQ calls them in that order from
  ``_finalize_failure``, after the job's failure callback).
* **Private** attributes and methods: ``BaseWorker._state``, ``BaseWorker._stop_requested``,
  ``Job._status``, ``Job._handle_success``.
* **RQ's log lines**: the worker's reconnect message in its dequeue loop and its pubsub
  thread ("could not connect to Redis instance", logger ``rq.worker``), and its work
  loop's "found an unhandled exception" when that is Redis lost, which
  :class:`PipelinedWorker` hands to :meth:`PipelinedWorker.on_redis_lost` instead of
  printing it at every retry; ``max_connection_wait_time``, the longest pause between
  those retries; ``pubsub_thread`` (redis-py's ``PubSubWorkerThread``, ``stop``).
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
  ``rq:workers:<name>``; a job's status is the ``status`` field of its hash
  (:func:`job_statuses`).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
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

from saloon.worker.errors import RedisLostAtStart

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
#: The longest pause (seconds) between the reconnects of RQ's dequeue loop while Redis is
#: away (RQ's default doubles up to a minute, so a worker could idle that long after Redis
#: came back).
REDIS_RECONNECT_MAX_S = 4.0
#: RQ's dequeue loop's line at each failed reconnect (RQ 3.0.0), a format string...
_RQ_RECONNECT_LINE = "Worker %s: could not connect to Redis instance"
#: ... and its work loop's when anything else raised, Redis lost outside the dequeue too.
_RQ_UNHANDLED_LINE = "Worker %s: found an unhandled exception, quitting..."
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
    #: RQ's dequeue loop retries a lost Redis at most this many seconds apart.
    max_connection_wait_time = REDIS_RECONNECT_MAX_S
    #: The job RQ is failing that :meth:`puts_back` claimed (see handle_job_failure).
    _put_back_id: str | None = None
    #: The id of the job this worker is running ("" between jobs).
    current_job_id = ""

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
        _ReconnectLines.install(self)
        return bool(super().work(*args, **kwargs))

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Run the job in this process (SimpleWorker), counting it."""
        self.jobs_played += 1
        self.current_job_id = job.id
        try:
            super().execute_job(job, queue)
        finally:
            self.current_job_id = ""

    # -- hooks of subclasses (Saloon's own methods, not RQ's) ----------------------------

    def puts_back(self, job: Job, exc: BaseException | None) -> bool:
        """Whether ``job``, which raised ``exc``, failed only because the platform was away:
        then it goes back to the head of its queue, no retry spent, and RQ neither logs
        its traceback nor records a failure. Called once the job's failure callback ran.
        None here: every failure is RQ's."""
        del job, exc
        return False

    def before_dequeue(self) -> None:
        """Called before each dequeue (a subclass may wait here for the platform)."""

    def on_redis_lost(self, reason: str) -> None:
        """RQ's dequeue loop lost Redis and retries (at most REDIS_RECONNECT_MAX_S apart):
        called at each failed reconnect, in place of RQ's own log line."""
        self.log.warning("Worker %s: Redis is away (%s); reconnecting", self.name, reason)

    def release_popped(self) -> None:
        """Put the job popped ahead (not started) back at the head of its queue."""
        popped, self._next = self._next, None
        if popped is not None:
            job, queue = popped
            with contextlib.suppress(RedisError):
                self.connection.eval(_PUT_BACK, 2, queue.key, queue.intermediate_queue_key, job.id)

    # -- a job that failed --------------------------------------------------------------

    def handle_exception(self, job: Job, *exc_info: Any) -> None:
        """RQ's logging of a failed job's traceback (and its exception handlers), unless
        :meth:`puts_back` claims the job, or Redis was lost as it started
        (RedisLostAtStart: the worker's one outage line instead): then the job goes back to
        its queue (handle_job_failure)."""
        exc = exc_info[1] if len(exc_info) > 1 else None
        if isinstance(exc, RedisLostAtStart):  # Redis lost as the job started: the outage
            self.on_redis_lost(str(exc))
        elif not self.puts_back(job, exc):
            self._put_back_id = None
            super().handle_exception(job, *exc_info)
            return
        self._put_back_id = job.id

    def handle_job_failure(
        self,
        job: Job,
        queue: Queue,
        started_job_registry: StartedJobRegistry | None = None,
        exc_string: str = "",
        execution: Execution | None = None,
    ) -> None:
        """RQ's failure of a job (a retry spent, or failed for good), unless
        :meth:`puts_back` claimed it: then its execution is cleaned up and the job goes
        back to the head of its queue, QUEUED, its retries untouched, in one transaction.
        With Redis away too, the job is kept in this process (:func:`put_back_unplaced`
        puts it back once Redis answers, before anything reaps it as abandoned)."""
        if self._put_back_id != job.id:
            super().handle_job_failure(job, queue, started_job_registry, exc_string, execution)
            return
        self._put_back_id = None
        try:
            with self.connection.pipeline() as pipe:
                pipe.multi()  # explicit: enqueue_job asks for it and refuses it later
                self.cleanup_execution(job, pipeline=pipe, execution=execution)
                queue.enqueue_job(job, pipeline=pipe, at_front=True)
                pipe.execute()
        except RedisError as exc:
            self.on_redis_lost(f"{type(exc).__name__}: {exc}")
            with _unplaced_lock:
                _unplaced.append((job, queue.name))
            return
        release_slot(job)

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
        except RedisError as exc:  # the job never ran: back to its queue (handle_exception)
            raise RedisLostAtStart(f"{type(exc).__name__}: {exc}") from exc
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
            try:
                replies = pipe.execute()
            except RedisError as exc:
                # Redis went away while the job's success was written: the match is in the
                # store (the truth; a job replayed records it once), and the outage is the
                # worker's one line, not a traceback and a failure of a job that was played.
                self.on_redis_lost(f"{type(exc).__name__}: {exc}")
                return
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
        """The job the last one's finishing transaction popped, else RQ's dequeue (after
        :meth:`before_dequeue`)."""
        self.before_dequeue()
        popped, self._next = self._next, None
        if popped is None:
            return super().dequeue_job_and_maintain_ttl(timeout, max_idle_time)
        job, _ = popped
        job.redis_server_version = self.get_redis_server_version()  # type: ignore[no-untyped-call]
        self.log.info("Worker %s: %s: %s", self.name, job.origin, job.id)
        return popped

    def teardown(self) -> None:
        """RQ's end of the work loop; a job popped ahead and not started goes back to the
        head of its queue (else the keepers' rescue_popped would, after a few seconds).
        RQ's pubsub thread is stopped even when Redis is away (RQ's teardown fails then
        before it stops the thread, which lived on, reconnecting every 2 s for ever)."""
        self.release_popped()
        try:
            super().teardown()  # type: ignore[no-untyped-call]
        finally:
            thread = self.pubsub_thread
            if thread is not None and thread.is_alive():
                thread.stop()

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
        this inside its ``except``) keeps RQ's own write; with Redis away too, the rest of
        the failure's handling still runs (the job's callback, :meth:`puts_back`).
        """
        if sys.exc_info()[1] is not None:
            try:
                super().handle_execution_ended(job, queue, heartbeat_ttl)
            except RedisError as exc:
                self.on_redis_lost(f"{type(exc).__name__}: {exc}")
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


class _ReconnectLines(logging.Filter):
    """Hands RQ's "could not connect to Redis instance" lines (one per reconnect of its
    dequeue loop, and every 2 s from its pubsub thread), and its work loop's traceback
    when Redis was lost outside the dequeue, to the latest worker's
    :meth:`PipelinedWorker.on_redis_lost` instead. One filter a process, on RQ's worker
    logger (a worker object that Redis's loss ended may still say it from a thread)."""

    _installed: _ReconnectLines | None = None
    _lock = threading.Lock()

    def __init__(self, worker: PipelinedWorker) -> None:
        super().__init__()
        self.worker = worker

    @classmethod
    def install(cls, worker: PipelinedWorker) -> None:
        """Route the lines to ``worker`` from now on."""
        with cls._lock:
            if cls._installed is None:
                cls._installed = cls(worker)
                worker.log.addFilter(cls._installed)
            cls._installed.worker = worker

    def filter(self, record: logging.LogRecord) -> bool:
        if not isinstance(record.msg, str):
            return True
        if record.msg.startswith(_RQ_RECONNECT_LINE):
            args = record.args if isinstance(record.args, tuple) else ()
            self.worker.on_redis_lost(str(args[1]) if len(args) > 1 else record.getMessage())
            return False
        exc = record.exc_info[1] if record.exc_info else None
        if record.msg == _RQ_UNHANDLED_LINE and isinstance(exc, RedisConnectionError):
            # Redis lost between jobs: the worker restarts (saloon.worker.queue.worker);
            # the outage is the worker's one line, not this traceback.
            self.worker.on_redis_lost(f"{type(exc).__name__}: {exc}")
            return False
        return True


def job_statuses(redis: Redis, job_ids: Sequence[str]) -> list[str | None]:
    """The status of each job of ``job_ids`` as Redis holds it (None: no such job), in one
    round trip (a field of each job's hash; Job.fetch would read the whole hash)."""
    if not job_ids:
        return []
    with redis.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hget(Job.key_for(job_id), "status")
        found = pipe.execute()
    return [None if s is None else (s.decode() if isinstance(s, bytes) else str(s)) for s in found]


#: Jobs a worker of this process could not put back (Redis away too): (job, queue name).
_unplaced: list[tuple[Job, str]] = []
_unplaced_lock = threading.Lock()


def put_back_unplaced(connection: Redis) -> list[str]:
    """Put back at the head of their queues the jobs this process's workers could not
    put back while Redis was away (see PipelinedWorker.handle_job_failure); their ids.

    Each leaves the started registry (a worker restarted after losing Redis has a new
    name: the keepers would reap the job as abandoned, a retry spent) and goes back
    QUEUED with its retries untouched; a Redis that came back empty gets the job again
    (its hash written anew). Call it once Redis answers, before the keeper's first round.
    What fails stays for the next call."""
    with _unplaced_lock:
        todo, _unplaced[:] = list(_unplaced), []
    done = []
    for k, (job, name) in enumerate(todo):
        queue = Queue(name, connection=connection)
        try:
            drop_started(queue, job.id)
            job.connection = connection
            queue.enqueue_job(job, at_front=True)
        except RedisError:
            with _unplaced_lock:
                _unplaced[:0] = todo[k:]
            break
        done.append(job.id)
    return done


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
