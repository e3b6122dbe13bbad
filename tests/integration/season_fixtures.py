"""Fixtures of the tests that run seasons on real workers: a PostgreSQL schema, an RQ queue
of their own, worker processes started here and stopped by pid, and, for outages, a
private redis-server and a private PostgreSQL cluster, started and stopped by pid."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
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
        self,
        redis_url: str,
        queue: str,
        *extra: str,
        env: dict[str, str] | None = None,
        prefix: Sequence[str] = (),
    ) -> subprocess.Popen[bytes]:
        """A worker on ``queue`` (``env``: variables added to this process's for it;
        ``prefix``: what runs it, such as an OwnPidNamespace's nsenter)."""
        log = open(self.tmp / f"worker-{len(self.procs)}.log", "wb")  # noqa: SIM115
        argv = [*prefix, sys.executable, "-m", "saloon.worker.queue.worker"]
        proc = subprocess.Popen(
            [*argv, "--redis", redis_url, "--queue", queue, *extra],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env} if env else None,
        )
        log.close()
        self.procs.append(proc)
        return proc

    def log(self, proc: subprocess.Popen[bytes]) -> str:
        """What the worker ``proc`` (one of :attr:`procs`) wrote."""
        return (self.tmp / f"worker-{self.procs.index(proc)}.log").read_text(errors="replace")

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


class PrivatePostgres:
    """A PostgreSQL cluster of this test's own: initdb in a fresh folder, its own port and
    socket folder, run as an unprivileged user when the tests run as root (PostgreSQL
    refuses root). :meth:`crash` is ``pg_ctl stop -m immediate`` (the postmaster and every
    backend killed, no shutdown checkpoint: crash recovery at the next start); every
    other stop ends the postmaster by its pid. Each wait is bounded."""

    def __init__(self) -> None:
        services.require("postgres-server")
        bindir = services.postgres_bindir()
        assert bindir is not None
        self.bindir = Path(bindir)
        self.port = free_port()
        self.user = services.POSTGRES_OS_USER if os.geteuid() == 0 else None
        # Not under pytest's tmp_path: its folders are root's alone (mode 0700).
        self.root = Path(tempfile.mkdtemp(prefix="saloon-pg-"))
        self.data = self.root / "data"
        self.url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self.pid: int | None = None
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")

    def _run(self, tool: str, *args: str, timeout: float = 60) -> None:
        done = subprocess.run(
            [str(self.bindir / tool), *args],
            user=self.user,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"{tool} {args}: {done.stdout}{done.stderr}"

    def start(self) -> None:
        """Start the cluster and wait until it accepts connections (30 s at most)."""
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        self._run(
            "pg_ctl", "start", "-D", str(self.data), "-w", "-t", "30", "-o", options,
            "-l", str(self.root / "server.log"),
        )  # fmt: skip
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])

    def crash(self) -> None:
        """``pg_ctl stop -m immediate``: the database gone at once, as in a crash."""
        self._run("pg_ctl", "stop", "-D", str(self.data), "-m", "immediate", "-w", "-t", "30")
        self._wait_gone()

    def stop(self) -> None:
        """Stop the postmaster by its pid (fast shutdown; SIGKILL after 10 s)."""
        if self.pid is None or not _alive(self.pid):
            return
        os.kill(self.pid, signal.SIGINT)  # PostgreSQL's fast shutdown
        if not self._wait_gone(10):
            os.kill(self.pid, signal.SIGKILL)
            self._wait_gone(10)

    def _wait_gone(self, timeout: float = 30) -> bool:
        deadline = time.monotonic() + timeout
        while self.pid is not None and _alive(self.pid):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def remove(self) -> None:
        """Stop it and remove its files."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (not a zombie)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    pg = PrivatePostgres()
    try:
        pg.start()
        yield pg
    finally:
        pg.remove()
