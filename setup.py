"""Package discovery for the mapped folders (everything else is in pyproject.toml).

Import names are namespaced (``saloon.referee`` is the folder ``referee/``), which
setuptools' own discovery cannot follow; this finds every package under the mapped folders,
so a new subpackage needs no hand-kept list.
"""

from __future__ import annotations

from setuptools import find_packages, setup

#: Import name -> folder; the same mapping as ``package-dir`` in pyproject.toml.
PACKAGE_DIR = {
    "saloon.games": "games",
    "saloon.referee": "referee",
    "saloon.sdk": "sdk",
    "saloon.worker": "worker",
    "saloon.ratings": "ratings",
    "saloon.arena": "arena",
    "saloon.kits": "kits",
}

setup(
    package_dir=PACKAGE_DIR,
    packages=[
        package
        for name, folder in PACKAGE_DIR.items()
        for package in [name, *(f"{name}.{sub}" for sub in find_packages(folder))]
    ],
)
