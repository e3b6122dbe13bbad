"""The languages a bot may be written in, and how a bot package says which one it is.

A package declares its language in a small manifest at its top, ``saloon.toml``::

    language = "go"          # python, javascript, typescript, go, cpp or java
    entry = "bot.go"         # optional: the language's conventional entry file otherwise

Without a manifest, a package is read by convention: exactly one conventional entry file
at its top (``bot.py``, ``bot.js``, ``bot.ts``, ``bot.go``, ``bot.cpp`` or ``Bot.java``)
names the language; a single ``.py`` file is a Python bot. A package with several of them
and no manifest, an unknown language, an unknown key, or an entry that is missing or of
another language is refused with one line (:class:`ManifestError`) that says what to write.

This is the SDK's because its lowest readers are the bot loader and the starter kits; the
worker's package validation (``saloon.worker.sandbox.packages``) and the sandboxes call
:func:`detect` on a package's files.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from saloon.sdk.errors import SdkError

#: The manifest's file name, at the package's top.
MANIFEST = "saloon.toml"
#: Keys a manifest may hold.
MANIFEST_KEYS = ("language", "entry")


class Language(StrEnum):
    """A language a bot runtime exists for (the value is what a manifest says)."""

    PYTHON = "python"
    JAVASCRIPT = "javascript"
    TYPESCRIPT = "typescript"
    GO = "go"
    CPP = "cpp"
    JAVA = "java"


@dataclass(frozen=True)
class LanguageSpec:
    """What the platform knows of one language."""

    language: Language
    #: The name people read (``C++``).
    label: str
    #: The entry file a package has by convention (and ``saloon new`` writes).
    entry: str
    #: Source file suffixes of the language; an entry must have one of them.
    suffixes: tuple[str, ...]
    #: True when a submitted version is built once (compiled) before it plays.
    compiled: bool
    #: Other names a manifest may use for it (``js``, ``c++``).
    aliases: tuple[str, ...] = ()


SPECS: dict[Language, LanguageSpec] = {
    spec.language: spec
    for spec in (
        LanguageSpec(
            Language.PYTHON, "Python", "bot.py", (".py",), compiled=False, aliases=("py",)
        ),
        LanguageSpec(
            Language.JAVASCRIPT,
            "JavaScript",
            "bot.js",
            (".js", ".mjs", ".cjs"),
            compiled=False,
            aliases=("js", "node", "nodejs"),
        ),
        LanguageSpec(
            Language.TYPESCRIPT, "TypeScript", "bot.ts", (".ts",), compiled=True, aliases=("ts",)
        ),
        LanguageSpec(Language.GO, "Go", "bot.go", (".go",), compiled=True, aliases=("golang",)),
        LanguageSpec(
            Language.CPP,
            "C++",
            "bot.cpp",
            (".cpp", ".cc", ".cxx"),
            compiled=True,
            aliases=("c++", "cxx"),
        ),
        LanguageSpec(Language.JAVA, "Java", "Bot.java", (".java",), compiled=True),
    )
}

_NAMES: dict[str, Language] = {
    name: spec.language for spec in SPECS.values() for name in (spec.language.value, *spec.aliases)
}


class ManifestError(SdkError):
    """A package's language cannot be told: no or several entry files, or a bad manifest."""


@dataclass(frozen=True)
class Manifest:
    """A package's language and entry file (declared, or found by convention)."""

    language: Language
    #: The entry file's path relative to the package's top.
    entry: str
    #: True when the package has a ``saloon.toml``.
    declared: bool

    @property
    def spec(self) -> LanguageSpec:
        """What the platform knows of the language."""
        return SPECS[self.language]


def language_named(name: str) -> Language:
    """The language ``name`` means (a value or an alias, any case); ManifestError if none."""
    language = _NAMES.get(name.strip().lower())
    if language is None:
        known = ", ".join(spec.language.value for spec in SPECS.values())
        raise ManifestError(f"unknown language {name!r} (known: {known})")
    return language


def detect(files: Mapping[str, bytes], where: str, single: str | None = None) -> Manifest:
    """The language and entry of a package's files (relative POSIX path -> bytes).

    ``single``: the package is this one file (a lone ``.py`` file is a Python bot).
    ``where`` names the package in the one-line errors.
    """
    if MANIFEST in files:
        return _declared(files, where)
    if single is not None:
        if single.endswith(".py"):
            return Manifest(Language.PYTHON, single, declared=False)
        raise ManifestError(
            f"{where}: a single-file bot is a .py file; other languages need a folder"
        )
    found = [spec for spec in SPECS.values() if spec.entry in files]
    if len(found) == 1:
        return Manifest(found[0].language, found[0].entry, declared=False)
    if len(found) > 1:
        names = ", ".join(spec.entry for spec in found)
        raise ManifestError(
            f"{where}: several entry files ({names}) and no {MANIFEST}: "
            f'say which in {MANIFEST} (language = "...", entry = "...")'
        )
    conventions = ", ".join(spec.entry for spec in SPECS.values())
    raise ManifestError(
        f"{where}: no {MANIFEST} and no entry file at the top of the package "
        f"(one of {conventions}, or a {MANIFEST} naming the language)"
    )


def detect_path(path: str | Path) -> Manifest:
    """The language and entry of a bot file or folder on disk (its top level only)."""
    root = Path(path)
    if root.is_file():
        return detect({root.name: b""}, str(root), single=root.name)
    if not root.is_dir():
        raise ManifestError(f"no bot file or folder at {root}")
    files = {p.name: b"" for p in root.iterdir() if p.is_file()}
    if MANIFEST in files:
        files[MANIFEST] = (root / MANIFEST).read_bytes()
        entry = tomllib.loads(files[MANIFEST].decode("utf-8", "replace")).get("entry")
        if isinstance(entry, str) and (root / entry.strip("/")).is_file():
            files[entry.strip("/")] = b""
    return detect(files, str(root))


def _declared(files: Mapping[str, bytes], where: str) -> Manifest:
    raw = files[MANIFEST]
    try:
        table = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ManifestError(f"{where}: {MANIFEST} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{where}: {MANIFEST}: {exc}") from None
    unknown = sorted(set(table) - set(MANIFEST_KEYS))
    if unknown:
        raise ManifestError(
            f"{where}: {MANIFEST}: unknown key {unknown[0]!r} (known: {', '.join(MANIFEST_KEYS)})"
        )
    name = table.get("language")
    if not isinstance(name, str):
        raise ManifestError(f'{where}: {MANIFEST} has no language = "..." (a string)')
    try:
        language = language_named(name)
    except ManifestError as exc:
        raise ManifestError(f"{where}: {MANIFEST}: {exc}") from None
    spec = SPECS[language]
    entry = table.get("entry", spec.entry)
    if not isinstance(entry, str) or not entry:
        raise ManifestError(f'{where}: {MANIFEST}: entry must be a file name ("{spec.entry}")')
    entry = entry.strip("/")
    if not entry.endswith(spec.suffixes):
        raise ManifestError(
            f"{where}: {MANIFEST}: entry {entry!r} is not a {spec.label} file "
            f"({'/'.join(spec.suffixes)})"
        )
    if entry not in files:
        raise ManifestError(
            f"{where}: {MANIFEST} names entry {entry!r}, which is not in the package"
        )
    return Manifest(language, entry, declared=True)
