"""JavaScript bots in the process sandbox: a kit bot (``saloon new GAME DIR --lang js``)
runs on the machine's node under the same sandbox as a Python bot, plays every game with
no fault, and passes ``saloon check-bot DIR --sandbox process``; what it cannot run
(TypeScript, no node) is refused in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from saloon.referee.bots import resolve_seat
from saloon.referee.errors import BotSpecError
from saloon.referee.faults import FaultKind
from saloon.referee.limits import SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.process.node import (
    NODE_ADDRESS_SPACE_HEADROOM_MB,
    NodeBotProcess,
    node_unusable,
)
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.process.watch import ParentWatch
from saloon.referee.replay import verify
from saloon.sdk.languages import Language
from saloon.worker.matches.play import seat_for
from saloon.worker.sandbox import SandboxKind
from tests import services

GAMES = {"seas-of-strife-v1": 3, "seizure-v1": 3, "western-showdown-v1": 2}


def saloon(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "saloon.arena.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def node_or_skip() -> None:
    reason = node_unusable(Language.JAVASCRIPT)
    if reason is not None:
        if services.in_ci():
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(f"SKIPPED, NEEDS NODE: {reason}")


def kit_bot(tmp_path: Path, game: str, lang: str = "js") -> Path:
    folder = tmp_path / f"{game}-{lang}"
    made = saloon("new", game, str(folder), "--lang", lang)
    assert made.returncode == 0, made.stderr
    return folder


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_js_kit_bot_plays_each_game_in_the_process_sandbox_with_no_fault(
    tmp_path: Path, game: str
) -> None:
    node_or_skip()
    bot = kit_bot(tmp_path, game)
    seat = resolve_seat(str(bot), game)
    assert isinstance(seat, ProcessSeat) and isinstance(seat.process, NodeBotProcess)
    others = [resolve_seat("house:greedy", game) for _ in range(GAMES[game] - 1)]
    try:
        record = play_match(game, [seat, *others], seed=7)
    finally:
        seat.close()
    assert record.faults == [], record.faults
    assert record.played_out == []
    assert any(entry.seat == 0 and not entry.auto for entry in record.log)
    verify(record)


def test_a_js_bot_runs_under_the_sandboxs_limits(tmp_path: Path) -> None:
    node_or_skip()
    process = NodeBotProcess(str(kit_bot(tmp_path, "seizure-v1")))
    try:
        argv = process.argv()
        assert any(arg.startswith("--as=") for arg in argv)
        assert f"--max-old-space-size={process.limits.memory_mb}" in argv
        assert argv[-2:] == ["--socket", str(process.socket_path)]
    finally:
        process.kill()


def test_check_bot_passes_a_js_kit_bot_in_the_process_sandbox(tmp_path: Path) -> None:
    node_or_skip()
    bot = kit_bot(tmp_path, "seizure-v1")
    run = saloon("check-bot", str(bot), "--sandbox", "process", "--matches", "1")
    assert run.returncode == 0, run.stdout + run.stderr
    for game in GAMES:
        assert f"{game}: 1 matches, 1 completed" in run.stdout
    assert run.stdout.rstrip().endswith("passes the conformance run")


def test_a_typescript_bot_in_the_process_sandbox_is_refused_in_one_line(tmp_path: Path) -> None:
    bot = kit_bot(tmp_path, "seizure-v1", "ts")
    with pytest.raises(BotSpecError, match="--sandbox docker"):
        resolve_seat(str(bot), "seizure-v1")
    run = saloon("play", "seizure-v1", "--seat", str(bot), "--seat", "house:random")
    assert run.returncode != 0
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert "--sandbox docker" in run.stderr


def test_a_js_bot_without_node_on_path_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = kit_bot(tmp_path, "seizure-v1")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BotSpecError, match="no node on PATH"):
        resolve_seat(str(bot), "seizure-v1")


def test_a_js_bot_over_its_memory_limit_crashes_and_the_match_goes_on(tmp_path: Path) -> None:
    node_or_skip()
    bot = tmp_path / "hog"
    bot.mkdir()
    # Stops itself at 1 GiB held (a bound), far over the 64 MiB heap limit it is given.
    (bot / "bot.js").write_text(
        "const held = [];\n"
        "module.exports.act = (decision) => {\n"
        "  for (let i = 0; i < 1024; i++) held.push(new Array(128 * 1024).fill(i));\n"
        "  return decision.legal[0];\n"
        "};\n"
    )
    seat = ProcessSeat(str(bot), limits=SandboxLimits(memory_mb=64), process=NodeBotProcess)
    game = "western-showdown-v1"
    try:
        record = play_match(game, [seat, resolve_seat("house:greedy", game)], seed=3)
    finally:
        seat.close()
    assert [fault.kind for fault in record.faults] == [FaultKind.CRASH]
    assert record.played_out == [0]
    assert "heap out of memory" in seat.stderr
    verify(record)


@pytest.mark.parametrize("game", ["western-showdown-v1"])
def test_a_workers_process_sandbox_plays_a_js_bot_under_its_parent_death_watch(
    tmp_path: Path, game: str
) -> None:
    node_or_skip()
    bot = kit_bot(tmp_path, game)
    seat = seat_for(str(bot), game, SandboxKind.PROCESS, SandboxLimits())
    assert isinstance(seat, ProcessSeat) and isinstance(seat.process.watch, ParentWatch)
    assert isinstance(seat.process, NodeBotProcess)
    assert seat.process.address_space_headroom_mb == NODE_ADDRESS_SPACE_HEADROOM_MB
    try:
        record = play_match(game, [seat, resolve_seat("house:greedy", game)], seed=5)
    finally:
        seat.close()
    assert record.faults == [] and record.played_out == []


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_js_starter_beats_house_random_where_it_used_to_lose_to_it(
    tmp_path: Path, game: str
) -> None:
    """The JavaScript starters once lost to house:random (Seizure 0.31); they now play the
    Go starters' heuristics. 12 matches a game, seed 0 (deterministic): better than the
    random seats at p < 0.05. (The TypeScript starters are the same moves, typed.)"""
    node_or_skip()
    bot = kit_bot(tmp_path, game)
    run = saloon("eval", str(bot), "--game", game, "--vs", "house:random", "-n", "12", "--json")
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["faulted"] == 0 and summary["failed"] == 0
    assert summary["better"] > summary["worse"], summary
    assert summary["p_value"] < 0.05, summary
