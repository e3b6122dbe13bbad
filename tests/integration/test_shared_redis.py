"""Two arenas (two stores) on one Redis database with one season id: RQ's job ids are
global in a database and a season's job ids are its match ids, so one's matches wait for
the other's jobs, say so in the log, and are enqueued by the keepers once those jobs end:
both seasons finish, each match recorded once, in its own store. (docs/operator-guide.md
asks for a database per arena; this is what happens when an operator did not.)

Found as a CI failure (2026-12-04): two test modules ran a ladder ``cl`` at once on one
Redis database, and one waited for the other's jobs until its deadline with nothing
played (its workers knew no store to look in). tests/services.redis_database now gives each
xdist worker a database of its own.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import create, progress, start
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

from .season_fixtures import Workers
from .test_season_failures import recorded_once, season, wait_done

HOUSE = ("house:random", "house:greedy", "house:search-25")


def test_a_season_id_two_stores_share_on_one_redis_database_finishes_in_both(
    redis_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    season_id = f"shared-{uuid.uuid4().hex[:6]}"  # one id in both stores (unique to this test)
    redis = connect(redis_url)
    queue_a = SeasonQueue(redis, f"test-shared-a-{uuid.uuid4().hex[:8]}")
    queue_b = SeasonQueue(redis, f"test-shared-b-{uuid.uuid4().hex[:8]}")
    workers = Workers(tmp_path)
    try:
        with (
            postgres_schema("shared_a") as url_a,
            postgres_schema("shared_b") as url_b,
            Store.open(url_a) as store_a,
            Store.open(url_b) as store_b,
        ):
            spec = season(season_id, HOUSE)
            scheduled = create(store_a, spec)
            assert create(store_b, spec) == scheduled
            assert start(store_a, queue_a, season_id, url_a).added == len(scheduled)
            with caplog.at_level(logging.WARNING, logger="saloon.worker.queue.season_queue"):
                assert start(store_b, queue_b, season_id, url_b).added == 0  # A's jobs hold
            assert f"is live on queue {queue_a.queue.name} of this Redis database" in caplog.text

            # B's worker first, with its store: its keeper looks there every 10 s. A's
            # worker plays A's jobs; then B's matches have no live job and are enqueued.
            workers.start(redis_url, queue_b.queue.name, "--store", url_b)
            assert progress(store_b, season_id).done == 0
            workers.start(redis_url, queue_a.queue.name)
            wait_done(store_a, season_id, workers)
            wait_done(store_b, season_id, workers, timeout=60)
            assert len(recorded_once(store_a, season_id)) == len(scheduled)
            assert len(recorded_once(store_b, season_id)) == len(scheduled)
    finally:
        workers.stop()
        queue_a.purge()
        queue_b.purge()
