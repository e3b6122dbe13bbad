"""``saloon new GAME DIR [--lang LANG]``: a starter kit, a bot and a test that plays it.

Python: the bot uses the game's typed SDK view and plays a random legal action, seeded
from ``MatchInfo.seed`` (so its matches replay); the test plays it, as the arena does (its
own process over gRPC), against the game's house bots and checks it commits no fault.

Other languages (``js``, ``ts``, ``go``, ``cpp``, ``java``): the kit's starter bot for the
game (a small heuristic, ``kits/<runtime>/starter/``), its ``saloon.toml``, and a test the
author runs (``node --test``; ``sh test.sh`` for Go, C++ and Java) that runs ``saloon
check-bot`` on it.
"""

from __future__ import annotations

from pathlib import Path

from saloon.games import get_game, sdk_views_table
from saloon.kits import kit_dir
from saloon.referee.errors import RefereeError
from saloon.sdk.botref import HOUSE_PREFIX
from saloon.sdk.house import house_bot_names
from saloon.sdk.languages import MANIFEST, SPECS, Language, ManifestError, language_named

BOT_FILE = "bot.py"
TEST_FILE = "test_bot.py"

_BOT = '''"""My {name} bot ({game}): every field it can read is in docs/reference/{game}.md."""

from __future__ import annotations

import random
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo
{view_import}

class MyBot(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        # A seed derived from the match seed and this seat: the same match replays exactly.
        self.rng = random.Random(info.seed)

    def act(self, decision: Decision[{obs_type}, Any]) -> Any:
        # decision.kind says what is asked, decision.observation what this seat sees and
        # decision.legal the typed choices: return one of them. Start here.
        return self.rng.choice(decision.legal)
'''

_TEST = '''"""Plays bot.py against the house bots of {game}, as the arena would (over gRPC)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saloon.referee.match import play_local

GAME = "{game}"
BOT = str(Path(__file__).with_name("bot.py"))
OPPONENTS = {opponents!r}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_my_bot_plays_a_whole_match_without_a_fault(seed: int) -> None:
    record = play_local(GAME, [BOT, *OPPONENTS], seed=seed)
    assert record.faults == [], record.faults
    assert len(record.ranks) == {seats}
    print("my rank (1 = first):", record.ranks[0] + 1, "scores:", record.scores)
'''


_NODE_TEST = """// Run with: node --test test.js   (needs the saloon command and a Docker engine)
// Plays the bot in this folder as the arena would (its own container, the same referee)
// against house:random, a few matches, and fails on any protocol slip or fault.
const { test } = require("node:test");
const assert = require("node:assert");
const { spawnSync } = require("node:child_process");

test("my bot plays {game} without a fault", () => {
  const run = spawnSync("saloon", ["check-bot", __dirname, "--game", "{game}"], {
    encoding: "utf8",
    timeout: 600000,
  });
  assert.strictEqual(run.error, undefined, String(run.error));
  assert.strictEqual(run.status, 0, run.stdout + run.stderr);
});
"""

_SHELL_TEST = """#!/bin/sh
# Run with: sh test.sh   (needs the saloon command and a Docker engine)
# Builds and plays the bot in this folder as the arena would (its own container, the same
# referee) against house:random, a few matches; fails on a compile error, a protocol slip
# or a fault.
exec saloon check-bot "$(dirname "$0")" --game {game}
"""

#: The kit folder and starter-file suffix of each language with a starter kit.
KIT_STARTERS: dict[Language, tuple[str, str]] = {
    Language.JAVASCRIPT: ("js", ".js"),
    Language.TYPESCRIPT: ("js", ".ts"),
    Language.GO: ("go", ".go"),
    Language.CPP: ("cpp", ".cpp"),
    Language.JAVA: ("java", ".java"),
}
#: The test a kit starter comes with, by language (node's test runner's otherwise).
KIT_TESTS: dict[Language, tuple[str, str, str]] = {
    Language.GO: ("test.sh", _SHELL_TEST, "sh"),
    Language.CPP: ("test.sh", _SHELL_TEST, "sh"),
    Language.JAVA: ("test.sh", _SHELL_TEST, "sh"),
}


class StarterError(RefereeError):
    """A starter kit that cannot be written where asked."""


def _language(lang: str) -> Language:
    try:
        language = language_named(lang)
    except ManifestError as exc:
        raise StarterError(str(exc)) from None
    if language is not Language.PYTHON and language not in KIT_STARTERS:
        have = ", ".join(
            ["python", *(SPECS[lang].entry.rsplit(".", 1)[1] for lang in KIT_STARTERS)]
        )
        raise StarterError(f"no starter kit for {SPECS[language].label} yet (--lang {have})")
    return language


def next_steps(game_id: str, folder: str | Path, lang: str = "python") -> str:
    """What to run next, after ``saloon new``."""
    language = _language(lang)
    if language is Language.PYTHON:
        bot, test = Path(folder) / BOT_FILE, Path(folder) / TEST_FILE
        return f"next: saloon play {game_id} --seat {bot} ...   and   pytest {test}\n"
    local = (
        f"   (where node is installed, the process sandbox: --seat {folder})"
        if language is Language.JAVASCRIPT
        else ""
    )
    return (
        f"next: saloon play {game_id} --seat docker:{folder} --seat house:random ...{local}   "
        f"and   saloon check-bot {folder}   (or: {_test_command(language, Path(folder))})\n"
    )


def _test_command(language: Language, folder: Path) -> str:
    name, _, runner = KIT_TESTS.get(language, ("test.js", _NODE_TEST, "node --test"))
    return f"{runner} {folder / name}"


def write_starter(game_id: str, folder: str | Path, lang: str = "python") -> list[Path]:
    """Write the starter bot and its test into ``folder`` (new or empty); the paths."""
    spec = get_game(game_id)
    language = _language(lang)
    target = Path(folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise StarterError(f"{target} exists and is not an empty folder")
    if language is not Language.PYTHON:
        return _write_kit(game_id, target, language)
    view = sdk_views_table().get(game_id)
    view_import = f"from {view} import Observation\n" if view else ""
    names = [n for n in house_bot_names(game_id) if n != "random"] + ["random"]
    opponents = [f"{HOUSE_PREFIX}{names[i % len(names)]}" for i in range(spec.min_players - 1)]
    files = {
        BOT_FILE: _BOT.format(
            name=spec.name,
            game=game_id,
            view_import=view_import,
            obs_type="Observation" if view else "Any",
        ),
        TEST_FILE: _TEST.format(game=game_id, opponents=opponents, seats=spec.min_players),
    }
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _write_kit(game_id: str, target: Path, language: Language) -> list[Path]:
    kit, suffix = KIT_STARTERS[language]
    source = kit_dir(kit) / "starter" / f"{game_id}{suffix}"
    if not source.is_file():
        raise StarterError(f"no {SPECS[language].label} starter bot for {game_id}")
    entry = SPECS[language].entry
    files = {
        entry: source.read_text(encoding="utf-8"),
        MANIFEST: f'language = "{language.value}"\nentry = "{entry}"\n',
    }
    test_name, test_text, _ = KIT_TESTS.get(language, ("test.js", _NODE_TEST, "node --test"))
    files[test_name] = test_text.replace("{game}", game_id)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
