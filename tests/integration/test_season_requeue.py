"""The store is the truth, Redis only carries jobs: a Redis WITHOUT persistence killed
mid-season loses every job, and whoever watches the store (the workers' keepers, or
``saloon serve`` when no worker knows the store) enqueues again what the store says is
pending, with no one running ``season start``; ``season status`` says when matches are
pending but queued nowhere. A private redis-server, real workers, a real arena server,
real PostgreSQL."""

from __future__ import annotations

import io
import logging
import signal
import time
import uuid
from argparse import Namespace
from pathlib import Path

import pytest

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.cli import cmd_status
from saloon.worker.seasons.run import create, progress, start
from saloon.worker.store.store import Store

from .arena_fixtures import start_arena
from .season_fixtures import PrivateRedis, Workers, pg_url, private_redis, workers
from .test_season_failures import private_slow_bot, recorded_once, season

__all__ = ["pg_url", "private_redis", "workers"]

#: The keepers look every 10 s; the issue's bound is a minute.
HEAL_S = 60.0


def slow_players(tmp_path: Path) -> tuple[str, ...]:
    """A season's entries whose matches last long enough to be caught mid-season (a slow
    path bot: ~0.3 s a match; with one match a job, ~5 s for 24 matches on 2 workers)."""
    return (str(private_slow_bot(tmp_path)), "house:random", "house:greedy", "house:random#2")


def _status(store_url: str, redis: PrivateRedis, queue: str, season_id: str) -> str:
    out = io.StringIO()
    args = Namespace(
        season_id=season_id, follow=False, timeout=0, store=store_url, redis=redis.url, queue=queue
    )
    cmd_status(args, out)
    return out.getvalue()


def test_a_season_whose_redis_restarted_empty_completes_with_no_one_starting_it(
    pg_url: str, private_redis: PrivateRedis, workers: Workers, tmp_path: Path
) -> None:
    sid = f"q{uuid.uuid4().hex[:6]}"
    queue = f"requeue-{uuid.uuid4().hex[:6]}"
    with Store.open(pg_url) as store:
        total = len(create(store, season(sid, slow_players(tmp_path), rounds=2)))
        start(store, SeasonQueue(connect(private_redis.url), queue), sid, pg_url, batch=1)

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


def test_with_the_server_the_only_one_looking_a_season_whose_redis_restarted_completes(
    pg_url: str,
    private_redis: PrivateRedis,
    workers: Workers,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    """Workers started without ``--store`` that have run no job know no store: only
    ``saloon serve`` (its keeper, every 10 s) can enqueue again what Redis lost."""
    caplog.set_level(logging.WARNING, logger="saloon.worker.seasons.run")
    sid = f"s{uuid.uuid4().hex[:6]}"
    queue = f"requeue-{uuid.uuid4().hex[:6]}"
    arena = start_arena(pg_url, private_redis.url, queue_name=queue)
    try:
        with Store.open(pg_url) as store:
            total = len(create(store, season(sid, slow_players(tmp_path), rounds=2)))
            start(store, SeasonQueue(connect(private_redis.url), queue), sid, pg_url, batch=1)

            # 1. Workers without --store play the first matches, then leave (they finish
            # the match they are playing).
            first = [workers.start(private_redis.url, queue) for _ in range(2)]
            deadline = time.monotonic() + HEAL_S
            while progress(store, sid).done < 3 and time.monotonic() < deadline:
                time.sleep(0.1)
            for proc in first:
                proc.send_signal(signal.SIGTERM)
            for proc in first:
                proc.wait(HEAL_S)
            done_before = progress(store, sid).done
            assert 3 <= done_before < total, f"not mid-season: {done_before}\n{workers.logs()}"

            # 2. Redis dies and comes back empty; fresh workers without --store know no
            # store until they run a job, so the server's keeper must enqueue the rest.
            private_redis.kill()
            time.sleep(1.0)
            private_redis.start()
            restarted = time.time()
            for _ in range(2):
                workers.start(private_redis.url, queue)
            while not progress(store, sid).finished and time.time() - restarted < HEAL_S:
                time.sleep(0.2)
            took = time.time() - restarted
            assert progress(store, sid).finished, f"{progress(store, sid)}\n{workers.logs()}"
            recorded_once(store, sid)
            assert "queued nowhere" not in _status(pg_url, private_redis, queue, sid)
    finally:
        arena.server.stop(0)
    # The server (this process) enqueued them again, soon after Redis came back.
    healed = [
        r.created
        for r in caplog.records
        if sid in r.getMessage() and "queued nowhere; enqueued again" in r.getMessage()
    ]
    assert healed, f"the server enqueued nothing again\n{workers.logs()}"
    assert healed[0] - restarted < HEAL_S / 2, f"the server waited {healed[0] - restarted:.0f} s"
    print(f"season completed {took:.1f} s after Redis restarted ({done_before}/{total} before)")
