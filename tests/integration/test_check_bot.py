"""saloon check-bot: a conformance run that reports every protocol slip in plain words."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BOTS = Path(__file__).parent / "bots"


def check_bot(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "saloon.arena.cli", "check-bot", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def test_a_bot_that_answers_illegal_actions_is_told_each_slip_in_plain_words() -> None:
    run = check_bot(str(BOTS / "illegal.py"), "--game", "seas-of-strife-v1", "--matches", "2")
    assert run.returncode == 3, run.stderr
    assert "seas-of-strife-v1: 2 matches, 2 completed" in run.stdout
    assert "INVALID at decision" in run.stdout
    assert "an answer that is not one of the legal actions" in run.stdout
    assert "'not an action' is not one of the" in run.stdout
    assert run.stdout.rstrip().endswith("does NOT pass the conformance run")


def test_a_bot_that_cannot_start_is_told_so() -> None:
    run = check_bot(str(BOTS / "bad_start.py"), "--game", "western-showdown-v1", "--matches", "1")
    assert run.returncode == 3, run.stderr
    assert "at the start" in run.stdout


def test_a_well_behaved_bot_passes_every_game() -> None:
    run = check_bot(str(BOTS / "function_bot.py"), "--matches", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    for game in ("seas-of-strife-v1", "seizure-v1", "western-showdown-v1"):
        assert f"{game}: 2 matches, 2 completed" in run.stdout
    assert run.stdout.rstrip().endswith("passes the conformance run")


def test_a_package_of_unclear_language_is_refused_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "two"
    folder.mkdir()
    (folder / "bot.py").write_text("")
    (folder / "bot.js").write_text("")
    run = check_bot(str(folder))
    assert run.returncode == 1
    assert "several entry files (bot.py, bot.js)" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
