"""A package's language: its saloon.toml, or its one conventional entry file."""

from __future__ import annotations

from pathlib import Path

import pytest

from saloon.sdk.languages import SPECS, Language, ManifestError, detect, language_named
from saloon.worker.errors import MissingEntryPoint
from saloon.worker.sandbox.packages import load_package


def test_a_lone_bot_py_is_python_without_a_manifest() -> None:
    manifest = detect({"bot.py": b"", "lib/util.py": b""}, "b")
    assert (manifest.language, manifest.entry, manifest.declared) == (
        Language.PYTHON,
        "bot.py",
        False,
    )


def test_a_single_py_file_is_python() -> None:
    assert detect({"mine.py": b""}, "mine.py", single="mine.py").entry == "mine.py"


@pytest.mark.parametrize("language", list(Language))
def test_each_languages_conventional_entry_names_it(language: Language) -> None:
    entry = SPECS[language].entry
    assert detect({entry: b"", "README.md": b""}, "b").language is language


@pytest.mark.parametrize(
    ("toml", "language", "entry"),
    [
        ('language = "go"', Language.GO, "bot.go"),
        ('language = "JS"\nentry = "src/main.js"', Language.JAVASCRIPT, "src/main.js"),
        ('language = "c++"\nentry = "main.cc"', Language.CPP, "main.cc"),
        ('language = "ts"', Language.TYPESCRIPT, "bot.ts"),
        ('language = "python"\nentry = "player.py"', Language.PYTHON, "player.py"),
    ],
)
def test_a_manifest_declares_language_and_entry(toml: str, language: Language, entry: str) -> None:
    files = {"saloon.toml": toml.encode(), entry: b"", "bot.py": b"", "bot.go": b""}
    manifest = detect(files, "b")
    assert (manifest.language, manifest.entry, manifest.declared) == (language, entry, True)


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({"bot.py": b"", "bot.js": b""}, "several entry files (bot.py, bot.js) and no saloon.toml"),
        ({"main.rs": b""}, "no saloon.toml and no entry file"),
        ({"saloon.toml": b'language = "rust"', "main.rs": b""}, "unknown language 'rust'"),
        ({"saloon.toml": b'lang = "go"', "bot.go": b""}, "unknown key 'lang'"),
        ({"saloon.toml": b"entry = 'bot.go'", "bot.go": b""}, 'no language = "..."'),
        ({"saloon.toml": b'language = "go"\nentry = "bot.py"', "bot.py": b""}, "is not a Go file"),
        (
            {"saloon.toml": b'language = "go"', "main.go": b""},
            "names entry 'bot.go', which is not in",
        ),
        ({"saloon.toml": b'language = "go', "bot.go": b""}, "saloon.toml: "),
        ({"saloon.toml": b"\xff", "bot.go": b""}, "saloon.toml is not UTF-8"),
    ],
)
def test_unknown_or_ambiguous_packages_are_refused_in_one_line(
    files: dict[str, bytes], said: str
) -> None:
    with pytest.raises(ManifestError) as caught:
        detect(files, "mybot")
    text = str(caught.value)
    assert said in text and text.startswith("mybot") and "\n" not in text


def test_language_names_and_aliases() -> None:
    assert language_named(" Golang ") is Language.GO
    assert language_named("node") is Language.JAVASCRIPT
    with pytest.raises(ManifestError, match="known: python, javascript"):
        language_named("cobol")


def test_a_package_carries_its_language_and_a_refusal_names_the_users_folder(
    tmp_path: Path,
) -> None:
    root = tmp_path / "gobot"
    root.mkdir()
    (root / "saloon.toml").write_text('language = "go"\n')
    (root / "bot.go").write_text("package main\n")
    package = load_package(root)
    assert (package.language, package.entry, package.is_folder) == (Language.GO, "bot.go", True)
    (root / "bot.py").write_text("")
    (root / "saloon.toml").unlink()
    with pytest.raises(MissingEntryPoint, match=r"gobot: several entry files \(bot.py, bot.go\)"):
        load_package(root)
