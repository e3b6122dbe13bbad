"""A seat's start charged to the right party: the platform's part (the runtime's process
or container up, until the runtime says it is about to load the bot) is bounded apart and
its overrun retried, never a fault of the bot's; the bot's part (its import and set-up) is
clocked against the start time and charged to the bot. Under a bounded CPU hog that the
test starts and stops by pid; and in a real worker, whose first bot runtime is slow to
start once (a machine slow for a moment)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.bots import resolve_seat
from saloon.referee.errors import PlatformStartTimeout
from saloon.referee.faults import FaultKind
from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_match
from saloon.referee.process.seat import ProcessSeat
from saloon.sdk.protocol import loading_marker
from saloon.worker.errors import SandboxFailed
from saloon.worker.matches.play import play_spec
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import create, start
from saloon.worker.seasons.schedule import SeasonSpec, expand
from saloon.worker.store.store import Store

from .helpers import bot
from .season_fixtures import Workers, pg_url, queue_name, workers
from .test_season_failures import recorded_once, season, wait_done

__all__ = ["pg_url", "queue_name", "workers"]

GAME = "seas-of-strife-v1"
#: The hog: this many spinning processes per core (load ~16 and more on 2 cores; the arena
#: run that found the fault saw ~30), each ending itself after HOG_S.
HOG_PER_CORE = 12
HOG_S = 120
SLOW_IMPORT = "import time\ntime.sleep(3)\n\n\ndef act(decision):\n    return decision.legal[0]\n"


class CpuHog:
    """Spinning processes (bounded: each exits after HOG_S by itself), stopped by pid."""

    def __init__(self, per_core: int = HOG_PER_CORE) -> None:
        spin = (
            f"import time\nend = time.monotonic() + {HOG_S}\nwhile time.monotonic() < end: pass\n"
        )
        count = per_core * (os.cpu_count() or 1)
        # Each in a session of its own: with the kernel's autogroups, CPU is shared out per
        # session, and the bot runtime has one of its own (its sandbox starts a session).
        self.procs = [
            subprocess.Popen([sys.executable, "-c", spin], start_new_session=True)
            for _ in range(count)
        ]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGKILL)
        for p in self.procs:
            p.wait()


def _play(seat: ProcessSeat, start_ms: int) -> list[tuple[int, FaultKind, int, str]]:
    house = [resolve_seat("house:greedy", GAME), resolve_seat("house:random", GAME)]
    limits = MatchLimits(decision_ms=5000, bank_ms=20_000, start_ms=start_ms)
    record = play_match(GAME, [seat, *house], 3, limits=limits)
    return [(f.seat, f.kind, f.decision, f.detail) for f in record.faults]


def _start_under_a_hog(start_ms: int) -> tuple[float, list[tuple[int, FaultKind, int, str]]]:
    """A match whose first seat's runtime starts under the hog: the platform's part in ms
    (the launch to the runtime's marker), and the match's faults."""
    seat = ProcessSeat(bot("function_bot.py"))
    marker = Path(loading_marker(str(seat.process.socket_path)))
    seen: list[float] = []
    hog = CpuHog()

    def stop_hog_at_the_marker() -> None:
        deadline = time.monotonic() + HOG_S
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.002)
        seen.append(time.monotonic())
        hog.stop()

    watcher = threading.Thread(target=stop_hog_at_the_marker, daemon=True)
    try:
        time.sleep(0.5)  # the hog is spinning
        watcher.start()
        launched = time.monotonic()
        faults = _play(seat, start_ms)
    finally:
        hog.stop()
        watcher.join(10)
    return (seen[0] - launched) * 1000, faults


def test_a_slow_platform_start_under_a_cpu_hog_is_not_the_bots_fault() -> None:
    # The hog loads the machine (as at load ~30 in the arena) while the runtime starts, and
    # is stopped, by pid, once the runtime says it is about to load the bot: the platform's
    # part runs under the hog, the bot's own part does not. The scheduler decides how much
    # the hog slows the start (a CI run saw 1428 ms once): up to 3 tries for one that it
    # slowed past the start time, and none of the tries may charge the bot.
    start_ms = 1500
    tries = []
    for _ in range(3):
        platform_ms, faults = _start_under_a_hog(start_ms)
        tries.append(f"{platform_ms:.0f} ms")
        # One clock from the launch (before) would have charged a slow one to the bot.
        assert faults == [], f"platform part {platform_ms:.0f} ms: {faults}"
        if platform_ms > start_ms:
            break
    else:
        pytest.fail(f"the hog did not slow the start past {start_ms} ms in 3 tries: {tries}")


def test_a_bot_whose_own_import_overruns_the_start_time_is_charged_with_it(
    tmp_path: Path,
) -> None:
    slow = tmp_path / "slow_import.py"
    slow.write_text(SLOW_IMPORT)
    faults = _play(ProcessSeat(str(slow)), start_ms=1000)
    assert [(seat, kind) for seat, kind, _, _ in faults][:1] == [(0, FaultKind.TIMEOUT)], faults
    assert "did not load and serve within its start time (1000 ms)" in faults[0][3]


def test_a_platform_start_past_its_bound_is_retried_not_charged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SALOON_PLATFORM_START_S", "0.001")
    with pytest.raises(PlatformStartTimeout, match="not the bot's fault"):
        _play(ProcessSeat(bot("function_bot.py")), start_ms=10_000)
    # In a season: SandboxFailed, which fails the job and retries the match (no record).
    season = SeasonSpec(
        season_id="platform",
        game=GAME,
        participants=(bot("function_bot.py"), "house:greedy", "house:random"),
        seats=3,
    )
    with pytest.raises(SandboxFailed, match="did not start within"):
        play_spec(expand(season)[0])


#: A sitecustomize that makes the first bot runtime started with it on its PYTHONPATH, and
#: only that one, sleep before it gets as far as loading its bot (the platform's part of
#: the start): the runtime's first start on a machine slow for a moment. The worker, and
#: the sandbox's own steps (python -S), import it too or not at all: only a bot runtime
#: (its TMPDIR is a bot folder) sleeps. A bot's uid writes the flag: ``once/`` is
#: world-writable.
SLOW_ONCE = """
import os, time
if "/saloon-bot-" in os.environ.get("TMPDIR", ""):
    flag = os.path.join(os.path.dirname(os.path.abspath(__file__)), "once", "slept")
    try:
        os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        pass
    else:
        time.sleep(120)
"""
#: The platform's start bound the worker is given ($SALOON_PLATFORM_START_S): generous for
#: a loaded machine's start, short for the test.
WORKER_PLATFORM_START_S = 8


@pytest.fixture
def slow_once() -> Iterator[Path]:
    """A folder for PYTHONPATH with SLOW_ONCE as its sitecustomize, readable by a bot's uid
    (under /tmp: a test's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="saloon-slow-once-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        (folder / "once").mkdir()
        (folder / "once").chmod(0o1777)
        (folder / "sitecustomize.py").write_text(SLOW_ONCE)
        (folder / "sitecustomize.py").chmod(0o644)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_platform_start_overrun_in_a_worker_is_retried_and_never_charged(
    redis_url: str, pg_url: str, queue_name: str, workers: Workers, slow_once: Path
) -> None:
    sid = f"ps{uuid.uuid4().hex[:6]}"
    with Store.open(pg_url) as store:
        create(store, season(sid, (bot("function_bot.py"), "house:random", "house:greedy")))
        start(store, SeasonQueue(connect(redis_url), queue_name), sid, pg_url)
        env = {
            "SALOON_PLATFORM_START_S": str(WORKER_PLATFORM_START_S),
            "PYTHONPATH": str(slow_once),
        }
        workers.start(redis_url, queue_name, env=env)
        wait_done(store, sid, workers, timeout=120)
        recorded_once(store, sid)
        rows = [store.scheduled_match(m.match_id) for m in store.scheduled(sid)]
        # The first match's first attempt overran the platform's start: played again.
        assert sorted(r.attempts for r in rows if r is not None) == [1, 1, 2]
        assert [s.faults for r in store.results(season_id=sid) for s in r.seats] == [0] * 9
    assert (slow_once / "once" / "slept").exists()
    logs = workers.logs()
    assert "retrying after SandboxFailed" in logs, logs
    assert f"did not start within {WORKER_PLATFORM_START_S} s" in logs, logs
