"""Bot images: one per bot version, the base image plus the bot's files, built once.

The base image (python3 and the SDK runtime only) is built by deploy/bot-image/
(``build-offline.sh`` without a registry, ``build.sh`` with one) and tagged
:func:`base_tag`: the project version plus a hash of the code that runs inside it and of
the runtime dependencies' versions, so a changed SDK never runs in a stale image.

A bot's image is tagged ``saloon-bot:<16 hex of its version>-<12 hex of its base image's
id>``: one image per version and runtime image, so two stored versions of the same files
pinned to different runtime images never share (or take over) a tag. It is built from an
in-memory tar context (no registry, nothing pulled), labelled with the base image's id,
and reused while it is in the engine; a reuse marks it used (:func:`mark_used`), which
keeps the prune (:func:`prune_bot_images`) off images in use.

``python -m saloon.worker.sandbox.images --base-tag`` prints the base tag (deploy/dev.sh uses it).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import logging
import os
import sys
import tarfile
import time
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from saloon.worker.errors import BaseImageMissing, ImageBuildError
from saloon.worker.sandbox.packages import BotPackage

log = logging.getLogger(__name__)

BASE_REPOSITORY = "saloon-bot-base"
BOT_REPOSITORY = "saloon-bot"
#: Where a bot's files sit inside its image.
BOT_ROOT = "/bot"
#: The label every Saloon image and container carries.
LABEL = "saloon"
#: Packages whose code runs inside a bot image (the SDK imports only the engines of the
#: referee): their sources make the base tag, so a change elsewhere reuses the image.
_RUNTIME_PACKAGES = ("saloon.sdk", "saloon.games")
_RUNTIME_DEPENDENCIES = ("grpcio", "protobuf", "orjson")


def base_tag() -> str:
    """The tag of the bot base image this code needs."""
    import importlib

    digest = hashlib.sha256()
    for name in _RUNTIME_PACKAGES:
        module = importlib.import_module(name)
        root = Path(next(iter(module.__path__)))
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            digest.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    for dist in _RUNTIME_DEPENDENCIES:
        digest.update(f"{dist}=={_version(dist)}\0".encode())
    return f"{BASE_REPOSITORY}:{_version('saloon-arena')}-{digest.hexdigest()[:12]}"


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "0+unknown"


def bot_tag(package: BotPackage, base_id: str) -> str:
    """The image tag of a bot version on the base image of id ``base_id``
    (``saloon-bot:<16 hex of the version>-<12 hex of the base's id>``)."""
    base_hex = base_id.split(":", 1)[-1][:12]
    return f"{BOT_REPOSITORY}:{package.version.split(':', 1)[-1]}-{base_hex}"


def base_image_id(client: Any, tag: str | None = None) -> str:
    """The id of the base image in the engine; BaseImageMissing when it is not there."""
    import docker.errors

    tag = tag or base_tag()
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        how = (
            "bash deploy/bot-image/build-offline.sh"
            if tag.startswith(BASE_REPOSITORY)
            else "bash deploy/dev.sh test builds every missing runtime image"
        )
        raise BaseImageMissing(f"the bot runtime image {tag} is not built: {how}") from None


def current_bot_image(client: Any, package: BotPackage, base: str | None = None) -> str | None:
    """The tag of ``package``'s image when one built on ``base`` is in the engine (marked
    used, :func:`mark_used`: a container is about to start from it), else None."""
    import docker.errors

    base_id = base_image_id(client, base)
    tag = bot_tag(package, base_id)
    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return None
    if image.labels.get("saloon.base") != base_id:
        return None
    mark_used(client, image, tag)
    return tag


def ensure_bot_image(
    client: Any, package: BotPackage, base: str | None = None, built: bytes | None = None
) -> str:
    """The tag of ``package``'s image, built now unless an image on the same base exists
    (``built``: what the version's build step made, see saloon.worker.sandbox.build).

    A reused image is marked used (:func:`mark_used`); after a build, the least recently
    used bot images beyond :func:`image_cap` are removed (:func:`prune_bot_images`).
    """
    import docker.errors

    base = base or base_tag()
    base_id = base_image_id(client, base)
    tag = bot_tag(package, base_id)
    stale: str | None = None
    try:
        image = client.images.get(tag)
        if image.labels.get("saloon.base") == base_id:
            mark_used(client, image, tag)
            return tag
        log.info("%s: built on another base image, rebuilding", tag)
        stale = str(image.id)
    except docker.errors.ImageNotFound:
        pass
    labels = {
        LABEL: "1",
        "saloon.role": "bot",
        "saloon.bot.version": package.version,
        "saloon.base": base_id,
    }
    try:
        client.images.build(
            fileobj=io.BytesIO(build_context(package, base, built)),
            custom_context=True,
            tag=tag,
            labels=labels,
            rm=True,
            forcerm=True,
            pull=False,
            network_mode="none",
        )
    except (docker.errors.BuildError, docker.errors.APIError) as exc:
        raise ImageBuildError(f"building {tag} for {package.version}: {exc}") from None
    log.info("built %s (%d files, %d bytes)", tag, len(package.files), package.size)
    if stale is not None:
        # The old image lost its tag to the new one: remove it by id (kept while in use).
        try:
            client.images.remove(stale)
        except docker.errors.APIError as exc:
            log.info("kept the replaced image %s: %s", stale[:19], exc)
    try:
        prune_bot_images(client, image_cap(), keep=tag)
    except docker.errors.APIError as exc:  # pruning is upkeep: never fails a build
        log.warning("pruning bot images failed: %s", exc)
    return tag


#: Bot images kept in the engine (the least recently used beyond it are removed);
#: ``$SALOON_BOT_IMAGES`` overrides it.
DEFAULT_IMAGE_CAP = 64
IMAGE_CAP_ENV = "SALOON_BOT_IMAGES"
#: An image used (or built) less than this long ago is never pruned: another worker of
#: the engine may be about to start a container from it.
PRUNE_MIN_IDLE_S = 600.0
#: A reused image is marked used again at most this often (a tag call, see mark_used).
MARK_EVERY_S = 600.0
#: The images the cap counts (a label filter): every bot image of the engine.
PRUNE_SCOPE = "saloon.role=bot"


def image_cap() -> int:
    """How many bot images the engine keeps (``$SALOON_BOT_IMAGES``, else the default)."""
    raw = os.environ.get(IMAGE_CAP_ENV, "")
    try:
        return max(1, int(raw)) if raw else DEFAULT_IMAGE_CAP
    except ValueError:
        log.warning("$%s=%r is not a number: keeping %d", IMAGE_CAP_ENV, raw, DEFAULT_IMAGE_CAP)
        return DEFAULT_IMAGE_CAP


def last_used(image: Any) -> float:
    """When ``image`` was last built or marked used (epoch seconds; the engine's
    LastTagTime, which every tag call sets), else when it was created."""
    stamp = (image.attrs.get("Metadata") or {}).get("LastTagTime") or ""
    if not stamp or stamp.startswith("0001-"):
        stamp = image.attrs.get("Created") or ""
    return _epoch(stamp)


def _epoch(stamp: str) -> float:
    # RFC 3339 with nanoseconds ("2026-12-01T21:40:00.123456789Z"): keep microseconds.
    head, _, frac = stamp.rstrip("Z").partition(".")
    try:
        when = datetime.fromisoformat(head).replace(tzinfo=UTC)
    except ValueError:
        return 0.0
    return when.timestamp() + (float(f"0.{frac[:6]}") if frac.isdigit() else 0.0)


def mark_used(client: Any, image: Any, tag: str) -> None:
    """Tag ``image`` again so that its LastTagTime says it was used now (the engine keeps
    no last use of its own); at most every MARK_EVERY_S."""
    import docker.errors

    if time.time() - last_used(image) < MARK_EVERY_S:
        return
    repository, _, name = tag.partition(":")
    try:
        client.api.tag(image.id, repository, name)
    except docker.errors.APIError as exc:
        log.info("could not mark %s used: %s", tag, exc)


def prune_bot_images(
    client: Any,
    cap: int,
    *,
    keep: str = "",
    min_idle_s: float | None = None,
    label: str | None = None,
) -> list[str]:
    """Remove the least recently used bot images beyond ``cap`` (never ``keep``, one used
    within ``min_idle_s`` (default PRUNE_MIN_IDLE_S), or one a container still uses) of
    those ``label`` selects (default PRUNE_SCOPE); the tags removed."""
    import docker.errors

    min_idle_s = PRUNE_MIN_IDLE_S if min_idle_s is None else min_idle_s
    label = label or PRUNE_SCOPE
    images = client.images.list(filters={"label": [label]})
    if len(images) <= cap:
        return []
    now = time.time()
    removed: list[str] = []
    for image in sorted(images, key=last_used)[: len(images) - cap]:
        tags = list(image.tags)
        if keep in tags or now - last_used(image) < min_idle_s:
            continue
        try:
            client.images.remove(image.id, noprune=False)  # refused while a container uses it
        except docker.errors.APIError as exc:
            log.info("kept bot image %s: %s", (tags or [image.id])[0], exc)
            continue
        removed.extend(tags or [image.id])
    if removed:
        log.info("pruned %d least recently used bot image(s)", len(removed))
    return removed


def build_context(package: BotPackage, base: str, built: bytes | None = None) -> bytes:
    """The build context of ``package``'s image on ``base``: a Dockerfile and the bot's
    files under bot/ (owned by root); ``built``, a tar of what its build step made, goes
    under bot/build/ (executable bits kept)."""
    dockerfile = f"FROM {base}\nCOPY --chown=0:0 bot/ {BOT_ROOT}/\n".encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("Dockerfile")
        info.size = len(dockerfile)
        tar.addfile(info, io.BytesIO(dockerfile))
        folder = tarfile.TarInfo("bot")
        folder.type = tarfile.DIRTYPE
        folder.mode = 0o755
        tar.addfile(folder)
        for name, data in package.files:
            _add_file(tar, "bot/" + name, data, 0o644)
        if built is not None:
            with tarfile.open(fileobj=io.BytesIO(built)) as made:
                for member in made.getmembers():
                    handle = made.extractfile(member) if member.isfile() else None
                    if handle is None:
                        continue
                    rel = member.name.removeprefix("./")
                    mode = 0o755 if member.mode & 0o111 else 0o644
                    _add_file(tar, "bot/build/" + rel, handle.read(), mode)
    return out.getvalue()


def _add_file(tar: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    parts = name.split("/")
    for depth in range(2, len(parts)):
        sub = tarfile.TarInfo("/".join(parts[:depth]))
        sub.type = tarfile.DIRTYPE
        sub.mode = 0o755
        tar.addfile(sub)
    entry = tarfile.TarInfo(name)
    entry.size = len(data)
    entry.mode = mode
    tar.addfile(entry, io.BytesIO(data))


def main(argv: list[str] | None = None) -> int:
    """``--base-tag``: print the base image tag this code needs."""
    parser = argparse.ArgumentParser(prog="python -m saloon.worker.sandbox.images")
    parser.add_argument("--base-tag", action="store_true", help="print the base image tag")
    args = parser.parse_args(argv)
    if args.base_tag:
        print(base_tag())
        return 0
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
