"""Bot images are pruned to an LRU cap: the least recently used go first, a reused image
counts as used (it is tagged again), and an image used lately is kept; and the build of a
bot's image (ensure_bot_image) prunes beyond the cap ($SALOON_BOT_IMAGES). A real engine;
the images are each test's own (a label of its own, or a base image of its own that its
bot images are built on and the prune is scoped to), removed at the end by id."""

from __future__ import annotations

import io
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from saloon.worker.sandbox import images
from saloon.worker.sandbox.images import (
    BASE_REPOSITORY,
    BOT_REPOSITORY,
    IMAGE_CAP_ENV,
    base_tag,
    bot_tag,
    ensure_bot_image,
    mark_used,
    prune_bot_images,
)
from saloon.worker.sandbox.packages import BotPackage
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


def _package(label: str, n: int) -> BotPackage:
    """A bot package of this test's own (its version, and so its image tag, are new)."""
    source = f"# {label} {n}\ndef act(decision):\n    return decision.legal[0]\n"
    return BotPackage(files=(("bot.py", source.encode()),), entry="bot.py", is_folder=False)


def test_building_a_bot_image_prunes_the_least_recently_used_beyond_the_cap(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A base image of the test's own (the real base plus a label): the bot images built on
    # it carry its id (saloon.base), and the prune is scoped to them.
    label = uuid.uuid4().hex
    test_base = f"{BASE_REPOSITORY}:test-{label[:12]}"
    client.images.build(
        fileobj=io.BytesIO(f"FROM {base_tag()}\nLABEL saloon.test={label}\n".encode()),
        tag=test_base,
        pull=False,
        rm=True,
    )
    base_id = client.images.get(test_base).id
    monkeypatch.setenv(IMAGE_CAP_ENV, "2")
    monkeypatch.setattr(images, "PRUNE_SCOPE", f"saloon.base={base_id}")
    monkeypatch.setattr(images, "PRUNE_MIN_IDLE_S", 0.0)  # even images built just now
    monkeypatch.setattr(images, "MARK_EVERY_S", 0.0)
    scope = {"label": [f"saloon.base={base_id}"]}
    packages = [_package(label, n) for n in range(4)]
    tags = [bot_tag(p) for p in packages]
    try:
        for package in packages[:2]:
            assert ensure_bot_image(client, package, test_base) == bot_tag(package)
            time.sleep(1.1)  # LastTagTime apart
        built = {t for i in client.images.list(filters=scope) for t in i.tags}
        assert built == set(tags[:2])  # at the cap: nothing pruned
        ensure_bot_image(client, packages[2], test_base)  # one over: the oldest goes
        assert {t for i in client.images.list(filters=scope) for t in i.tags} == set(tags[1:3])
        time.sleep(1.1)
        ensure_bot_image(client, packages[1], test_base)  # reused: marked used, no build
        time.sleep(1.1)
        ensure_bot_image(client, packages[3], test_base)  # the least recently used goes
        left = {t for i in client.images.list(filters=scope) for t in i.tags}
        assert left == {tags[1], tags[3]}
    finally:
        for image in client.images.list(filters=scope):
            client.images.remove(image.id, force=True)
        client.images.remove(base_id, force=True)
