"""saloon new GAME DIR --lang: the starter kits of the other languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from saloon.games import game_ids
from saloon.referee.starter import StarterError, next_steps, write_starter
from saloon.sdk.languages import Language, detect_path


@pytest.mark.parametrize("game", sorted(game_ids()))
@pytest.mark.parametrize(
    ("lang", "language"), [("js", Language.JAVASCRIPT), ("ts", Language.TYPESCRIPT)]
)
def test_a_kit_starter_declares_its_language_and_has_a_test(
    tmp_path: Path, game: str, lang: str, language: Language
) -> None:
    folder = tmp_path / "mybot"
    written = {p.name for p in write_starter(game, folder, lang)}
    manifest = detect_path(folder)
    assert (manifest.language, manifest.declared) == (language, True)
    assert written == {manifest.entry, "saloon.toml", "test.js"}
    test = (folder / "test.js").read_text()
    assert f'"check-bot", __dirname, "--game", "{game}"' in test
    assert "docker:" in next_steps(game, folder, lang)


def test_a_language_without_a_kit_and_an_unknown_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StarterError, match="no starter kit for Go yet"):
        write_starter("seizure-v1", tmp_path / "go", "go")
    with pytest.raises(StarterError, match="unknown language 'cobol'"):
        write_starter("seizure-v1", tmp_path / "cobol", "cobol")
    assert not (tmp_path / "go").exists() and not (tmp_path / "cobol").exists()


def test_python_stays_the_default(tmp_path: Path) -> None:
    written = write_starter("seizure-v1", tmp_path / "py")
    assert [p.name for p in written] == ["bot.py", "test_bot.py"]
