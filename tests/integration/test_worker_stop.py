"""A worker's start and stop: SIGTERM stops it while Redis is away, and it starts without
Alembic's set-up chatter. Real processes, a private redis-server stopped by pid."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from saloon.worker.queue.season_queue import alive_key, connect

from .season_fixtures import PrivateRedis, Workers, private_redis, workers

__all__ = ["private_redis", "workers"]

#: Bound of each wait below (each takes about a second on a quiet machine).
WAIT_S = 20.0


def _wait_alive(redis: PrivateRedis, workers: Workers) -> None:
    conn = connect(redis.url)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if list(conn.scan_iter(alive_key("*"))):
            return
        time.sleep(0.1)
    raise AssertionError(f"the worker never came up:\n{workers.logs()}")


def test_a_worker_stops_on_sigterm_while_redis_is_down(
    private_redis: PrivateRedis, workers: Workers, tmp_path: Path
) -> None:
    proc = workers.start(private_redis.url, "stopping", "--store", str(tmp_path / "w.db"))
    _wait_alive(private_redis, workers)
    private_redis.kill()
    time.sleep(3.0)  # the worker is retrying now: inside RQ's loop or its own
    proc.send_signal(signal.SIGTERM)
    try:
        code = proc.wait(WAIT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running {WAIT_S} s after SIGTERM:\n{workers.logs()}") from None
    assert code == 0, workers.logs()


def test_a_worker_stops_on_sigterm_while_it_waits_to_reconnect(
    private_redis: PrivateRedis, workers: Workers
) -> None:
    private_redis.kill()  # no Redis at all: the worker retries its connect
    proc = workers.start(private_redis.url, "stopping")
    deadline = time.monotonic() + WAIT_S
    while "retrying in" not in workers.logs() and time.monotonic() < deadline:
        time.sleep(0.1)  # started (a loaded machine takes seconds to import it all)
    assert "retrying in" in workers.logs(), workers.logs()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(WAIT_S) == 0, workers.logs()


def test_a_worker_starting_on_a_new_store_prints_no_alembic_setup_lines(
    private_redis: PrivateRedis, workers: Workers, tmp_path: Path
) -> None:
    proc = workers.start(private_redis.url, "quiet", "--store", str(tmp_path / "new.db"))
    _wait_alive(private_redis, workers)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(WAIT_S) == 0
    logs = workers.logs()
    assert "alembic" not in logs.lower(), logs
