"""``saloon eval`` never waits for good: a process playing its matches that dies (killed,
out of memory) stops the evaluation with one clear error. The worker process is killed by
this test, by its pid; the bot processes it left are swept by their starter's death."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from saloon.referee import evaluate
from saloon.referee.errors import RefereeError
from saloon.referee.limits import MatchLimits
from saloon.referee.process.orphans import sweep_orphans

GAME = "seas-of-strife-v1"
#: A bot slow enough (0.2 s a decision, ~3 s a match) that a match is running when killed.
SLOW = "import time\n\n\ndef act(decision):\n    time.sleep(0.2)\n    return decision.legal[0]\n"
LIMITS = MatchLimits(decision_ms=2_000, bank_ms=0, start_ms=10_000)
#: Well under a match's bound (minutes): the death is seen at once.
STOPPED_WITHIN_S = 30.0


def test_an_evaluation_whose_match_process_died_no_longer_waits_for_good(
    tmp_path: Path,
) -> None:
    # multiprocessing.Pool.imap_unordered waited for the dead process's result for good.
    bot = tmp_path / f"slow_{os.getpid()}.py"
    bot.write_text(SLOW)
    matches = evaluate.schedule(str(bot), ["house:random"], 3, 6, seed=1, duplicate=False)
    before = set(multiprocessing.active_children())
    errors: list[BaseException] = []

    def play() -> None:
        try:
            evaluate.play_all(GAME, matches, limits=LIMITS, jobs=2)
        except BaseException as exc:
            errors.append(exc)

    runner = threading.Thread(target=play, daemon=True)
    runner.start()
    until = time.monotonic() + 60
    while len(set(multiprocessing.active_children()) - before) < 2:
        assert runner.is_alive() and time.monotonic() < until, errors
        time.sleep(0.05)
    time.sleep(2.0)  # both processes are playing a match
    victim = sorted(set(multiprocessing.active_children()) - before, key=lambda p: p.pid)[0]
    killed = time.monotonic()
    assert victim.pid is not None
    os.kill(victim.pid, signal.SIGKILL)
    runner.join(STOPPED_WITHIN_S)
    try:
        assert not runner.is_alive(), "the evaluation still waits for the dead process"
        assert time.monotonic() - killed < STOPPED_WITHIN_S
        [error] = errors
        assert isinstance(error, RefereeError)
        assert "a process playing the evaluation's matches died" in str(error)
    finally:
        # The runtimes of the dead (and the stopped) process: their starter is gone.
        until = time.monotonic() + 10
        while set(multiprocessing.active_children()) - before and time.monotonic() < until:
            time.sleep(0.05)
        sweep_orphans()
    assert not set(multiprocessing.active_children()) - before
    assert runtimes_of(bot.name) == []


def runtimes_of(name: str) -> list[int]:
    """Pids of live bot runtimes whose command line names ``name``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes() if entry.isdigit() else b""
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if name.encode() in cmdline and b"saloon.sdk.run" in cmdline and state != "Z":
            found.append(int(entry))
    return found


def test_a_match_bound_covers_its_clocks() -> None:
    bound = evaluate.match_bound_s(GAME, 3, LIMITS)
    assert bound > 3 * LIMITS.start_ms / 1000 + evaluate.MATCH_SLACK_S
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SALOON_PLATFORM_START_S", "1")
        assert evaluate.match_bound_s(GAME, 3, LIMITS) == bound - 3 * 2 * (60 - 1)
