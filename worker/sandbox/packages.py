"""Bot packages: a bot file, a folder, or a .tar.gz/.zip of one, validated before anything runs.

A package holds its entry file (``bot.py`` at its top, or one ``.py`` file on its own; in
another language the entry its ``saloon.toml`` names or its conventional one, see
:mod:`saloon.sdk.languages`) and its other source and data files. :func:`load_package`
reads it completely into memory and refuses it, with a specific
:class:`~saloon.worker.errors.PackageError`, when it is too large, holds too many files,
names a path that is absolute or climbs out with ``..``, holds a symlink, a hard link, a
device, a fifo or a socket, or has no entry point (or an unclear language).
Nothing is written anywhere before a package is accepted.

Hidden entries (a part starting with ``.``) and ``__pycache__`` folders are not part of a
package (:func:`saloon.sdk.loader.is_skipped`, the rule :func:`saloon.sdk.loader.bot_version`
follows), and the package's :attr:`BotPackage.version` is the same
:func:`saloon.sdk.loader.content_version`, so it equals the version ``saloon play`` records
for the same files. An archive whose files all sit in one top folder (``tar czf b.tgz mybot/``) is
read as that folder.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from saloon.sdk.languages import MANIFEST, SPECS, Language, ManifestError, detect
from saloon.sdk.loader import content_version, is_skipped
from saloon.worker.errors import (
    ForbiddenEntry,
    MissingEntryPoint,
    PackageError,
    PackageFormatError,
    PackageNotFound,
    PackageTooLarge,
    TooManyFiles,
    UnsafePath,
)

#: Bytes of all a package's files together (uncompressed), and of an archive file itself.
MAX_PACKAGE_BYTES = 8 * 1024 * 1024
#: Files in a package (folders not counted).
MAX_PACKAGE_FILES = 256
#: Characters in one path inside a package.
MAX_PATH_CHARS = 240
#: Entries an archive may list at all (skipped hidden entries included): a bound on the
#: work done before a package is refused.
MAX_ARCHIVE_ENTRIES = 4 * MAX_PACKAGE_FILES
ENTRY_FILE = "bot.py"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")


@dataclass(frozen=True)
class BotPackage:
    """An accepted bot package, held in memory: its files and where the bot starts."""

    #: (relative POSIX path, bytes), sorted part by part.
    files: tuple[tuple[str, bytes], ...]
    #: The entry file's relative path (``bot.py``, or the one file's own name).
    entry: str
    #: True for a folder package (served as the folder), False for a single bot file.
    is_folder: bool
    #: The language the package is written in (its ``saloon.toml``, or its entry file).
    language: Language = Language.PYTHON

    @property
    def version(self) -> str:
        """The content version: the same as ``saloon play`` records for these files."""
        return content_version(self.files)

    @property
    def size(self) -> int:
        """Bytes of all files together."""
        return sum(len(data) for _, data in self.files)

    def runtime_path(self, root: str) -> str:
        """What to serve when the package's files sit under ``root``."""
        return root if self.is_folder else f"{root}/{self.entry}"

    def write(self, dest: Path) -> None:
        """Write the files under ``dest`` (a fresh folder)."""
        for name, data in self.files:
            path = dest / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def load_package(path: str | Path, shown: str | None = None) -> BotPackage:
    """Read and validate the bot package at ``path``; a PackageError says what is wrong.

    ``shown``: the name the error messages give the package instead of ``path`` (an
    upload is read from a temporary file; its errors name the user's own file).
    """
    if shown is None:
        return _load_package(Path(path))
    try:
        return _load_package(Path(path))
    except PackageError as exc:
        raise type(exc)(str(exc).replace(str(path), shown)) from None


def _load_package(p: Path) -> BotPackage:
    if not p.exists():
        raise PackageNotFound(f"no bot package at {p}")
    if p.is_dir():
        return _package(_collect(_folder_files(p), p), p, single=None)
    if not p.is_file():
        raise ForbiddenEntry(f"{p} is not a regular file or folder")
    name = p.name.lower()
    if name.endswith(".py"):
        data = _read_capped(p)
        return _package({p.name: data}, p, single=p.name)
    if name.endswith(".zip"):
        return _package(_top_folder(_collect(_zip_files(p), p)), p, single=None)
    if name.endswith(ARCHIVE_SUFFIXES):
        return _package(_top_folder(_collect(_tar_files(p), p)), p, single=None)
    raise PackageFormatError(
        f"{p}: a bot package is a .py file, a folder, or a {'/'.join(ARCHIVE_SUFFIXES)} archive"
    )


# -- the checks every entry goes through -----------------------------------------------
def _clean(raw: str, where: Path) -> str | None:
    """The entry's safe relative path, or None when it is not part of a package."""
    if "\0" in raw or "\\" in raw:
        raise UnsafePath(f"{where}: entry {raw!r} has a NUL or backslash in its path")
    if raw.startswith("/"):
        raise UnsafePath(f"{where}: entry {raw!r} has an absolute path")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UnsafePath(f"{where}: entry {raw!r} climbs out of the package with '..'")
    if not parts:
        return None
    clean = "/".join(parts)
    if len(clean) > MAX_PATH_CHARS:
        raise UnsafePath(f"{where}: entry path over {MAX_PATH_CHARS} characters: {clean[:60]}...")
    if is_skipped(parts):
        return None
    return clean


class _Budget:
    """Counts files and bytes against the package limits as entries are read."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.files = 0
        self.bytes = 0

    def add(self, size: int, *, skipped: bool = False) -> None:
        # A skipped entry (hidden, a cache) is not kept, but still expanded: it counts bytes.
        self.files += 0 if skipped else 1
        self.bytes += size
        if self.files > MAX_PACKAGE_FILES:
            raise TooManyFiles(f"{self.where}: more than {MAX_PACKAGE_FILES} files")
        if self.bytes > MAX_PACKAGE_BYTES:
            raise PackageTooLarge(
                f"{self.where}: more than {MAX_PACKAGE_BYTES} bytes "
                f"({MAX_PACKAGE_BYTES // (1024 * 1024)} MiB) of files"
            )


def _read_capped(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_PACKAGE_BYTES:
        raise PackageTooLarge(f"{path}: {size} bytes, over the limit of {MAX_PACKAGE_BYTES}")
    return path.read_bytes()


# -- sources ----------------------------------------------------------------------------
def _folder_files(root: Path) -> Iterator[tuple[str, bytes]]:
    budget = _Budget(root)
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        # Hidden folders and caches are not part of the package: do not even walk them.
        dirnames[:] = sorted(d for d in dirnames if not is_skipped((d,)))
        for d in dirnames:
            if (here / d).is_symlink():
                raise ForbiddenEntry(f"{root}: {(here / d).relative_to(root)} is a symlink")
        for name in sorted(filenames):
            path = here / name
            rel = _clean(path.relative_to(root).as_posix(), root)
            if rel is None:
                continue
            info = path.lstat()
            _check_mode(info.st_mode, rel, root)
            if info.st_nlink > 1:
                raise ForbiddenEntry(f"{root}: {rel} is a hard link ({info.st_nlink} names)")
            budget.add(info.st_size)
            yield rel, path.read_bytes()


def _check_mode(mode: int, rel: str, where: Path) -> None:
    if stat.S_ISREG(mode):
        return
    kind = (
        "a symlink"
        if stat.S_ISLNK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a fifo"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a regular file"
    )
    raise ForbiddenEntry(f"{where}: {rel} is {kind}; a package holds only files and folders")


def _tar_files(path: Path) -> Iterator[tuple[str, bytes]]:
    if path.stat().st_size > MAX_PACKAGE_BYTES:
        raise PackageTooLarge(f"{path}: the archive is over {MAX_PACKAGE_BYTES} bytes")
    budget = _Budget(path)
    try:
        with tarfile.open(path, mode="r:*") as tar:
            for seen, member in enumerate(tar, start=1):
                if seen > MAX_ARCHIVE_ENTRIES:
                    raise TooManyFiles(f"{path}: more than {MAX_ARCHIVE_ENTRIES} entries")
                rel = _clean(member.name, path)
                if member.issym() or member.islnk():
                    kind = "a symlink" if member.issym() else "a hard link"
                    raise ForbiddenEntry(f"{path}: {member.name} is {kind}")
                if member.isdir():
                    continue
                if not member.isreg():
                    raise ForbiddenEntry(
                        f"{path}: {member.name} is a device, fifo or other special entry"
                    )
                budget.add(member.size, skipped=rel is None)
                if rel is None:
                    continue
                handle = tar.extractfile(member)
                if handle is None:
                    raise PackageFormatError(f"{path}: cannot read {member.name}")
                yield rel, handle.read()
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise PackageFormatError(f"{path}: not a readable tar archive ({_one_line(exc)})") from None


def _zip_files(path: Path) -> Iterator[tuple[str, bytes]]:
    if path.stat().st_size > MAX_PACKAGE_BYTES:
        raise PackageTooLarge(f"{path}: the archive is over {MAX_PACKAGE_BYTES} bytes")
    budget = _Budget(path)
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ARCHIVE_ENTRIES:
                raise TooManyFiles(f"{path}: more than {MAX_ARCHIVE_ENTRIES} entries")
            for info in infos:
                rel = _clean(info.filename, path)
                mode = info.external_attr >> 16
                if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                    _check_mode(mode, info.filename, path)
                if info.is_dir() or rel is None:
                    continue
                budget.add(info.file_size)
                # Read one byte past the stated size: a lying header cannot inflate it.
                with archive.open(info) as handle:
                    data = handle.read(info.file_size + 1)
                if len(data) != info.file_size:
                    raise PackageFormatError(f"{path}: {info.filename} is not its stated size")
                yield rel, data
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError) as exc:
        raise PackageFormatError(f"{path}: not a readable zip archive ({_one_line(exc)})") from None


def _one_line(exc: BaseException) -> str:
    """An archive library's error on one line: tarfile's "could not be opened" lists every
    compression it tried, one per line, in its own terms."""
    text = str(exc).strip()
    if "could not be opened successfully" in text:
        return "not gzip, bzip2, xz or plain tar data"
    return text.splitlines()[0] if text else type(exc).__name__


def _collect(entries: Iterator[tuple[str, bytes]], where: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for name, data in entries:
        if name in files:
            raise PackageFormatError(f"{where}: {name} appears twice")
        files[name] = data
    return files


def _top_folder(files: dict[str, bytes]) -> dict[str, bytes]:
    """Files of a package whose files all sit in one top folder, read as that folder."""
    if not files or MANIFEST in files or any(spec.entry in files for spec in SPECS.values()):
        return files
    tops = {name.split("/", 1)[0] for name in files}
    if len(tops) == 1 and all("/" in name for name in files):
        top = tops.pop()
        return {name[len(top) + 1 :]: data for name, data in files.items()}
    return files


def _package(files: dict[str, bytes], where: Path, single: str | None) -> BotPackage:
    names = set(files)
    for name in names:
        parent = PurePosixPath(name).parent
        while str(parent) != ".":
            if str(parent) in names:
                raise PackageFormatError(f"{where}: {parent} is both a file and a folder")
            parent = parent.parent
    try:
        manifest = detect(files, str(where), single)
    except ManifestError as exc:
        raise MissingEntryPoint(str(exc)) from None
    ordered = sorted(files.items(), key=lambda item: item[0].split("/"))
    return BotPackage(tuple(ordered), manifest.entry, single is None, manifest.language)


def archive_bytes(package: BotPackage, prefix: str = "") -> bytes:
    """The package's files as an uncompressed tar (read-only modes, owned by root)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in package.files:
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()
