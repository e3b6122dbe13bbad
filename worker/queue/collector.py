"""The queue's Prometheus collector: its state read from Redis when Prometheus scrapes
(a worker's ``--metrics`` and ``saloon serve``'s /metrics register it; the families are
listed in docs/operator-guide.md, "Metrics")."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from redis import Redis
from rq import Queue, Worker

from saloon.worker.queue.season_queue import SeasonQueue

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

log = logging.getLogger(__name__)


class QueueCollector(Collector):
    """The queue's state when Prometheus scrapes, read from Redis (RQ's public registries):
    ``saloon_queue_jobs{queue,state}`` (queued, started, scheduled for a retry, deferred,
    finished and failed kept by RQ), ``saloon_workers_alive{queue}`` (workers whose alive
    key exists) and ``saloon_redis_up`` (1 when Redis answered)."""

    STATES = ("queued", "started", "scheduled", "deferred", "finished", "failed")

    def __init__(self, redis_url: str, queue_names: Sequence[str]) -> None:
        self.redis_url = redis_url
        self.queue_names = list(queue_names)
        self._redis: Any = None

    def _connection(self) -> Any:
        if self._redis is None:
            self._redis = Redis.from_url(self.redis_url, socket_timeout=2, socket_connect_timeout=2)
        return self._redis

    def collect(self) -> Iterator[Metric]:
        jobs = GaugeMetricFamily(
            "saloon_queue_jobs", "Jobs in the queue now, by state.", labels=["queue", "state"]
        )
        alive = GaugeMetricFamily(
            "saloon_workers_alive", "Workers of the queue that are alive.", labels=["queue"]
        )
        up = GaugeMetricFamily("saloon_redis_up", "1 when Redis answered the scrape.")
        try:
            for name, counts, workers in self.read():
                for state in self.STATES:
                    jobs.add_metric([name, state], counts[state])
                alive.add_metric([name], workers)
            up.add_metric([], 1)
        except Exception as exc:  # Redis away: say so, do not fail the scrape
            log.debug("metrics: queue: %s", exc)
            up.add_metric([], 0)
            self._redis = None
        yield from (jobs, alive, up)

    def read(self) -> list[tuple[str, dict[str, int], int]]:
        """Per queue: its counts by state and its workers alive."""
        redis = self._connection()
        out = []
        for name in self.queue_names:
            queue = Queue(name, connection=redis)
            counts = {
                "queued": queue.count,
                "started": queue.started_job_registry.count,
                "scheduled": queue.scheduled_job_registry.count,
                "deferred": queue.deferred_job_registry.count,
                "finished": queue.finished_job_registry.count,
                "failed": queue.failed_job_registry.count,
            }
            names = [w.name for w in Worker.all(queue=queue)]
            workers = len(SeasonQueue(redis, name).alive(names))
            out.append((name, counts, workers))
        return out

    def describe(self) -> Iterator[Metric]:
        return iter(())
