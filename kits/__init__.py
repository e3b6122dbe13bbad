"""Runtimes and starter kits for bot languages other than Python: one folder per runtime.

Each folder (``js/`` serves JavaScript and TypeScript, ``go/`` Go, ``java/`` Java) holds the runtime
library in its own language, the files its bot image is built from (``Dockerfile`` for a
machine with a registry, ``build-offline.sh`` for one without), and the starter bots
``saloon new`` writes. ``schema/`` holds one JSON Schema per game: the wire JSON of its
observations and actions, generated from the Python views (``python -m saloon.sdk.schema``),
from which each language's typed views are generated in turn.

This package is data: Python reads it to find a kit's files and to tag its image with a
hash of them (:func:`kit_hash`), so a changed runtime never runs in a stale image.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: The folder of the kits.
KITS = Path(__file__).resolve().parent
#: Folders inside a kit that are not part of its image: installed or built ones, and the
#: starter bots (``saloon new`` copies them; a changed starter never changes a runtime).
SKIPPED = frozenset({"node_modules", "__pycache__", "build", "dist", "starter"})


def kit_dir(name: str) -> Path:
    """The folder of kit ``name`` (``js``)."""
    return KITS / name


def kit_files(name: str) -> list[Path]:
    """Every input file of kit ``name``, sorted (installed and built folders left out)."""
    root = kit_dir(name)
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and not SKIPPED.intersection(path.relative_to(root).parts)
    )


def kit_hash(name: str, *extra: str) -> str:
    """12 hex digits over the names and bytes of kit ``name``'s files (and ``extra``)."""
    root = kit_dir(name)
    digest = hashlib.sha256()
    for path in kit_files(name):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    for item in extra:
        digest.update(item.encode() + b"\0")
    return digest.hexdigest()[:12]
