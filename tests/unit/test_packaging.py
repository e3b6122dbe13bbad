"""The built wheel holds every package folder (found by setup.py, no hand-kept list)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAPPING = {
    "games": "saloon.games",
    "referee": "saloon.referee",
    "sdk": "saloon.sdk",
    "worker": "saloon.worker",
    "ratings": "saloon.ratings",
    "arena": "saloon.arena",
    "kits": "saloon.kits",
}


def _build_wheel(tmp_path: Path) -> zipfile.ZipFile:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for folder in MAPPING:
        shutil.copytree(ROOT / folder, src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "out"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)],
        check=True,
        capture_output=True,
        timeout=240,
    )
    (wheel,) = out.glob("*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_holds_every_package_folder_and_typing_marker(tmp_path: Path) -> None:
    names = set(_build_wheel(tmp_path).namelist())
    expected = set()
    for folder, name in MAPPING.items():
        for file in (ROOT / folder).rglob("*"):
            if "__pycache__" in file.parts or not file.is_file():
                continue
            if file.suffix in (".py", ".pyi") or file.name == "py.typed":
                rel = file.relative_to(ROOT / folder).as_posix()
                expected.add(f"{name.replace('.', '/')}/{rel}")
    assert any(n.endswith("games/seizure/__init__.py") for n in expected)
    assert "saloon/sdk/proto/bot_pb2.pyi" in expected
    assert expected - names == set(), "files missing from the wheel"
    # Every runtime kit's files: a worker installed from the wheel tags a runtime image by
    # a hash of them (saloon.kits.kit_hash), which must be the hash deploy/dev.sh built.
    from saloon.kits import KITS, kit_files

    for kit in ("js", "go", "cpp"):
        files = {f"saloon/kits/{p.relative_to(KITS).as_posix()}" for p in kit_files(kit)}
        files = {f for f in files if "/node_modules/" not in f}
        assert files - names == set(), f"{kit} kit files missing from the wheel"
