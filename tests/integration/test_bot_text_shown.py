"""Bot text in terminals and logs, and the paths in fault details (issue 32, "Defects"):
``saloon play`` and the worker's log printed a bot's ANSI escapes and bidi overrides raw,
and a process-sandboxed stored bot's fault named the sandbox's temporary folder
(``saloon-bot-<pid>-…/bot/<hash>…``, cut mid-hash) instead of the bot's own file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from saloon.arena.registry import Registry
from saloon.referee.process.folders import BOT_DIR_PREFIX
from saloon.referee.record import MatchRecord
from saloon.referee.shown import shown
from saloon.worker.matches.play import play_spec
from saloon.worker.matches.spec import MatchSpec, SandboxKind
from saloon.worker.queue.jobs import stored_resolver
from saloon.worker.sandbox.packages import load_package
from saloon.worker.store.store import Store

GAME = "western-showdown-v1"
#: A right-to-left override, a clear-screen, a window retitle ended by BEL, a C1 CSI.
HOSTILE = "\u202egnp.exe \x1b[2J\x1b]0;owned\x07 \x9b31m"
RAW = ("\u202e", "\x1b", "\x07", "\x9b")
#: Prints HOSTILE to stderr at each decision, raises it at its first.
BOT = f"""
import sys
from saloon.sdk import Bot


class Hostile(Bot):
    def act(self, decision):
        print({HOSTILE!r}, file=sys.stderr)
        raise RuntimeError({HOSTILE!r})
"""


def hostile_bot(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "hostile.py"
    path.write_text(BOT)
    return path


def saloon(*args: str) -> subprocess.CompletedProcess[bytes]:
    """The ``saloon`` command in its own process, its output as the terminal gets it."""
    return subprocess.run(
        [sys.executable, "-m", "saloon.arena.cli", *args],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip


def assert_shown(output: bytes) -> None:
    text = output.decode()
    assert not [c for c in RAW if c in text], [hex(ord(c)) for c in RAW if c in text]
    assert "\\u202egnp.exe \\x1b[2J\\x1b]0;owned\\x07 \\x9b31m" in text


def test_saloon_play_prints_no_bot_controlled_escapes(tmp_path: Path) -> None:
    bot = hostile_bot(tmp_path / "mine")
    done = saloon("play", GAME, "--seat", str(bot), "--seat", "house:random", "--seed", "3")
    assert done.returncode == 3, done.stderr  # a seat crashed
    assert_shown(done.stdout)  # the log's fault
    assert_shown(done.stderr)  # the seat's problem line and its stderr
    # The fault names the author's own file, never the sandbox's copy of it.
    assert f"{bot}:".encode() in done.stderr and BOT_DIR_PREFIX.encode() not in done.stderr
    assert BOT_DIR_PREFIX.encode() not in done.stdout
    record = tmp_path / "m.json"
    again = saloon("play", GAME, "--seat", str(bot), "--seat", "house:random", "--out", str(record))
    assert again.returncode == 3
    replayed = saloon("replay", str(record), "--as-seat", "0")
    assert replayed.returncode == 0, replayed.stderr
    assert_shown(replayed.stdout)  # the fault and what the seat printed, as it saw them
    # The record keeps what the bot sent.
    assert HOSTILE in MatchRecord.load(str(record)).faults[0].detail


def test_the_worker_log_prints_no_bot_controlled_escapes(tmp_path: Path) -> None:
    bot = hostile_bot(tmp_path / "mine")
    done = saloon(
        "season", "run", "s1", "--game", GAME, "--bot", str(bot), "--bot", "house:random",
        "--store", str(tmp_path / "s.db"), "--local", "--sandbox", "process",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    fault_lines = [line for line in done.stderr.decode().splitlines() if "CRASH" in line]
    assert fault_lines, done.stderr  # the referee's warning, one per match
    assert_shown(done.stderr)
    assert BOT_DIR_PREFIX.encode() not in done.stderr


def test_a_stored_bots_fault_names_bot_slash_its_file_not_the_sandbox_folder(
    tmp_path: Path,
) -> None:
    # A stored folder bot seated by the process sandbox is copied to
    # saloon-bot-<pid>-.../bot/<package digest>/; its fault named that folder, cut mid-hash.
    folder = tmp_path / "pkg"
    hostile_bot(folder).rename(folder / "bot.py")
    (folder / "helper.py").write_text("X = 1\n")
    with Store.open(str(tmp_path / "s.db")) as store:
        registry = Registry(store)
        registry.add_user("alice")
        package = load_package(folder)
        row, _ = registry.accept("alice", "hostile", GAME, package, {})
        ref = f"bot:hostile@{row.version}"
        spec = MatchSpec("m1", GAME, (ref, "house:random"), 5, sandbox=SandboxKind.PROCESS)
        played = play_spec(spec, stored_resolver(store))
        unpacked = registry.unpacked(ref)
    fault = played.record.faults[0]
    assert fault.seat == 0 and "at bot/bot.py:" in fault.detail, fault.detail
    for text in (fault.detail, played.stderr[0]):
        assert BOT_DIR_PREFIX not in text and unpacked not in text and str(tmp_path) not in text
    assert 'File "bot/bot.py", line' in played.stderr[0]  # the traceback on its stderr too
    assert shown(HOSTILE) in shown(fault.detail)


def test_shown_escapes_are_character_codes() -> None:
    assert shown("a\u202eb\x1bc\x9bd\te\nf\rg") == "a\\u202eb\\x1bc\\x9bd\te\nf\\x0dg"
    assert shown("plain é · … → עברית") == "plain é · … → עברית"


@pytest.mark.parametrize(
    "text",
    ["plain", HOSTILE, "tab\tnl\n", "cr\rbs\bff\f", "\\u001b literal", "\\\x1b", "\\\\\x1b",
     "\\" * 7 + "\x1b", "\\b\b", "é·…\u2013\u00a0", "\u2066\u2069\u200e\u200f\u061c\x7f"],
)  # fmt: skip
def test_json_answers_escape_every_string_as_shown_does(text: str) -> None:
    import json

    import orjson

    from saloon.referee.shown import shown_json

    value = {"k": [text, 1, {"n": text}], text: None}
    for body in (
        orjson.dumps(value),
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(),
    ):
        assert orjson.loads(shown_json(body)) == {
            "k": [shown(text), 1, {"n": shown(text)}],
            shown(text): None,
        }
    long_run = orjson.dumps("\\" * 100_000 + "\x1b")  # linear, whatever the run
    assert orjson.loads(shown_json(long_run)) == "\\" * 100_000 + "\\x1b"


def test_a_refused_submission_prints_its_faults_and_stderr_shown_and_named_bot_slash(
    tmp_path: Path,
) -> None:
    import os

    bot = hostile_bot(tmp_path / "mine")
    env = {**os.environ, "SALOON_CONFIG": str(tmp_path / "none.toml"), "SALOON_SERVER": ""}
    done = subprocess.run(
        [sys.executable, "-m", "saloon.arena.cli", "submit", str(bot), "--game", GAME,
         "--name", "hostile", "--store", str(tmp_path / "s.db"), "--sandbox", "process"],
        capture_output=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout  # it crashed in its qualification match
    assert_shown(done.stdout)  # the fault and the bot's stderr
    assert b"at bot/hostile.py:" in done.stdout, done.stdout
    assert BOT_DIR_PREFIX.encode() not in done.stdout and b"saloon-qualify-" not in done.stdout
