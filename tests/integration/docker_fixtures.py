"""Shared by the Docker sandbox tests: a sandbox of its own owner id, the images they need,
and what they left."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from saloon.referee.seats import Seat
from saloon.sdk.languages import Language
from saloon.worker.errors import BaseImageMissing, SandboxError
from saloon.worker.sandbox.docker import DockerSandbox, DockerSeat
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


def owned_volumes(sandbox: DockerSandbox) -> list[str]:
    """Names of every volume carrying the sandbox's owner label (its bots' socket folders)."""
    found = sandbox.client.api.volumes(
        filters={"label": ["saloon=1", f"saloon.owner={sandbox.owner}"]}
    )
    return [v["Name"] for v in (found or {}).get("Volumes") or []]


def image_tags(sandbox: DockerSandbox) -> set[str]:
    """Every image tag in the engine, in one call (``images.list()`` then inspects each
    image, and fails when another process removes one meanwhile)."""
    return {t for image in sandbox.client.api.images() for t in image.get("RepoTags") or []}


def printed_eventually(seat: Seat, *texts: str, within_s: float = 10.0) -> str:
    """What a Docker seat's runtime printed in its match once every one of ``texts`` is in
    it, or at ``within_s`` (the engine copies a container's output to its log a moment
    behind: a fast match can close before its lines are there, see
    DockerSeat.printed_since_start)."""
    assert isinstance(seat, DockerSeat), seat
    deadline = time.monotonic() + within_s
    printed = seat.diagnostics()
    while not all(t in printed for t in texts) and time.monotonic() < deadline:
        time.sleep(0.05)
        printed = seat.printed_since_start()
    return printed


def version_images(client: Any, version: str) -> list[str]:
    """Tags of the bot images of ``version`` (on any base image) in the engine of the Docker
    ``client``, in one call."""
    found = client.api.images(filters={"label": [f"saloon.bot.version={version}"]})
    return [t for image in found for t in image.get("RepoTags") or []]


def remove_version_images(client: Any, version: str) -> None:
    """Remove the bot images of ``version`` that a test made new (by id; tagged or not: two
    builds of one version at once leave the first untagged). No container may use them."""
    for image in client.api.images(filters={"label": [f"saloon.bot.version={version}"]}):
        client.api.remove_image(image["Id"], force=True)


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
    """Open a test sandbox, yield it, close it and check it left no container or volume."""
    sandbox = open_test_sandbox(**kw)
    base_image_or_skip(sandbox)
    try:
        yield sandbox
    finally:
        sandbox.close()
    assert owned_containers(sandbox) == []
    assert owned_volumes(sandbox) == []
