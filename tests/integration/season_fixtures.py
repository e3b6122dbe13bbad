"""Fixtures of the tests that run seasons on real workers: a PostgreSQL schema, an RQ queue
of their own, worker processes started here and stopped by pid."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.worker.queue.season_queue import SeasonQueue, connect
from tests import services
from tests.databases import postgres_schema


@pytest.fixture
def pg_url() -> Iterator[str]:
    with postgres_schema("seasons") as url:
        yield url


@pytest.fixture
def queue_name(redis_url: str) -> Iterator[str]:
    name = f"test-seasons-{uuid.uuid4().hex[:8]}"
    yield name
    SeasonQueue(connect(redis_url), name).purge()


class Workers:
    """Worker processes this test started (stopped by pid at the end)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(
        self, redis_url: str, queue: str, *extra: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        """A worker on ``queue`` (``env``: variables added to this process's for it)."""
        log = open(self.tmp / f"worker-{len(self.procs)}.log", "wb")  # noqa: SIM115
        argv = [sys.executable, "-m", "saloon.worker.queue.worker", "--redis", redis_url]
        proc = subprocess.Popen(
            [*argv, "--queue", queue, *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env} if env else None,
        )
        log.close()
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.tmp.glob("worker-*")))

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    ws = Workers(tmp_path)
    yield ws
    ws.stop()


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on (now)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PrivateRedis:
    """A redis-server of this test's own on its own port, WITHOUT persistence (a restart
    loses every job), started and stopped by pid."""

    def __init__(self) -> None:
        services.require("redis-server")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(
            [*argv, "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                connect(self.url)
                return
            except Exception:
                time.sleep(0.05)
        raise AssertionError("redis-server did not answer")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    redis = PrivateRedis()
    redis.start()
    try:
        yield redis
    finally:
        redis.kill()
