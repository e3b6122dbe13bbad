"""Shared by the Docker sandbox tests: a sandbox of its own owner id, the images they need,
and what they left."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from saloon.sdk.languages import Language
from saloon.worker.errors import BaseImageMissing, SandboxError
from saloon.worker.sandbox.docker import DockerSandbox
from tests import services


def open_test_sandbox(**kw: object) -> DockerSandbox:
    """A Docker sandbox with a fresh owner id (skips loudly, or fails in CI, without Docker)."""
    services.require("docker")
    try:
        return DockerSandbox(owner=f"test-{uuid.uuid4().hex[:10]}", **kw)  # type: ignore[arg-type]
    except SandboxError as exc:
        if services.in_ci():
            pytest.fail(f"CI=true and the Docker sandbox cannot open: {exc}", pytrace=False)
        pytest.skip(f"SKIPPED, NEEDS THE DOCKER SANDBOX: {exc}")


def owned_containers(sandbox: DockerSandbox) -> list[str]:
    """Ids of every container (running or not) carrying the sandbox's owner label."""
    found = sandbox.client.api.containers(
        all=True, filters={"label": ["saloon=1", f"saloon.owner={sandbox.owner}"]}
    )
    return [c["Id"] for c in found]


def base_image_or_skip(sandbox: DockerSandbox) -> None:
    """Skip (fail in CI) when the bot base image is not built."""
    from saloon.worker.sandbox.images import base_image_id

    try:
        base_image_id(sandbox.client, sandbox.base)
    except BaseImageMissing as exc:
        if services.in_ci():
            pytest.fail(f"CI=true and {exc}", pytrace=False)
        pytest.skip(f"SKIPPED, NEEDS THE BOT BASE IMAGE: {exc}")


def runtime_image_or_skip(sandbox: DockerSandbox, language: Language) -> str:
    """The tag of ``language``'s runtime image (skips loudly, fails in CI, when it is not built)."""
    from saloon.worker.sandbox.images import base_image_id
    from saloon.worker.sandbox.runtimes import runtime_for

    tag = runtime_for(language).tag()
    try:
        base_image_id(sandbox.client, tag)
    except BaseImageMissing as exc:
        if services.in_ci():
            pytest.fail(f"CI=true and {exc}", pytrace=False)
        pytest.skip(f"SKIPPED, NEEDS THE {language.name} RUNTIME IMAGE: {exc}")
    return tag


def build_leftovers(sandbox: DockerSandbox) -> list[str]:
    """Build containers and sources images of the sandbox's owner still in the engine
    (another test's build running at the same time is not this one's leftover)."""
    client = sandbox.client
    labels = ["saloon.role=bot-build", f"saloon.owner={sandbox.owner}"]
    containers = client.api.containers(all=True, filters={"label": labels})
    images = [
        t
        for i in client.images.list(filters={"label": labels})
        for t in i.tags
        if t.startswith("saloon-bot-src:")
    ]
    return [c["Id"] for c in containers] + images


def sandbox_fixture(**kw: object) -> Iterator[DockerSandbox]:
    """Open a test sandbox, yield it, close it and check it left no container."""
    sandbox = open_test_sandbox(**kw)
    base_image_or_skip(sandbox)
    try:
        yield sandbox
    finally:
        sandbox.close()
    assert owned_containers(sandbox) == []
