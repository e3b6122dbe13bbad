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
  (saloon.worker.queue.reap_abandoned); the same thread re-enqueues jobs a worker popped
  but never started (rescue_popped) and promotes due retries;
* **restart after N jobs** (``--max-jobs``, default :data:`DEFAULT_MAX_JOBS`): the worker
  then re-executes itself as a fresh process, so nothing a job leaks (memory, threads,
  file descriptors) outlives N matches;
* **Redis blips**: RQ's dequeue loop reconnects with backoff; an error outside it restarts
  the worker object after a pause (the abandoned job is reaped and retried).
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

from redis import Redis
from redis.client import Pipeline
from redis.exceptions import RedisError
from rq import Queue, SimpleWorker
from rq.job import Job
from rq.utils import now
from rq.worker import WorkerStatus

from saloon.worker.cli_season import add_worker_arguments
from saloon.worker.jobs import close_stores, warm_up
from saloon.worker.play import close_sandboxes
from saloon.worker.queue import (
    ALIVE_TTL_S,
    alive_key,
    connect,
    promote_due,
    reap_abandoned,
    rescue_popped,
)
from saloon.worker.queue_defaults import DEFAULT_MAX_JOBS, DEFAULT_QUEUE

log = logging.getLogger(__name__)

#: Seconds between the keeper thread's rounds (alive key, reaping, due retries).
KEEPER_INTERVAL_S = 1.0
#: Pause before a worker restarts after losing Redis outside RQ's own reconnect loop.
RESTART_PAUSE_S = 1.0
#: Seconds a worker blocks waiting for a job before it looks around (the worker's TTL - 15).
WORKER_TTL_S = 30
#: RQ refreshes its worker key (TTL: WORKER_TTL_S + 60 s) three times per job, three Redis
#: round trips each; once per this many seconds is plenty (bench/seasons.py: ~2-4 ms a job).
HEARTBEAT_EVERY_S = 1.0


class MatchWorker(SimpleWorker):
    """A non-forking RQ worker with an alive key and a reaper (see the module docstring)."""

    #: The state was set (IDLE) but not yet written to Redis (see set_state).
    _state_unsaved = False

    def __init__(self, queues: Sequence[Queue], connection: Redis, **kw: object) -> None:
        super().__init__(list(queues), connection=connection, worker_ttl=WORKER_TTL_S, **kw)  # type: ignore[arg-type]
        self._keeper_stop = threading.Event()
        self._keeper: threading.Thread | None = None
        #: Jobs this worker ran (RQ keeps its own counters in Redis only).
        self.jobs_played = 0

    def execute_job(self, job: Job, queue: Queue) -> None:
        """Run the job in this process (SimpleWorker), counting it."""
        self.jobs_played += 1
        super().execute_job(job, queue)

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
        an unchanged state is not written again, and IDLE after a job (BUSY) rides on the
        next pipelined heartbeat: the suspension check at the top of RQ's loop, right
        after the job and before the next dequeue.
        """
        if pipeline is None and state == self._state:
            return
        if pipeline is None and state == WorkerStatus.IDLE and self._state == WorkerStatus.BUSY:
            self._state = state
            self._state_unsaved = True
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
        while not self._keeper_stop.wait(KEEPER_INTERVAL_S):
            self._keep_once()

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
    """``python -m saloon.worker.worker_main``: run a match worker."""
    parser = argparse.ArgumentParser(prog="saloon worker", description=__doc__.splitlines()[0])
    add_worker_arguments(parser)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    return run_from_args(args, list(argv or sys.argv[1:]))


def run_from_args(args: argparse.Namespace, worker_argv: Sequence[str]) -> int:
    """Run a worker with the options of :func:`add_worker_arguments`; after ``max_jobs`` it
    restarts as ``python -m saloon.worker.worker_main WORKER_ARGV``."""
    restart = [sys.executable, "-m", "saloon.worker.worker_main", *worker_argv]
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
