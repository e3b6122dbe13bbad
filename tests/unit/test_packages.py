"""Bot packages: what is accepted, what is refused (with which error), and the version."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from saloon.sdk.loader import bot_version, content_version
from saloon.worker.errors import (
    ForbiddenEntry,
    MissingEntryPoint,
    PackageError,
    PackageFormatError,
    PackageNotFound,
    PackageTooLarge,
    TooManyFiles,
    UnsafePath,
    WorkerError,
)
from saloon.worker.sandbox import packages
from saloon.worker.sandbox.packages import BotPackage, load_package

BOT = b"def act(decision):\n    return decision.legal[0]\n"


def make_folder(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "bot.py").write_bytes(BOT)
    (root / "lib" / "helpers.py").write_bytes(b"X = 1\n")
    (root / "data.json").write_bytes(b"{}")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"junk")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_bytes(b"ref")
    return root


def tar_of(path: Path, entries: list[tarfile.TarInfo], data: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info in entries:
            payload = data.get(info.name)
            if payload is not None:
                info.size = len(payload)
                tar.addfile(info, io.BytesIO(payload))
            else:
                tar.addfile(info)
    return path


def file_entry(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def test_folder_package_has_the_version_saloon_play_records(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "mybot")
    package = load_package(root)
    assert package.version == bot_version(root)
    assert [name for name, _ in package.files] == ["bot.py", "data.json", "lib/helpers.py"]
    assert package.is_folder and package.runtime_path("/bot") == "/bot"


def test_single_file_package_has_the_version_saloon_play_records(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_bytes(BOT)
    package = load_package(path)
    assert package.version == bot_version(path)
    assert package.runtime_path("/bot") == "/bot/mine.py"


def test_tar_and_zip_of_a_folder_give_the_folder_version(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "mybot")
    tgz = tmp_path / "mybot.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        tar.add(root, arcname="mybot")  # one top folder: read as that folder
    archive = tmp_path / "mybot.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(root).as_posix())
    assert load_package(tgz).version == bot_version(root)
    assert load_package(archive).version == bot_version(root)


def test_one_content_version_for_a_folder_and_the_same_files_as_a_package(tmp_path: Path) -> None:
    # "a-b/x.py" sorts after "a/x.py" part by part, before it as a plain string.
    files = {"bot.py": BOT, "a-b/x.py": b"X = 1\n", "a/x.py": b"X = 2\n", "a/y/z.txt": b"z"}
    root = tmp_path / "mybot"
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_bytes(b"ref")  # hidden: part of neither
    shuffled = BotPackage(tuple(reversed(list(files.items()))), "bot.py", is_folder=True)
    digest = hashlib.sha256()
    for name in ["a/x.py", "a/y/z.txt", "a-b/x.py", "bot.py"]:  # part by part
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    expected = f"sha256:{digest.hexdigest()[:16]}"
    assert bot_version(root) == shuffled.version == load_package(root).version == expected
    assert content_version(files.items()) == expected


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("/etc/bot.py", UnsafePath),
        ("../bot.py", UnsafePath),
        ("lib/../../x.py", UnsafePath),
        ("lib\\evil.py", UnsafePath),
    ],
)
def test_unsafe_paths_in_a_tar_are_refused(tmp_path: Path, name: str, error: type) -> None:
    path = tar_of(
        tmp_path / "b.tar.gz",
        [file_entry("bot.py"), file_entry(name)],
        {"bot.py": BOT, name: b"x"},
    )
    with pytest.raises(error):
        load_package(path)


@pytest.mark.parametrize(
    "kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.FIFOTYPE]
)
def test_links_devices_and_fifos_in_a_tar_are_refused(tmp_path: Path, kind: bytes) -> None:
    special = tarfile.TarInfo("special")
    special.type = kind
    special.linkname = "bot.py"
    path = tar_of(tmp_path / "b.tar.gz", [file_entry("bot.py"), special], {"bot.py": BOT})
    with pytest.raises(ForbiddenEntry):
        load_package(path)


def test_symlink_in_a_zip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bot.py", BOT)
        link = zipfile.ZipInfo("link")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    with pytest.raises(ForbiddenEntry):
        load_package(path)


def test_zip_slip_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("bot.py", BOT)
        zf.writestr("../../evil.py", b"x")
    with pytest.raises(UnsafePath):
        load_package(path)


def test_symlink_and_hard_link_in_a_folder_are_refused(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "a")
    (root / "link.py").symlink_to("/etc/passwd")
    with pytest.raises(ForbiddenEntry, match="symlink"):
        load_package(root)
    other = make_folder(tmp_path / "b")
    os.link(other / "data.json", other / "data2.json")
    with pytest.raises(ForbiddenEntry, match="hard link"):
        load_package(other)


def test_fifo_in_a_folder_is_refused(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "a")
    os.mkfifo(root / "pipe")
    with pytest.raises(ForbiddenEntry, match="fifo"):
        load_package(root)


def test_size_and_file_count_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_folder(tmp_path / "a")
    monkeypatch.setattr(packages, "MAX_PACKAGE_BYTES", 40)
    with pytest.raises(PackageTooLarge):
        load_package(root)
    monkeypatch.setattr(packages, "MAX_PACKAGE_BYTES", 10_000)
    monkeypatch.setattr(packages, "MAX_PACKAGE_FILES", 2)
    with pytest.raises(TooManyFiles):
        load_package(root)


def test_zip_entry_lying_about_its_size_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bot.py", BOT)
        zf.writestr("big.bin", b"\0" * 100_000)
    raw = bytearray(path.read_bytes())
    # Shrink big.bin's stated size in the central directory (a zip bomb's trick).
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 24 : central + 28] = (10).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    with pytest.raises(PackageFormatError):
        load_package(path)


def test_missing_entry_point_and_bad_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "other.py").write_bytes(b"")
    with pytest.raises(MissingEntryPoint):
        load_package(empty)
    with pytest.raises(PackageNotFound):
        load_package(tmp_path / "nothing")
    (tmp_path / "bot.txt").write_text("x")
    with pytest.raises(PackageFormatError):
        load_package(tmp_path / "bot.txt")
    (tmp_path / "broken.tar.gz").write_bytes(b"not a tar")
    with pytest.raises(PackageFormatError):
        load_package(tmp_path / "broken.tar.gz")


def test_every_refusal_is_a_worker_error() -> None:
    for cls in (UnsafePath, ForbiddenEntry, MissingEntryPoint, TooManyFiles, PackageTooLarge):
        assert issubclass(cls, PackageError) and issubclass(cls, WorkerError)


def test_upload_errors_name_the_users_file_not_the_servers_temp_path(tmp_path: Path) -> None:
    from saloon.arena.submit import read_upload

    path = tar_of(
        tmp_path / "b.tar.gz",
        [file_entry("bot.py"), file_entry("../..")],
        {"bot.py": BOT, "../..": b"x"},
    )
    with pytest.raises(UnsafePath) as caught:
        read_upload(path.read_bytes(), "mybot.tar.gz")
    message = str(caught.value)
    assert message.startswith("mybot.tar.gz: entry '../..'"), message
    assert "saloon-upload" not in message and "/tmp" not in message


def test_a_corrupt_gzip_gives_a_one_line_error(tmp_path: Path) -> None:
    from saloon.arena.submit import read_upload

    path = tmp_path / "broken.tar.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + os.urandom(64))
    for error in (
        pytest.raises(PackageFormatError, match=r"broken\.tar\.gz"),
        pytest.raises(PackageFormatError),
    ):
        with error as caught:
            load_package(path)
        assert len(str(caught.value).splitlines()) == 1, str(caught.value)
    with pytest.raises(PackageFormatError) as caught:
        read_upload(path.read_bytes(), "broken.tar.gz")
    assert len(str(caught.value).splitlines()) == 1 and "saloon-upload" not in str(caught.value)
    # Bytes that no decompressor takes (tarfile lists each method it tried, one per line).
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"\x00" * 10 + os.urandom(200))
    with pytest.raises(PackageFormatError) as caught:
        load_package(junk)
    assert len(str(caught.value).splitlines()) == 1, str(caught.value)
    assert "method gz" not in str(caught.value)
