"""saloon new GAME DIR --lang: the starter kits of the other languages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from saloon.games import game_ids
from saloon.referee.starter import KIT_STARTERS, StarterError, next_steps, write_starter
from saloon.sdk.languages import SPECS, Language, detect_path


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
    without = [lang for lang in SPECS if lang is not Language.PYTHON and lang not in KIT_STARTERS]
    for language in without:
        said = re.escape(f"no starter kit for {SPECS[language].label} yet")
        with pytest.raises(StarterError, match=said):
            write_starter("seizure-v1", tmp_path / language.value, language.value)
        assert not (tmp_path / language.value).exists()
    with pytest.raises(StarterError, match="unknown language 'cobol'"):
        write_starter("seizure-v1", tmp_path / "cobol", "cobol")
    assert not (tmp_path / "cobol").exists()


@pytest.mark.parametrize("game", sorted(game_ids()))
def test_the_go_starter_declares_go_and_has_a_check_bot_script(tmp_path: Path, game: str) -> None:
    folder = tmp_path / "mybot"
    written = {p.name for p in write_starter(game, folder, "go")}
    manifest = detect_path(folder)
    assert (manifest.language, manifest.declared) == (Language.GO, True)
    assert written == {"bot.go", "saloon.toml", "test.sh"}
    test = (folder / "test.sh").read_text()
    assert f'saloon check-bot "$(dirname "$0")" --game {game}' in test
    assert "func Act(raw saloon.Decision) int" in (folder / "bot.go").read_text()
    assert f"sh {folder / 'test.sh'}" in next_steps(game, folder, "go")


@pytest.mark.parametrize("game", sorted(game_ids()))
def test_the_java_starter_declares_java_and_has_a_check_bot_script(
    tmp_path: Path, game: str
) -> None:
    folder = tmp_path / "mybot"
    written = {p.name for p in write_starter(game, folder, "java")}
    manifest = detect_path(folder)
    assert (manifest.language, manifest.entry, manifest.declared) == (
        Language.JAVA,
        "Bot.java",
        True,
    )
    assert written == {"Bot.java", "saloon.toml", "test.sh"}
    test = (folder / "test.sh").read_text()
    assert f'saloon check-bot "$(dirname "$0")" --game {game}' in test
    bot = (folder / "Bot.java").read_text()
    assert "public final class Bot implements saloon.Bot" in bot
    assert f"import saloon.games.{game.replace('-', '_')}.View;" in bot
    assert f"sh {folder / 'test.sh'}" in next_steps(game, folder, "java")


def test_python_stays_the_default(tmp_path: Path) -> None:
    written = write_starter("seizure-v1", tmp_path / "py")
    assert [p.name for p in written] == ["bot.py", "test_bot.py"]


def test_next_steps_of_a_js_kit_name_the_process_sandbox_where_node_is_installed() -> None:
    steps = next_steps("seizure-v1", "mybot", "js")
    assert "docker:mybot" in steps
    assert "where node is installed, the process sandbox: --seat mybot" in steps
    assert "process sandbox" not in next_steps("seizure-v1", "mybot", "ts")


def test_the_cpp_kits_copy_of_the_bot_protocol_is_the_protocol() -> None:
    """kits/cpp/proto is compiled into the C++ runtime image (its build context is the kit):
    it must be proto/saloon/v1/bot.proto, byte for byte."""
    from saloon.kits import kit_dir

    root = Path(__file__).resolve().parents[2]
    kept = kit_dir("cpp") / "proto" / "saloon" / "v1" / "bot.proto"
    assert kept.read_bytes() == (root / "proto" / "saloon" / "v1" / "bot.proto").read_bytes()


@pytest.mark.parametrize("game", sorted(game_ids()))
def test_the_cpp_starter_declares_cpp_and_has_a_check_bot_script(tmp_path: Path, game: str) -> None:
    folder = tmp_path / "mybot"
    written = {p.name for p in write_starter(game, folder, "cpp")}
    manifest = detect_path(folder)
    assert (manifest.language, manifest.declared) == (Language.CPP, True)
    assert written == {"bot.cpp", "saloon.toml", "test.sh"}
    test = (folder / "test.sh").read_text()
    assert f'saloon check-bot "$(dirname "$0")" --game {game}' in test
    bot = (folder / "bot.cpp").read_text()
    assert "int saloon::act(const saloon::Decision& d)" in bot
    assert f"#include <saloon/games/{game.replace('-', '_')}.hpp>" in bot
    assert f"sh {folder / 'test.sh'}" in next_steps(game, folder, "cpp")
