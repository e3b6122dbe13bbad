"""Bot images are pruned to an LRU cap: the least recently used go first, a reused image
counts as used (it is tagged again), and an image used lately is kept. A real engine;
the images are this test's own (a label of its own), removed at the end."""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from saloon.worker.sandbox import images
from saloon.worker.sandbox.images import BOT_REPOSITORY, base_tag, mark_used, prune_bot_images
from tests import services


@pytest.fixture
def client() -> Iterator[Any]:
    services.require("docker")
    import docker

    engine = docker.from_env(timeout=60)
    try:
        engine.images.get(base_tag())
    except docker.errors.ImageNotFound:
        if services.in_ci():
            pytest.fail("CI=true and the bot base image is missing", pytrace=False)
        pytest.skip("SKIPPED, NEEDS the bot base image: bash deploy/bot-image/build-offline.sh")
    yield engine
    engine.close()


def _build(client: Any, label: str, n: int) -> str:
    tag = f"{BOT_REPOSITORY}:lru-{label[-8:]}-{n}"
    dockerfile = f"FROM {base_tag()}\nLABEL saloon.lru.n={n}\n".encode()
    client.images.build(
        fileobj=io.BytesIO(dockerfile),
        tag=tag,
        labels={"saloon": "1", "saloon.role": "bot", "saloon.test": label},
        pull=False,
        rm=True,
    )
    return tag


def test_the_least_recently_used_bot_images_beyond_the_cap_are_removed(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    label = uuid.uuid4().hex
    tags = []
    try:
        for n in range(4):
            tags.append(_build(client, label, n))
            time.sleep(1.1)  # LastTagTime apart
        monkeypatch.setattr(images, "MARK_EVERY_S", 0.0)
        mark_used(client, client.images.get(tags[0]), tags[0])  # the oldest, used again
        scope = f"saloon.test={label}"
        # Used just now: nothing is old enough to go.
        assert prune_bot_images(client, 2, label=scope) == []
        removed = prune_bot_images(client, 2, min_idle_s=0.0, label=scope)
        assert sorted(removed) == sorted(tags[1:3])
        left = {t for i in client.images.list(filters={"label": [scope]}) for t in i.tags}
        assert left == {tags[0], tags[3]}
        # At or under the cap: nothing to do.
        assert prune_bot_images(client, 2, min_idle_s=0.0, label=scope) == []
    finally:
        for image in client.images.list(filters={"label": [f"saloon.test={label}"]}):
            client.images.remove(image.id, force=True)
