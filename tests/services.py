"""Real services the integration tests need: Redis, PostgreSQL, a Docker engine, and a
headless browser (chromium) for the HTML pages; and what some tests need of the machine:
the redis-server binary (a private Redis), PostgreSQL's initdb and pg_ctl (a private
cluster, crashed on purpose), root, PID namespaces (the process sandbox).

A test that needs one calls :func:`require` (or uses the fixtures in ``tests/conftest.py``).
On a laptop without the service the test is skipped with a loud reason; under ``CI=true``
a missing service FAILS the test instead, so CI can never go green by skipping.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Callable

import pytest

REDIS_HOST, REDIS_PORT = "127.0.0.1", 6379
#: Databases of a stock redis-server (``databases 16``): 0 for a run without xdist (and the
#: suite's exclusive tests, which run alone), 1..15 for xdist's workers.
REDIS_DATABASES = 16


def redis_database(worker: str | None = None) -> int:
    """The Redis database of the test process ``worker`` (xdist's ``gw<N>``; default: this
    process's ``PYTEST_XDIST_WORKER``): ``1 + N`` (wrapping past 15), 0 without xdist.

    RQ's job ids are global in a Redis database and a season's job ids are its match ids
    (``<season>-<index>``): two tests running at once in two xdist workers with one season
    or ladder id (two modules both used ladder ``cl``) shared jobs on one database, and one
    test's matches waited on the other's jobs until its deadline (CI, 2026-12-04:
    test_one_worker_and_three_workers_give_identical_boards ran 240 s with nothing played).
    One database per worker keeps tests that run at once apart; a worker's tests run one
    after another, each on a queue of its own (docs/operator-guide.md: one Redis database
    per arena, for the same reason)."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "") if worker is None else worker
    if not name.startswith("gw") or not name[2:].isdigit():
        return 0
    return 1 + int(name[2:]) % (REDIS_DATABASES - 1)


def redis_url() -> str:
    """The URL of this test process's database of the machine's Redis."""
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/{redis_database()}"


#: The test database the machine provides (trust auth); tests make their own schemas in it.
POSTGRES_URL = os.environ.get(
    "SALOON_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def in_ci() -> bool:
    """True when running under CI (CI=true): missing services fail instead of skipping."""
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _redis_answers() -> str | None:
    try:
        with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=1) as s:
            s.sendall(b"PING\r\n")
            if s.recv(16).startswith(b"+PONG"):
                return None
            return "Redis at 127.0.0.1:6379 did not answer PING"
    except OSError as exc:
        return f"no Redis at 127.0.0.1:6379 ({exc})"


def _postgres_answers() -> str | None:
    try:
        import sqlalchemy

        engine = sqlalchemy.create_engine(POSTGRES_URL)
        try:
            with engine.connect() as conn:
                conn.execute(sqlalchemy.text("select 1"))
        finally:
            engine.dispose()
        return None
    except Exception as exc:  # any failure to reach it is a reason to skip or fail
        return f"no PostgreSQL at {POSTGRES_URL} ({type(exc).__name__}: {exc})"


def _docker_answers() -> str | None:
    try:
        import docker

        client = docker.from_env(timeout=10)
        try:
            client.ping()
        finally:
            client.close()
        return None
    except Exception as exc:  # any failure to reach it is a reason to skip or fail
        return f"no Docker engine answers ({type(exc).__name__}: {exc})"


def chromium_binary() -> str | None:
    """The headless browser the HTML tests render with (Debian's ``chromium``), or None."""
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    return None


def _chromium_runs() -> str | None:
    binary = chromium_binary()
    if binary is None:
        return "no chromium on PATH (Debian: apt-get install chromium; deploy/dev.sh does it)"
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{binary} --version failed ({type(exc).__name__}: {exc})"
    if done.returncode != 0:
        return f"{binary} --version exited {done.returncode}: {done.stderr.strip()[:200]}"
    return None


def _redis_server_here() -> str | None:
    if shutil.which("redis-server") is None:
        return "no redis-server on PATH for a private Redis (Debian: apt-get install redis-server)"
    return None


def postgres_bindir() -> str | None:
    """The folder of PostgreSQL's server programs (initdb, pg_ctl): on PATH, or Debian's
    /usr/lib/postgresql/<version>/bin (the newest), or None."""
    import glob

    if path := shutil.which("pg_ctl"):
        return os.path.dirname(path)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    return os.path.dirname(found[-1]) if found else None


def _version_key(path: str) -> tuple[int, ...]:
    version = path.split("/")[-3]
    return tuple(int(p) for p in version.split(".") if p.isdigit())


#: The unprivileged user a private PostgreSQL cluster runs as when the tests run as root
#: (PostgreSQL refuses root).
POSTGRES_OS_USER = "postgres"


def _postgres_server_here() -> str | None:
    if postgres_bindir() is None:
        return (
            "no initdb/pg_ctl for a private PostgreSQL (Debian: apt-get install postgresql; "
            "looked on PATH and in /usr/lib/postgresql/*/bin)"
        )
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam(POSTGRES_OS_USER)
        except KeyError:
            return f"running as root and no {POSTGRES_OS_USER!r} user to run PostgreSQL as"
    return None


def _root() -> str | None:
    return None if os.geteuid() == 0 else f"the tests run as uid {os.geteuid()}, not root"


def _pid_namespace() -> str | None:
    from saloon.referee.process.confine import Containment, containment

    if containment() is Containment.PROCESS_GROUP:
        return "no PID namespace for bot processes here (unshare --pid fails, or no util-linux)"
    return None


def _prometheus_here() -> str | None:
    import shutil

    for tool in ("prometheus", "promtool"):
        if shutil.which(tool) is None:
            return f"no {tool} on PATH (Debian: apt-get install prometheus; deploy/dev.sh does it)"
    return None


_CHECKS: dict[str, Callable[[], str | None]] = {
    "redis": _redis_answers,
    "postgres": _postgres_answers,
    "docker": _docker_answers,
    "chromium": _chromium_runs,
    "redis-server": _redis_server_here,
    "postgres-server": _postgres_server_here,
    "root": _root,
    "pid-namespace": _pid_namespace,
    "prometheus": _prometheus_here,
}
_cache: dict[str, str | None] = {}


def missing(service: str) -> str | None:
    """Why ``service`` (redis, postgres, docker, chromium, redis-server, postgres-server,
    root, pid-namespace, prometheus) is unusable, or None if it works."""
    if service not in _cache:
        _cache[service] = _CHECKS[service]()
    return _cache[service]


def require(service: str) -> None:
    """Skip (loudly) when ``service`` is missing; under CI=true fail instead."""
    reason = missing(service)
    if reason is None:
        return
    if in_ci():
        pytest.fail(f"CI=true and {reason}: this test must run in CI", pytrace=False)
    pytest.skip(f"SKIPPED, NEEDS {service.upper()}: {reason}")


#: Set by ``deploy/dev.sh test``: the file where the background build of the runtime images
#: of the other languages (kits/*) writes its exit status once done. Tests marked
#: ``kit_images`` run last and wait for it (tests/conftest.py), so the suite's first
#: minutes overlap those builds on a fresh machine.
KIT_IMAGES_RC_ENV = "SALOON_KIT_IMAGES_RC"
#: The longest a test waits for that build: a fresh Go, C++ and Java image each take minutes.
KIT_IMAGES_WAIT_S = 1500.0


def wait_for_kit_images(
    rc_path: str | None = None, bound_s: float = KIT_IMAGES_WAIT_S, poll_s: float = 1.0
) -> None:
    """Wait (at most ``bound_s``) until the background build of the kit images is done.

    Nothing to wait for when no build was started (the variable is unset, as when pytest is
    run by hand). A build that failed, or did not end within the bound, fails the test under
    CI=true and skips it loudly elsewhere, naming the build's log.
    """
    import time

    path = rc_path if rc_path is not None else os.environ.get(KIT_IMAGES_RC_ENV)
    if not path:
        return
    deadline = time.monotonic() + bound_s
    while not os.path.exists(path):
        if time.monotonic() >= deadline:
            _kit_images_unusable(f"the runtime images' build did not end within {bound_s:.0f} s")
            return
        time.sleep(poll_s)
    with open(path) as f:
        status = f.read().strip()
    if status != "0":
        _kit_images_unusable(f"the runtime images' build failed (exit status {status})")


def _kit_images_unusable(reason: str) -> None:
    log = os.path.join(os.path.dirname(os.environ.get(KIT_IMAGES_RC_ENV, "")), "kit-images.log")
    why = f"{reason}; see {log}"
    if in_ci():
        pytest.fail(f"CI=true and {why}", pytrace=False)
    pytest.skip(f"SKIPPED, NEEDS THE RUNTIME IMAGES: {why}")
