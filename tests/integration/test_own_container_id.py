"""``own_container_id`` inside real containers: the id a worker labels its bots' containers
with (``saloon.parent``) is the one the engine gave its own container, on the engine's
default network and on the host's network with a host name of its own (the rehearsal's
workers, tests/integration/test_multi_host.py)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from saloon.worker.sandbox.images import base_tag

from .docker_fixtures import base_image_or_skip, open_test_sandbox

PRINT_ID = "from saloon.worker.sandbox.docker import own_container_id; print(own_container_id())"


@pytest.fixture
def client() -> Iterator[Any]:
    sandbox = open_test_sandbox()  # skips loudly (fails in CI) without an engine
    try:
        base_image_or_skip(sandbox)
        yield sandbox.client
    finally:
        sandbox.close()


@pytest.mark.parametrize(
    "options",
    [{}, {"network_mode": "host", "hostname": "worker-a"}],
    ids=["default-network", "host-network-own-hostname"],
)
def test_own_container_id_is_the_id_the_engine_gave(client: Any, options: dict[str, Any]) -> None:
    container = client.containers.create(
        base_tag(),
        command=["python3", "-c", PRINT_ID],
        labels={"saloon.test": f"own-id-{uuid.uuid4().hex[:8]}"},
        **options,
    )
    try:
        container.start()
        assert container.wait(timeout=60)["StatusCode"] == 0, container.logs()
        printed = container.logs(stdout=True, stderr=False).decode().strip()
        assert printed == container.id
        assert len(printed) == 64
    finally:
        with contextlib.suppress(Exception):
            container.remove(v=True, force=True)
