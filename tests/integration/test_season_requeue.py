"""The store is the truth, Redis only carries jobs: a Redis WITHOUT persistence killed
mid-season loses every job, and the workers' keepers enqueue again what the store says is
pending, with no one running ``season start``; ``season status`` says when matches are
pending but queued nowhere. A private redis-server, real workers, real PostgreSQL."""

from __future__ import annotations

import io
import time
import uuid
from argparse import Namespace

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.cli import cmd_status
from saloon.worker.seasons.run import create, progress, start
from saloon.worker.store.store import Store

from .season_fixtures import PrivateRedis, Workers, pg_url, private_redis, workers
from .test_season_failures import recorded_once, season

__all__ = ["pg_url", "private_redis", "workers"]

#: The keepers look every 10 s; the issue's bound is a minute.
HEAL_S = 60.0


def _status(store_url: str, redis: PrivateRedis, queue: str, season_id: str) -> str:
    out = io.StringIO()
    args = Namespace(
        season_id=season_id, follow=False, timeout=0, store=store_url, redis=redis.url, queue=queue
    )
    cmd_status(args, out)
    return out.getvalue()


def test_a_season_whose_redis_restarted_empty_completes_with_no_one_starting_it(
    pg_url: str, private_redis: PrivateRedis, workers: Workers
) -> None:
    sid = f"q{uuid.uuid4().hex[:6]}"
    queue = f"requeue-{uuid.uuid4().hex[:6]}"
    players = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")
    with Store.open(pg_url) as store:
        total = len(create(store, season(sid, players, rounds=2)))
        start(store, SeasonQueue(connect(private_redis.url), queue), sid, pg_url)

        # 1. No worker yet; Redis restarts empty: status says the matches are queued nowhere.
        private_redis.kill()
        private_redis.start()
        text = _status(pg_url, private_redis, queue, sid)
        assert f"{total} pending matches are queued nowhere" in text, text
        p = progress(store, sid, SeasonQueue(connect(private_redis.url), queue))
        assert p.unqueued == total

        # 2. Workers that know the store: their keepers enqueue the season again...
        for _ in range(2):
            workers.start(private_redis.url, queue, "--store", pg_url)
        deadline = time.monotonic() + HEAL_S
        while progress(store, sid).done < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        done_before = progress(store, sid).done
        assert 3 <= done_before < total, f"not mid-season: {done_before}\n{workers.logs()}"

        # 3. ... and once more after Redis dies mid-season and comes back empty.
        private_redis.kill()
        time.sleep(1.0)
        private_redis.start()
        deadline = time.monotonic() + HEAL_S
        while not progress(store, sid).finished and time.monotonic() < deadline:
            time.sleep(0.2)
        assert progress(store, sid).finished, f"{progress(store, sid)}\n{workers.logs()}"
        recorded_once(store, sid)
        assert "queued nowhere" not in _status(pg_url, private_redis, queue, sid)
        assert "lost matches enqueued again" in workers.logs()
    workers.stop()
