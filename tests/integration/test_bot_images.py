"""Bot images are pruned to an LRU cap: the least recently used go first, a reused image
counts as used (it is tagged again), and an image used lately is kept; and the build of a
bot's image (ensure_bot_image) prunes beyond the cap ($SALOON_BOT_IMAGES). One version
on two base images has two images; a sandbox that looks an image up marks it used, and one
whose image was removed after it looked it up builds it again for its next container. A
real engine; the images are each test's own (a label of its own, or a base image of its
own that its bot images are built on and the prune is scoped to), removed at the end by
id."""

from __future__ import annotations

import io
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat, Seat
from saloon.sdk.house import make_house_bot
from saloon.worker.sandbox import images
from saloon.worker.sandbox.docker import DockerSandbox
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
from saloon.worker.sandbox.packages import BotPackage, load_package
from tests import services

from .docker_fixtures import (
    open_test_sandbox,
    owned_containers,
    remove_version_images,
    sandbox_fixture,
    version_images,
)
from .helpers import check_record

HONEST = Path(__file__).parent / "hostile" / "honest" / "bot.py"


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


def _test_base(client: Any, label: str) -> tuple[str, str]:
    """A base image of the test's own (the real base plus a label): its tag and id."""
    tag = f"{BASE_REPOSITORY}:test-{label[:12]}"
    client.images.build(
        fileobj=io.BytesIO(f"FROM {base_tag()}\nLABEL saloon.test={label}\n".encode()),
        tag=tag,
        pull=False,
        rm=True,
    )
    return tag, str(client.images.get(tag).id)


def test_building_a_bot_image_prunes_the_least_recently_used_beyond_the_cap(
    client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A base image of the test's own (the real base plus a label): the bot images built on
    # it carry its id (saloon.base), and the prune is scoped to them.
    label = uuid.uuid4().hex
    test_base, base_id = _test_base(client, label)
    monkeypatch.setenv(IMAGE_CAP_ENV, "2")
    monkeypatch.setattr(images, "PRUNE_SCOPE", f"saloon.base={base_id}")
    monkeypatch.setattr(images, "PRUNE_MIN_IDLE_S", 0.0)  # even images built just now
    monkeypatch.setattr(images, "MARK_EVERY_S", 0.0)
    scope = {"label": [f"saloon.base={base_id}"]}
    packages = [_package(label, n) for n in range(4)]
    tags = [bot_tag(p, base_id) for p in packages]
    try:
        for package in packages[:2]:
            assert ensure_bot_image(client, package, test_base) == bot_tag(package, base_id)
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


@pytest.fixture
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


def test_one_version_on_two_base_images_has_an_image_on_each(client: Any) -> None:
    """The same files pinned to two runtime images (a stored version from before an upgrade,
    one from after): two images, each on its own base, neither taking the other's tag (they
    shared ``saloon-bot:<version>`` once, and the one built last served both)."""
    label = uuid.uuid4().hex
    test_base, test_base_id = _test_base(client, label)
    package = _package(label, 0)
    try:
        on_test = ensure_bot_image(client, package, test_base)
        on_real = ensure_bot_image(client, package, base_tag())
        assert on_test != on_real
        assert on_test == bot_tag(package, test_base_id)
        assert client.images.get(on_test).labels["saloon.base"] == test_base_id
        assert client.images.get(on_real).labels["saloon.base"] == str(
            client.images.get(base_tag()).id
        )
        # Each is reused as it is: asking for one again leaves the other in place.
        assert ensure_bot_image(client, package, test_base) == on_test
        assert sorted(version_images(client, package.version)) == sorted([on_test, on_real])
    finally:
        remove_version_images(client, package.version)
        client.images.remove(test_base_id, force=True)


def test_a_sandbox_that_looks_an_image_up_marks_it_used(
    sandbox: DockerSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose image was built by another (or an earlier run) marks it used when it
    looks it up: the prune, which keeps images used in its last 10 minutes, spares it."""
    bot = tmp_path / "bot.py"
    bot.write_text(HONEST.read_text() + f"# {uuid.uuid4().hex}\n")
    package = load_package(bot)
    try:
        tag = sandbox.image(package)
        before = images.last_used(sandbox.client.images.get(tag))
        time.sleep(1.1)
        monkeypatch.setattr(images, "MARK_EVERY_S", 0.0)
        other = open_test_sandbox()
        try:
            assert other.image(package) == tag
        finally:
            other.close()
        assert images.last_used(sandbox.client.images.get(tag)) > before
    finally:
        remove_version_images(sandbox.client, package.version)


def test_a_bot_image_removed_after_the_sandbox_looked_it_up_is_built_again(
    tmp_path: Path,
) -> None:
    """Regression (CI, stop 35): a sandbox looked a bot's image up, another worker's prune
    removed it, and every container of that bot then failed ("No such image") until the
    worker restarted. The sandbox builds it again and the match plays, with no fault."""
    game = "seizure-v1"
    bot = tmp_path / "bot.py"
    bot.write_text(HONEST.read_text() + f"# {uuid.uuid4().hex}\n")
    package = load_package(bot)
    sandbox = open_test_sandbox()
    try:
        tag = sandbox.image(package)
        seat = sandbox.seat(str(bot), "honest")  # looked up: remembered by the sandbox
        sandbox.client.images.remove(tag, force=True)  # a prune, an operator's rmi
        assert version_images(sandbox.client, package.version) == []
        seats: list[Seat] = [seat, InProcessSeat(make_house_bot(game, "random"), "house:random")]
        limits = MatchLimits(decision_ms=2000, bank_ms=5000, start_ms=60_000)
        record = play_match(game, seats, seed=11, limits=limits)
        assert record.faults == []
        assert record.outcome.value == "completed"
        check_record(record)
        assert version_images(sandbox.client, package.version) == [tag]
    finally:
        sandbox.close()  # its warm container first: an image in use cannot be removed
        remove_version_images(sandbox.client, package.version)
    assert owned_containers(sandbox) == []


def test_seats_of_one_new_version_at_once_build_one_image(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    """Four seats of a new version looked up at once (matches played together): one build,
    one image. Four builds at once left three untagged images in the engine for good (and
    ran a compiled language's build step four times)."""
    bot = tmp_path / "bot.py"
    bot.write_text(HONEST.read_text() + f"# {uuid.uuid4().hex}\n")
    package = load_package(bot)
    try:
        with ThreadPoolExecutor(4) as pool:
            tags = set(pool.map(lambda _: sandbox.image(package), range(4)))
        images_of = sandbox.client.api.images(
            filters={"label": [f"saloon.bot.version={package.version}"]}
        )
        assert len(tags) == 1
        assert [i.get("RepoTags") for i in images_of] == [list(tags)]
    finally:
        remove_version_images(sandbox.client, package.version)


#: A worker process in miniature: opens a sandbox, waits for the go file, looks the
#: package's image up (building it when missing), prints the tag.
IMAGE_OF = """
import logging, pathlib, sys, time
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.packages import load_package
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
package = load_package(sys.argv[1])
go = pathlib.Path(sys.argv[2])
sandbox = DockerSandbox(owner=sys.argv[3], reap_interval_s=None)
deadline = time.monotonic() + 60
while not go.exists() and time.monotonic() < deadline:
    time.sleep(0.002)
print(sandbox.image(package))
sandbox.close()
"""


def test_two_processes_meeting_one_new_version_at_once_build_one_image(
    sandbox: DockerSandbox, tmp_path: Path
) -> None:
    """Two workers of one host (processes on one engine) that meet a new version at once:
    one builds its image, the other waits for it and takes it. Each built one, which left
    the engine an untagged image (and ran a compiled language's build step twice)."""
    bot = tmp_path / "bot.py"
    bot.write_text(HONEST.read_text() + f"# {uuid.uuid4().hex}\n")
    package = load_package(bot)
    go = tmp_path / "go"
    argv = [sys.executable, "-c", IMAGE_OF, str(bot), str(go), sandbox.owner]
    workers = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        time.sleep(3.0)  # both have opened their sandbox and wait for the go file
        go.touch()
        outputs = [worker.communicate(timeout=240) for worker in workers]
        assert [w.returncode for w in workers] == [0, 0], [err for _, err in outputs]
        tags = {out.strip() for out, _ in outputs}
        builds = [line for _, err in outputs for line in err.splitlines() if " built " in line]
        images_of = sandbox.client.api.images(
            filters={"label": [f"saloon.bot.version={package.version}"]}
        )
        assert len(tags) == 1 and len(builds) == 1, (tags, builds)
        assert [i.get("RepoTags") for i in images_of] == [list(tags)]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(10)
        remove_version_images(sandbox.client, package.version)
