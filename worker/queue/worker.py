"""``saloon worker``: an RQ worker that plays season matches (``python -m`` runs it too).

Worker class: :class:`MatchWorker`, a non-forking RQ worker
(saloon.worker.queue.rq_internals.PipelinedWorker: RQ's bookkeeping of a job in one
transaction to start it and one to finish it and pop the next). A forking worker runs
each job in a fresh child (RQ's isolation), but costs more per job and, above all, a
forked work-horse dies with its job, so it cannot keep a warm pool of bot containers (or
open store connections) from one match to the next. The isolation RQ's fork gives is
kept other ways:

* **time limits**: every job has RQ's timeout (SIGALRM in the worker) set to the match's
  wall-clock cap plus a margin; the referee's own cap fires first and records the match;
* **health**: a keeper thread refreshes the worker's alive key every second; when the
  process dies or hangs past the job timeout, other workers re-enqueue its job
  (saloon.worker.queue.season_queue.reap_abandoned); the same thread re-enqueues jobs a
  worker popped but never started (rescue_popped) and promotes due retries; RQ's own
  upkeep (registry cleaning every ``maintenance_interval``) runs in RQ's loop as ever;
* **the store is the truth**: every REQUEUE_EVERY_S one keeper per queue (a Redis lock)
  enqueues again what the running seasons of its stores (``--store``, and every store a
  job named) say is pending and no live job holds (saloon.worker.queue.keepers.requeue_lost):
  a Redis restarted without persistence loses the jobs, not the season, and a job RQ
  failed for good while the store was away is enqueued again; the same look settles a
  running season with nothing left to play (done or failed);
* **the platform's outages** (saloon.worker.queue.outages): a job that failed only
  because the store was away goes back to the head of its queue, no retry spent, and the
  worker takes no job until the store answers (asked with a bounded backoff); each
  outage of the store or of Redis is one line in the log when it starts and one when it
  is over;
* **restart after N jobs** (``--max-jobs``, default :data:`DEFAULT_MAX_JOBS`): the worker
  then re-executes itself as a fresh process, so nothing a job leaks (memory, threads,
  file descriptors) outlives N matches;
* **Redis blips**: RQ's dequeue loop reconnects with backoff (at most
  rq_internals.REDIS_RECONNECT_MAX_S apart); an error outside it restarts the worker
  object after a pause (the abandoned job is reaped and retried);
* **stopping**: SIGTERM / SIGINT stop the worker at once when it is idle, after its match
  when it is playing one (RQ's warm shutdown; a second signal: cold), and at once while
  Redis is away (the restart loop never restarts a worker asked to stop).

docs/seasons.md has the measured costs (per job, Redis round trips).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue
from rq.job import Job

from saloon.referee.shown import log_to_stderr
from saloon.worker.errors import StoreUnavailable, WorkerError
from saloon.worker.logs import configure_logging, set_log_context
from saloon.worker.matches.play import close_sandboxes, sweep_sandboxes
from saloon.worker.queue.defaults import DEFAULT_MAX_JOBS, DEFAULT_QUEUE, add_worker_arguments
from saloon.worker.queue.jobs import (
    WARM_UP_MATCH_ID,
    close_stores,
    open_store_urls,
    platform_away,
    store_for,
    warm_up,
)
from saloon.worker.queue.keepers import requeue_lost
from saloon.worker.queue.outages import PROBE_FIRST_S, PROBE_MAX_S, REDIS, STORE, Outages
from saloon.worker.queue.rq_internals import PipelinedWorker, put_back_unplaced
from saloon.worker.queue.season_queue import (
    ALIVE_TTL_S,
    SeasonQueue,
    alive_key,
    connect,
    playing_key,
    promote_due,
    reap_abandoned,
    rescue_popped,
)
from saloon.worker.store.config import resolve_url

log = logging.getLogger(__name__)

#: Seconds between the keeper thread's rounds (alive key, reaping, due retries).
KEEPER_INTERVAL_S = 1.0
#: Seconds between the keeper's sweeps for bot processes and containers of dead workers of
#: this host.
SWEEP_EVERY_S = 5.0
#: Seconds between the keepers' looks for pending matches no queue holds (one keeper per
#: queue looks, under a lock of this lifetime).
REQUEUE_EVERY_S = 10.0
REQUEUE_LOCK_PREFIX = "saloon:requeue:"
#: Pause before a worker restarts after losing Redis outside RQ's own reconnect loop.
RESTART_PAUSE_S = 1.0
#: Seconds a worker blocks waiting for a job before it looks around (the worker's TTL - 15).
WORKER_TTL_S = 30
#: While it waits for the store, a worker refreshes RQ's heartbeat this often (seconds).
HEARTBEAT_PAUSE_S = 1.0


class StopRequested(Exception):
    """SIGTERM or SIGINT reached the worker outside RQ's work loop (connecting, pausing)."""


class _StopFlag:
    """Whether this process was asked to stop (SIGTERM/SIGINT), and the handlers that say so."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._before: list[tuple[int, Any]] = []

    def set(self) -> None:
        self.event.set()

    def install_outside(self) -> None:
        """Handlers for the time outside RQ's loop (RQ installs its own inside): set the
        flag and interrupt whatever waits (a connect, a pause). Main thread only."""
        if threading.current_thread() is not threading.main_thread():
            return
        if not self._before:
            self._before = [(sig, signal.getsignal(sig)) for sig in (signal.SIGTERM, signal.SIGINT)]

        def on_signal(_signum: int, _frame: Any) -> None:
            self.event.set()
            raise StopRequested

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)

    def restore(self) -> None:
        """The handlers there were before :meth:`install_outside`."""
        for sig, handler in self._before:
            signal.signal(sig, handler)
        self._before = []


class MatchWorker(PipelinedWorker):
    """A non-forking RQ worker with an alive key and a reaper (see the module docstring)."""

    def __init__(
        self,
        queues: Sequence[Queue],
        connection: Redis,
        store_url: str | None = None,
        outages: Outages | None = None,
        redis_url: str = "",
        **kw: Any,
    ) -> None:
        super().__init__(queues, connection=connection, worker_ttl=WORKER_TTL_S, **kw)
        self._store_url = store_url
        self._redis_url = redis_url
        self._keeper_stop = threading.Event()
        self._keeper: threading.Thread | None = None
        #: The outages of the store and Redis this process lives through (kept across
        #: the restarts of the worker object).
        self.outages = outages if outages is not None else Outages(log)
        self.outages.who = f"worker {self.name}"

    # -- the platform away ----------------------------------------------------------------

    def puts_back(self, job: Job, exc: BaseException | None) -> bool:
        """A job that failed only because the store was away goes back to the queue (no
        retry spent) and the store counts as away until it answers (before_dequeue)."""
        if not platform_away(exc):
            return False
        url = resolve_url(str(job.args[1])) if len(job.args) > 1 else ""
        self.outages.away(STORE, url, f"{type(exc).__name__}: {exc}", put_back=1)
        return True

    def before_dequeue(self) -> None:
        """Take no job while a store is away: ask it again after PROBE_FIRST_S, twice as
        long each time, at most PROBE_MAX_S apart, until it answers (the job popped ahead,
        if any, goes back to the queue meanwhile). RQ's stop signals end the wait."""
        urls = self.outages.urls_away(STORE)
        if not urls:
            return
        pause = PROBE_FIRST_S
        if any(self.outages.flapping(STORE, url) for url in urls):
            # It failed again right after it answered (it takes connections but cannot
            # write?): the longest pause before each try, not a job a moment.
            self.release_popped()
            self._pause(PROBE_MAX_S)
        while urls := self.outages.urls_away(STORE):
            for url in urls:
                if self._store_answers(url):
                    self.outages.back(STORE, url)
            if not self.outages.urls_away(STORE):
                return
            self.release_popped()
            self._pause(pause)
            pause = min(pause * 2, PROBE_MAX_S)

    def _store_answers(self, url: str) -> bool:
        try:
            store_for(url).scheduled_match(WARM_UP_MATCH_ID)  # one light read
        except Exception as exc:  # away still (StoreUnavailable), or worse: ask again later
            self.outages.away(STORE, url, f"{type(exc).__name__}: {exc}")
            return False
        return True

    def _pause(self, seconds: float) -> None:
        """Wait ``seconds``, keeping RQ's heartbeat (a signal's StopRequested ends it)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, HEARTBEAT_PAUSE_S))
            try:
                self.heartbeat()
            except RedisError as exc:
                self.outages.away(REDIS, self._redis_url, f"{type(exc).__name__}: {exc}")

    def on_redis_lost(self, reason: str) -> None:
        """RQ's dequeue loop lost Redis: one line for the outage, not one per reconnect."""
        self.outages.away(REDIS, self._redis_url, reason)

    def start_keeper(self) -> None:
        """Start the keeper thread (alive key, abandoned jobs, due retries), once the jobs
        this process failed to put back while Redis was away are back in their queues."""
        for job_id in put_back_unplaced(self.connection):
            log.warning("worker %s: %s went back to its queue (Redis was away)", self.name, job_id)
        self._keep_once()
        self._keeper = threading.Thread(target=self._keep, name="saloon-keeper", daemon=True)
        self._keeper.start()

    def stop_keeper(self) -> None:
        """Stop the keeper thread and drop the alive key."""
        self._keeper_stop.set()
        if self._keeper is not None:
            self._keeper.join(5)
        with contextlib.suppress(RedisError):
            self.connection.delete(alive_key(self.name), playing_key(self.name))

    def _keep(self) -> None:
        swept = requeued = time.monotonic()
        while not self._keeper_stop.wait(KEEPER_INTERVAL_S):
            self._keep_once()
            if time.monotonic() - swept >= SWEEP_EVERY_S:
                swept = time.monotonic()
                self._sweep()
            if time.monotonic() - requeued >= REQUEUE_EVERY_S:
                requeued = time.monotonic()
                self._requeue()

    def _requeue(self) -> None:
        """Enqueue again the pending matches no queue holds (one keeper per queue)."""
        urls = set(open_store_urls())
        if self._store_url:
            urls.add(resolve_url(self._store_url))
        if not urls:
            return  # no store known yet: the first job (or --store) names one
        for queue in self.queues:
            try:
                lock = REQUEUE_LOCK_PREFIX + queue.name
                if not self.connection.set(lock, self.name, nx=True, ex=int(REQUEUE_EVERY_S)):
                    continue  # another worker's keeper looks this time
                season_queue = SeasonQueue(self.connection, queue.name)
                for url in sorted(urls):
                    try:
                        added = requeue_lost(store_for(url), season_queue, url)
                    except StoreUnavailable as exc:  # the work loop waits for it too
                        self.outages.away(STORE, url, f"{type(exc).__name__}: {exc}")
                        continue
                    self.outages.back(STORE, url)
                    if added:
                        log.warning("worker %s: %d lost matches enqueued again", self.name, added)
            except RedisError as exc:  # away for a moment: next time
                self.outages.away(REDIS, self._redis_url, f"{type(exc).__name__}: {exc}")
            except WorkerError as exc:
                log.warning("worker %s: re-enqueueing lost matches: %s", self.name, exc)
            except Exception:
                log.exception("worker %s: re-enqueueing lost matches failed", self.name)

    def _sweep(self) -> None:
        """Remove the bot processes and containers that dead workers of this host left."""
        try:
            if removed := sweep_sandboxes():
                log.warning(
                    "worker %s: removed %d bot process(es) or container(s) of dead workers",
                    self.name,
                    removed,
                )
        except Exception:  # the engine may be away for a moment: the next sweep tries again
            log.exception("worker %s: sweeping the sandbox failed", self.name)

    def _keep_once(self) -> None:
        try:
            with self.connection.pipeline(transaction=False) as pipe:
                pipe.set(alive_key(self.name), os.getpid(), ex=ALIVE_TTL_S)
                pipe.set(playing_key(self.name), self.current_job_id, ex=ALIVE_TTL_S)
                pipe.execute()
            self.outages.back(REDIS, self._redis_url)
            for queue in self.queues:
                for job_id in reap_abandoned(queue):
                    log.warning("worker %s: re-enqueued abandoned match %s", self.name, job_id)
                rescue_popped(queue)
                promote_due(queue)
        except RedisError as exc:  # Redis is away: RQ's loop waits for it, so do we
            self.outages.away(REDIS, self._redis_url, f"{type(exc).__name__}: {exc}")
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
    metrics: str = "",
) -> int:
    """Work the queues until stopped (or until empty with ``burst``); 0 on a clean stop.

    SIGTERM / SIGINT stop it (see the module docstring); with ``burst`` they end in
    KeyboardInterrupt, as a run in the foreground would.

    After ``max_jobs`` jobs the process re-executes ``restart`` (argv) when given. Games,
    house bots and the store at ``store_url`` (when given) are warmed up first. With
    ``metrics`` (HOST:PORT), Prometheus metrics are served there (saloon.worker.metrics).
    """
    from saloon.worker.errors import QueueUnavailable

    stop = _StopFlag()
    stop.install_outside()
    outages = Outages(log)
    if metrics:
        start_metrics(metrics, redis_url, queue_names)
    try:
        warm_up(store_url)
        while not stop.event.is_set():
            try:
                redis = connect(redis_url)
                outages.back(REDIS, redis_url)
                queues = [Queue(name, connection=redis) for name in queue_names]
                worker = MatchWorker(
                    queues,
                    connection=redis,
                    store_url=store_url,
                    outages=outages,
                    redis_url=redis_url,
                    on_stop_signal=stop.set,
                )
                set_log_context(worker=worker.name)
                worker.start_keeper()
                try:
                    worker.work(burst=burst, max_jobs=max_jobs, logging_level="WARNING")
                finally:
                    stop.install_outside()  # RQ's handlers are bound to the old worker
                    worker.stop_keeper()
                jobs_done = worker.jobs_played
            except (RedisError, QueueUnavailable) as exc:
                if stop.event.is_set():
                    break  # asked to stop while Redis is away: stop, do not retry
                if isinstance(exc, QueueUnavailable) and burst:
                    raise
                # One line for the outage (not one a restart); the next connect ends it.
                outages.away(REDIS, redis_url, f"{type(exc).__name__}: {exc}")
                stop.event.wait(RESTART_PAUSE_S)
                continue
            if stop.event.is_set() or burst or jobs_done < max_jobs or restart is None:
                break
            log.info("worker: %d jobs played; restarting as a fresh process", jobs_done)
            close_stores()
            close_sandboxes()
            sys.stdout.flush()
            sys.stderr.flush()
            os.execv(restart[0], list(restart))
    except StopRequested:
        pass
    finally:
        stop.restore()
        close_stores()
        close_sandboxes()
    if burst and stop.event.is_set():
        raise KeyboardInterrupt  # a season played here (`season run`) is interrupted
    return 0


def start_metrics(address: str, redis_url: str, queue_names: Sequence[str]) -> None:
    """Serve this worker's metrics on ``address`` (HOST:PORT), with its queues' state."""
    from saloon.worker.matches.play import warm_runtimes
    from saloon.worker.metrics import register_collector, serve_metrics, warm_gauge
    from saloon.worker.queue.collector import QueueCollector

    register_collector("queue", QueueCollector(redis_url, queue_names))
    warm_gauge(warm_runtimes)
    try:
        host, port = serve_metrics(address)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"saloon worker: cannot serve metrics on {address}: {exc}") from None
    log.info("worker: metrics on http://%s:%d/metrics", host, port)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m saloon.worker.queue.worker``: run a match worker."""
    parser = argparse.ArgumentParser(prog="saloon worker", description=__doc__.splitlines()[0])
    add_worker_arguments(parser)
    args = parser.parse_args(argv)
    if args.log_format == "json":
        configure_logging("json")
    else:
        log_to_stderr(logging.INFO, "%(asctime)s %(name)s: %(message)s")
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
        metrics=args.metrics,
    )


if __name__ == "__main__":
    raise SystemExit(main())
