"""Stored bot versions: bot packages in the results store, and where a worker serves them from.

* **Packages** are stored once per content: a gzip-compressed tar of the package's files,
  keyed by the whole sha256 of the tar (not the 64-bit version id, which a hostile author
  could collide with another bot's). A version's meta names its package, its entry file,
  its game and its qualification.
* A stored bot version is seated as ``bot:NAME@VERSION``: a worker unpacks its package into
  a cache folder on its own host (:meth:`StoredBots.unpacked`) and hands that to its
  sandbox, which builds the image once per content hash.

The arena's registry (:mod:`saloon.arena.registry`: users, tokens, accepting versions,
schedules) builds on this; a worker needs only this part to seat stored versions.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from saloon.sdk.botref import BotRef, parse_stored, split_tag
from saloon.sdk.errors import MalformedBotRef
from saloon.sdk.languages import detect
from saloon.worker.errors import BotRefError, RegistryError
from saloon.worker.sandbox.packages import BotPackage, archive_bytes
from saloon.worker.sandbox.runtimes import PINNED_RUNTIME
from saloon.worker.store import schema as t
from saloon.worker.store.store import Store, VersionRow

#: Where workers unpack stored packages ($SALOON_PACKAGE_CACHE overrides).
CACHE_ENV = "SALOON_PACKAGE_CACHE"
#: (store, bot:NAME@VERSION, cache folder) -> the path this process serves it from.
_UNPACKED: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class StoredVersion:
    """An accepted bot version: its bot, owner, game and package."""

    bot: str
    owner: str
    game: str
    version: VersionRow
    #: Every stored version of the bot, oldest first (``version`` is the last).
    history: tuple[VersionRow, ...] = ()

    @property
    def ref(self) -> str:
        """How a season seats it: ``bot:NAME@VERSION``."""
        return str(BotRef.stored(self.bot, self.version.version))


def _now() -> datetime:
    return datetime.now(UTC)


def pack(package: BotPackage) -> tuple[str, bytes]:
    """(sha256 hex of the canonical tar, the tar gzip-compressed) of ``package``."""
    tar = archive_bytes(package)
    return hashlib.sha256(tar).hexdigest(), gzip.compress(tar, mtime=0)


def unpack(data: bytes, entry: str, is_folder: bool) -> BotPackage:
    """The package stored as ``data`` (:func:`pack`'s bytes)."""
    files = []
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data)), mode="r:") as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member)
            if not member.isfile() or extracted is None:
                raise RegistryError(f"stored package entry {member.name!r} is not a file")
            files.append((member.name, extracted.read()))
    manifest = detect(dict(files), "stored package", None if is_folder else entry)
    return BotPackage(tuple(files), entry, is_folder, manifest.language)


def parse_ref(ref: str) -> tuple[str, str]:
    """(name, version) of a ``bot:NAME@VERSION[#TAG]`` reference; BotRefError otherwise."""
    try:
        stored = parse_stored(ref)
    except MalformedBotRef as exc:
        raise BotRefError(str(exc)) from None
    return stored.name, stored.version


class StoredBots:
    """The stored bot versions and packages of one :class:`~saloon.worker.store.store.Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def put_package(self, package: BotPackage) -> str:
        """Store ``package`` (once per content); its digest."""
        digest, data = pack(package)
        with self.store.write("put package") as conn:
            conn.execute(
                self.store.insert_ignore(t.packages, ["digest"]).values(
                    digest=digest, data=data, size=len(data), created_at=_now()
                )
            )
        return digest

    def package_bytes(self, digest: str) -> bytes:
        """The stored bytes of package ``digest``; BotRefError when it is not stored."""
        with self.store.read("package") as conn:
            data = conn.execute(
                sa.select(t.packages.c.data).where(t.packages.c.digest == digest)
            ).scalar_one_or_none()
        if data is None:
            raise BotRefError(f"package {digest[:16]} is not in the store")
        return bytes(data)

    def stored_version(self, ref: str) -> StoredVersion:
        """The accepted version a ``bot:NAME@VERSION`` reference names; BotRefError if none."""
        name, version = parse_ref(ref)
        bot = self.store.bot(name)
        row = next((v for v in self.store.versions(name) if v.version == version), None)
        if bot is None or row is None or "package" not in row.meta:
            raise BotRefError(f"{ref!r}: no such bot version in the store")
        return StoredVersion(name, bot.owner, str(row.meta.get("game", "")), row)

    def unpacked(self, ref: str, cache: Path | None = None) -> str:
        """A local path to serve ``bot:NAME@VERSION`` from: its package unpacked (once per
        content) under ``cache`` (default: $SALOON_PACKAGE_CACHE or a folder in /tmp).

        A stored version never changes, so a worker resolves each one once: later matches
        of it cost a stat, not two store queries (the process keeps the answer)."""
        root = cache or default_cache()
        key = (self.store.url, split_tag(ref)[0], str(root))
        known = _UNPACKED.get(key)
        if known is not None and os.path.exists(known):
            return known
        path = self._unpack(ref, root)
        _UNPACKED[key] = path
        return path

    def _unpack(self, ref: str, root: Path) -> str:
        stored = self.stored_version(ref)
        meta = stored.version.meta
        digest = str(meta["package"])
        runtime = str(meta.get("runtime") or "")
        # The same files stored as two versions built on two runtimes (in two stores, or
        # sent again after a runtime's upgrade) are two folders: each pins its own runtime.
        pin = hashlib.sha256(runtime.encode()).hexdigest()[:12] if runtime else ""
        folder = root / (f"{digest}-{pin}" if pin else digest)
        if not folder.is_dir():
            data = self.package_bytes(digest)
            package = unpack(data, str(meta["entry"]), bool(meta["is_folder"]))
            if hashlib.sha256(archive_bytes(package)).hexdigest() != digest:
                raise BotRefError(f"{ref!r}: the stored package does not match its digest")
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            fresh = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
            package.write(fresh)
            if runtime:
                (fresh / PINNED_RUNTIME).write_text(runtime, encoding="utf-8")
            try:
                fresh.rename(folder)  # atomic: another job may have unpacked it meanwhile
            except OSError:
                if not folder.is_dir():
                    raise
        if meta["is_folder"]:
            return str(folder)
        return str(folder / str(meta["entry"]))


def default_cache() -> Path:
    """Where this host unpacks stored packages."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return Path(tempfile.gettempdir()) / f"saloon-packages-{os.getuid()}"
