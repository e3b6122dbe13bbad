"""Fixtures shared by every test folder: the real services (see tests/services.py)."""

from __future__ import annotations

import os

import pytest

from tests import services

# gRPC's fork handlers off in the test processes, as the saloon command does (see
# saloon.arena.cli.main): a test process runs gRPC and starts processes (saloon play,
# workers, servers); with them on, a child forked while gRPC's threads ran aborted before
# it could exec (SIGABRT, "epoll_wait error: Bad file descriptor", in CI).
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

#: The order of the suite's folders: the CPU-bound checks first, then the integration tests
#: (services, clocks); tests marked ``kit_images`` last of all (see below).
_FOLDER_RANK = {"conformance": 0, "unit": 1, "integration": 2}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the tests that need the other languages' runtime images last.

    ``deploy/dev.sh test`` builds those images (minutes each on a fresh machine) in the
    background while the rest of the suite runs; each such test waits for the build
    (:func:`tests.services.wait_for_kit_images`). The order is otherwise collection order,
    folders ranked by :data:`_FOLDER_RANK`; a module's tests stay together.
    """

    def rank(item: pytest.Item) -> tuple[int, int]:
        parts = item.nodeid.split("/")
        folder = parts[1] if len(parts) > 2 and parts[0] == "tests" else ""
        last = 1 if item.get_closest_marker("kit_images") else 0
        return (last, _FOLDER_RANK.get(folder, 1))

    items.sort(key=rank)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("kit_images"):
        services.wait_for_kit_images()


@pytest.fixture
def redis_url() -> str:
    """The machine's Redis, a database of this test process's own (skips loudly without
    one; fails under CI=true): see :func:`tests.services.redis_database`."""
    services.require("redis")
    return services.redis_url()


@pytest.fixture
def postgres_url() -> str:
    """The machine's PostgreSQL database ``test`` (skips loudly without it; fails in CI)."""
    services.require("postgres")
    return services.POSTGRES_URL


@pytest.fixture
def docker_engine() -> None:
    """A Docker engine that answers (skips loudly without one; fails under CI=true)."""
    services.require("docker")


@pytest.fixture
def as_root() -> None:
    """The tests run as root (skips loudly otherwise; fails under CI=true)."""
    services.require("root")


@pytest.fixture
def pid_namespace() -> None:
    """Bot processes get a PID namespace here (skips loudly otherwise; fails in CI)."""
    services.require("pid-namespace")
