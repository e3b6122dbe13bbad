"""Bot images: one per bot version, the base image plus the bot's files, built once.

The base image (python3 and the SDK runtime only) is built by deploy/bot-image/
(``build-offline.sh`` without a registry, ``build.sh`` with one) and tagged
:func:`base_tag`: the project version plus a hash of the code that runs inside it and of
the runtime dependencies' versions, so a changed SDK never runs in a stale image.

A bot's image is tagged ``saloon-bot:<16 hex of its version>``. It is built from an
in-memory tar context (no registry, nothing pulled) and labelled with the base image's id;
an image whose base is not the current one is rebuilt, any other is reused.

``python -m saloon.worker.sandbox.images --base-tag`` prints the base tag (deploy/dev.sh uses it).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import logging
import sys
import tarfile
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


def bot_tag(package: BotPackage) -> str:
    """The image tag of a bot version (``saloon-bot:<16 hex>``)."""
    return f"{BOT_REPOSITORY}:{package.version.split(':', 1)[-1]}"


def base_image_id(client: Any, tag: str | None = None) -> str:
    """The id of the base image in the engine; BaseImageMissing when it is not there."""
    import docker.errors

    tag = tag or base_tag()
    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        raise BaseImageMissing(
            f"the bot base image {tag} is not built: bash deploy/bot-image/build-offline.sh"
        ) from None


def ensure_bot_image(client: Any, package: BotPackage, base: str | None = None) -> str:
    """The tag of ``package``'s image, built now unless an image on the same base exists."""
    import docker.errors

    base = base or base_tag()
    base_id = base_image_id(client, base)
    tag = bot_tag(package)
    stale: str | None = None
    try:
        image = client.images.get(tag)
        if image.labels.get("saloon.base") == base_id:
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
            fileobj=io.BytesIO(_context(package, base)),
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
    return tag


def _context(package: BotPackage, base: str) -> bytes:
    """The build context: a Dockerfile and the bot's files under bot/ (owned by root)."""
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
            parts = name.split("/")
            for depth in range(1, len(parts)):
                sub = tarfile.TarInfo("bot/" + "/".join(parts[:depth]))
                sub.type = tarfile.DIRTYPE
                sub.mode = 0o755
                tar.addfile(sub)
            entry = tarfile.TarInfo("bot/" + name)
            entry.size = len(data)
            entry.mode = 0o644
            tar.addfile(entry, io.BytesIO(data))
    return out.getvalue()


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
