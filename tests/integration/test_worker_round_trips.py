"""The match worker's own Redis traffic, on the real Redis: round trips per job, and the job
it pops ahead (in a job's finishing transaction) never lost or run twice.

The worker runs in this process (``MatchWorker.work``, burst mode) on trivial jobs of this
module, over a Redis client that counts the round trips the worker's thread makes.
"""

from __future__ import annotations

import statistics
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from redis import Redis
from redis.connection import Connection, ConnectionPool
from rq import Queue
from rq.job import Job, JobStatus
from rq.suspension import resume, suspend

from saloon.worker.queue.season_queue import SeasonQueue
from saloon.worker.queue.worker import MatchWorker

#: The ids of the jobs this module's job function ran, in order (the worker is in-process).
ran: list[str] = []


def note(tag: str, suspend_after: bool = False) -> str:
    """The job: note that it ran; optionally suspend the workers (``rq suspend``)."""
    ran.append(tag)
    if suspend_after:
        suspend(Redis.from_url(_URL[0]))
    return tag


_URL: list[str] = []


class CountingConnection(Connection):
    """A Redis connection that counts the round trips (sends) made from the main thread."""

    sends: list[int] = [0]

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if threading.current_thread() is threading.main_thread():
            CountingConnection.sends[0] += 1
        super().send_packed_command(command, check_health)


class CountingWorker(MatchWorker):
    """A MatchWorker that notes the round trip count as each job starts."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.marks: list[int] = []

    def execute_job(self, job: Job, queue: Queue) -> None:
        self.marks.append(CountingConnection.sends[0])
        super().execute_job(job, queue)


@pytest.fixture
def queue(redis_url: str) -> Iterator[Queue]:
    _URL[:] = [redis_url]
    ran.clear()
    pool = ConnectionPool.from_url(redis_url, connection_class=CountingConnection)
    redis = Redis(connection_pool=pool)
    name = f"test-rt-{uuid.uuid4().hex[:8]}"
    yield Queue(name, connection=redis)
    resume(redis)
    SeasonQueue(redis, name).purge()
    pool.disconnect()


def enqueue(queue: Queue, count: int, **kw: Any) -> list[str]:
    ids = [f"rt-{uuid.uuid4().hex[:6]}-{k}" for k in range(count)]
    for k, job_id in enumerate(ids):
        extra = kw if k == 3 else {}
        queue.enqueue(note, args=(job_id,), kwargs=extra, job_id=job_id, result_ttl=60)
    return ids


def leftovers(queue: Queue) -> tuple[list[str], list[str]]:
    """(ids still queued, ids parked in RQ's intermediate queue)."""
    return queue.get_job_ids(), queue.intermediate_queue.get_job_ids()


def test_a_job_costs_two_round_trips_once_the_worker_is_running(queue: Queue) -> None:
    ids = enqueue(queue, 12)
    worker = CountingWorker([queue], connection=queue.connection)
    worker.work(burst=True)
    assert ran == ids
    assert all(
        Job.fetch(i, connection=queue.connection).get_status() == JobStatus.FINISHED for i in ids
    )
    # Job k's start to job k+1's start: its start transaction, its finishing transaction
    # (which pops job k+1), and a worker heartbeat at most once a second. RQ's own loop
    # takes 8: suspension check, dequeue (2), two start transactions, WATCH, dependents,
    # the finishing transaction.
    per_job = [b - a for a, b in zip(worker.marks, worker.marks[1:], strict=False)]
    assert statistics.median(per_job) == 2, per_job
    assert max(per_job) <= 3, per_job
    assert leftovers(queue) == ([], [])


def test_a_worker_at_its_last_job_pops_no_next_one(queue: Queue) -> None:
    ids = enqueue(queue, 6)
    MatchWorker([queue], connection=queue.connection).work(burst=True, max_jobs=3)
    assert ran == ids[:3]
    # The other three wait in the queue, in order; none is parked half-dequeued.
    assert leftovers(queue) == (ids[3:], [])


def test_a_suspended_worker_pops_nothing_ahead(queue: Queue) -> None:
    ids = enqueue(queue, 6, suspend_after=True)
    # Job 3 suspends the workers (rq suspend) while it runs: its finishing transaction
    # sees the flag and pops nothing; a burst worker then stops.
    MatchWorker([queue], connection=queue.connection).work(burst=True)
    assert ran == ids[:4]
    assert leftovers(queue) == (ids[4:], [])


def test_a_worker_asked_to_stop_puts_the_popped_job_back(queue: Queue) -> None:
    ids = enqueue(queue, 5)

    class StopsAfterTwo(MatchWorker):
        def execute_job(self, job: Job, queue: Queue) -> None:
            super().execute_job(job, queue)
            if self.jobs_played == 2:
                # As a warm shutdown (SIGTERM) does once the job is over; the finishing
                # transaction already popped job 3.
                self._stop_requested = True

    worker = StopsAfterTwo([queue], connection=queue.connection)
    worker.work(burst=False)
    assert ran == ids[:2]
    # Job 3 is back at the head of the queue, not parked in the intermediate queue.
    assert leftovers(queue) == (ids[2:], [])
