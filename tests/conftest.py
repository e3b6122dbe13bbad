"""Fixtures shared by every test folder: the real services (see tests/services.py)."""

from __future__ import annotations

import pytest

from tests import services


@pytest.fixture
def redis_url() -> str:
    """The machine's Redis (skips loudly without one; fails under CI=true)."""
    services.require("redis")
    return f"redis://{services.REDIS_HOST}:{services.REDIS_PORT}/0"


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
