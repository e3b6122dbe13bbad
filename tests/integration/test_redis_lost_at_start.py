"""Redis lost at the moment a worker starts a job (a real redis-server of the test's own,
killed between the job's pop and its start transaction): the platform's outage, not the
match's. Found in CI (test_redis_and_the_database_down_at_once_heal, 2026-12-04): the
start transaction's ConnectionError was RQ's failure of the job, a retry spent and RQ's
traceback in the worker's log."""

from __future__ import annotations

import logging

import pytest
from rq import Queue, Retry
from rq.job import Job, JobStatus

from saloon.worker.queue.rq_internals import PipelinedWorker, put_back_unplaced
from saloon.worker.queue.season_queue import connect

from .season_fixtures import PrivateRedis, private_redis

__all__ = ["private_redis"]


def played() -> str:
    """The job: what a match job returns, without the match."""
    return "played"


def test_redis_lost_as_a_job_starts_puts_it_back_with_its_retries_and_no_traceback(
    private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture
) -> None:
    redis = connect(private_redis.url)
    queue = Queue("lost-at-start", connection=redis)
    job = queue.enqueue(played, retry=Retry(max=3), job_id="lost-at-start-1")
    lost: list[str] = []

    class LosingWorker(PipelinedWorker):
        def prepare_job_execution(
            self, job: Job, remove_from_intermediate_queue: bool = False
        ) -> None:
            private_redis.kill()  # Redis gone after the pop, before the start's transaction
            super().prepare_job_execution(job, remove_from_intermediate_queue)

        def on_redis_lost(self, reason: str) -> None:
            lost.append(reason)

    worker = LosingWorker([queue], connection=redis)
    with caplog.at_level(logging.INFO):
        worker.execute_job(job, queue)
    assert lost and lost[0].startswith("ConnectionError"), lost
    said = [r for r in caplog.records if r.name.startswith(("rq", "saloon"))]
    assert not [r for r in said if r.exc_info or r.levelno >= logging.ERROR], caplog.text
    assert "Traceback" not in caplog.text

    private_redis.start()  # back, empty (no persistence): the job comes from the worker
    assert put_back_unplaced(redis) == ["lost-at-start-1"]
    assert queue.get_job_ids() == ["lost-at-start-1"]
    back = Job.fetch("lost-at-start-1", connection=redis)
    assert back.get_status() is JobStatus.QUEUED and back.retries_left == 3  # none spent

    assert PipelinedWorker([queue], connection=redis).work(burst=True, logging_level="WARNING")
    done = Job.fetch("lost-at-start-1", connection=redis)
    assert done.get_status() is JobStatus.FINISHED and done.return_value() == "played"
