"""The match job under a real worker on the real Redis: its claim names the worker."""

from __future__ import annotations

import uuid
from pathlib import Path

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.queue.worker import MatchWorker
from saloon.worker.seasons.run import create, start
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store.store import Store


def test_a_played_match_names_the_worker_that_played_it(redis_url: str, tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    sid = f"n{uuid.uuid4().hex[:6]}"
    queue = SeasonQueue(connect(redis_url), f"test-mj-{uuid.uuid4().hex[:8]}")
    players = ("house:greedy", "house:random", "house:random#2")
    try:
        with Store.open(url) as store:
            create(store, SeasonSpec(sid, "seas-of-strife-v1", players, seats=3, seed=1))
            start(store, queue, sid, url)
            worker = MatchWorker([queue.queue], connection=queue.redis)
            worker.work(burst=True)
            rows = [store.scheduled_match(m.match_id) for m in store.scheduled(sid)]
            assert rows and all(r is not None for r in rows)
            assert {(r.status.value, r.detail) for r in rows if r} == {("done", worker.name)}
    finally:
        queue.purge()
