"""A bot that takes its runtime's socket over at start: a fault charged to it within its
start clock, the match finished, nothing left; never a hang. And a ``saloon play`` killed
mid-start leaves nothing either.

Each hostile bot (tests/integration/hostile/raw_socket, full_backlog) binds its own
runtime's socket during its import (the runtime binds it only after the import) and never
returns from the import; each stops at a bound and aims only at the socket its test
planted (``target.json`` names it). They are played by the real ``saloon play``, in the
process sandbox and in the Docker sandbox (the real engine), against house bots.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from saloon.referee.limits import DEFAULT_START_MS
from saloon.referee.process.folders import BOT_DIR_PREFIX, SOCKET_NAME, process_start
from saloon.referee.record import MatchRecord
from saloon.referee.remote.start import NOT_GRPC
from tests import services

from .docker_fixtures import base_image_or_skip, open_test_sandbox
from .helpers import check_record

HOSTILE = Path(__file__).parent / "hostile"
GAME = "seas-of-strife-v1"
#: ``saloon play``'s start clock: the fault must be charged within it.
START_MS = DEFAULT_START_MS
#: No hang: a ``saloon play`` that has not ended by then has hung (it is then killed).
NO_HANG_S = 150.0
SANDBOXES = ["process", "docker"]
#: An honest bot whose import is slow (bounded): a ``saloon play`` killed mid-start.
SLOW_IMPORT = "import time\ntime.sleep(60)\n\n\ndef act(decision):\n    return decision.legal[0]\n"


def planted(tmp_path: Path, name: str) -> Path:
    """A copy of the hostile bot ``name`` aimed at its runtime's socket (target.json)."""
    dest = tmp_path / f"{name}_{uuid.uuid4().hex[:8]}"
    shutil.copytree(HOSTILE / name, dest)
    (dest / "target.json").write_text(json.dumps({"socket": SOCKET_NAME}))
    return dest


def saloon_play(bot: Path, sandbox: str) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "saloon.arena.cli", "play", GAME, "--sandbox", sandbox]
    argv += ["--seat", str(bot), "--seat", "house:random", "--seat", "house:greedy", "--json"]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal sends it, even where this test's own SIGINT is ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    started = process_start(proc.pid)
    STARTED[proc.pid] = started[1] if started else 0
    return proc


#: The start time (clock ticks after boot) of each ``saloon play`` this module ran, by pid:
#: a bot folder is named after its maker's pid *and* start time, and pids are reused (32768
#: of them here), so a folder another run's process of the same pid left is not this one's
#: (regression: test_a_saloon_play_killed_mid_start_leaves_nothing[docker-SIGTERM] once
#: counted a folder a killed test run had left hours before under the same pid).
STARTED: dict[int, int] = {}


def finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """The command's output once it has ended; a hang fails (the command killed by pid)."""
    try:
        return proc.communicate(timeout=NO_HANG_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"saloon play hung: not ended after {NO_HANG_S:.0f} s")


def require(sandbox: str) -> None:
    """Skip loudly (fail in CI) without the Docker engine or the bot base image."""
    if sandbox == "docker":
        probe = open_test_sandbox()
        try:
            base_image_or_skip(probe)
        finally:
            probe.close()


def bot_processes(name: str) -> list[int]:
    """Pids of live bot runtimes (and the sandbox's steps before them) whose command line
    names the bot folder ``name`` (``saloon play``'s own names it too: not counted)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if name.encode() in cmdline and b"saloon.sdk.run" in cmdline and state != "Z":
            found.append(int(entry))
    return found


def left_behind(pid: int, bot: Path) -> list[str]:
    """What a ``saloon play`` of pid ``pid`` left: bot processes, bot folders, containers
    and volumes carrying its labels."""
    left = [f"process {p}" for p in bot_processes(bot.name)]
    for root in {tempfile.gettempdir(), "/tmp"}:
        mine = (
            f"{BOT_DIR_PREFIX}{pid}-{STARTED[pid]}-"
            if pid in STARTED
            else f"{BOT_DIR_PREFIX}{pid}-"
        )
        left += [f"folder {n}" for n in os.listdir(root) if n.startswith(mine)]
    if services.missing("docker") is None:
        import docker

        client = docker.from_env()
        try:
            labels = {"label": ["saloon=1", f"saloon.pid={pid}"]}
            left += [
                f"container {c['Id'][:12]}" for c in client.api.containers(all=True, filters=labels)
            ]
            volumes = client.api.volumes(filters=labels).get("Volumes") or []
            left += [f"volume {v['Name'][:12]}" for v in volumes]
        finally:
            client.close()
    return left


def runtime_started(pid: int, bot: Path, sandbox: str) -> bool:
    """True once the bot's runtime runs (its process, or its container)."""
    if sandbox == "process":
        return bool(bot_processes(bot.name))
    import docker

    client = docker.from_env()
    try:
        labels = {"label": ["saloon=1", f"saloon.pid={pid}"], "status": ["running"]}
        return bool(client.api.containers(filters=labels))
    finally:
        client.close()


def played(stdout: str) -> MatchRecord:
    record = MatchRecord.from_json(json.loads(stdout))
    check_record(record)
    return record


def faults(record: MatchRecord) -> list[tuple[int, str, int, str]]:
    return [(f.seat, f.kind.value, f.decision, f.detail) for f in record.faults]


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_bot_answering_raw_bytes_at_start_no_longer_hangs_saloon_play(
    tmp_path: Path, sandbox: str
) -> None:
    require(sandbox)
    bot = planted(tmp_path, "raw_socket")
    proc = saloon_play(bot, sandbox)
    stdout, stderr = finish(proc)
    assert proc.returncode == 3, stderr
    assert "raw_socket: answering garbage on bot.sock" in stderr  # the attack took place
    record = played(stdout)
    assert faults(record) == [(0, "INVALID", -1, NOT_GRPC)], stderr
    assert record.played_out == [0]
    assert record.scores and record.abort_reason is None  # the match was played out
    # Charged within the bot's start clock: the whole match (the runtime's start too)
    # took less than the start time alone.
    assert record.timing["match_ms"] < START_MS, record.timing["match_ms"]
    assert left_behind(proc.pid, bot) == []


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_bot_whose_socket_never_accepts_no_longer_hangs_saloon_play(
    tmp_path: Path, sandbox: str
) -> None:
    # Its backlog full, a blocking connect to its socket never returned: the process
    # sandbox's check that the socket serves waited for good.
    require(sandbox)
    bot = planted(tmp_path, "full_backlog")
    proc = saloon_play(bot, sandbox)
    stdout, stderr = finish(proc)
    assert proc.returncode == 3, stderr
    assert "full_backlog: " in stderr and " queued on bot.sock" in stderr
    record = played(stdout)
    [(seat, kind, decision, detail)] = faults(record)
    assert (seat, kind, decision) == (0, "TIMEOUT", -1), stderr
    assert f"within its start time ({START_MS} ms)" in detail
    assert record.played_out == [0]
    assert record.scores and record.abort_reason is None
    # The start clock, then the handshake probe's last wait and the match: well inside.
    assert record.timing["match_ms"] < START_MS + 5_000, record.timing["match_ms"]
    assert left_behind(proc.pid, bot) == []


@pytest.mark.parametrize(
    ("sandbox", "signum", "status"),
    [
        ("process", signal.SIGTERM, 143),
        ("docker", signal.SIGTERM, 143),
        ("docker", signal.SIGINT, 130),
    ],
    ids=["process-SIGTERM", "docker-SIGTERM", "docker-SIGINT"],
)
def test_a_saloon_play_killed_mid_start_leaves_nothing(
    tmp_path: Path, sandbox: str, signum: int, status: int
) -> None:
    require(sandbox)
    bot = tmp_path / f"slow_import_{uuid.uuid4().hex[:8]}"
    bot.mkdir()
    (bot / "bot.py").write_text(SLOW_IMPORT)
    proc = saloon_play(bot, sandbox)
    until = time.monotonic() + 60
    while not runtime_started(proc.pid, bot, sandbox):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < until, "the bot's runtime never started"
        time.sleep(0.05)
    time.sleep(0.5)  # the seat waits for the bot's import
    proc.send_signal(signum)
    _stdout, stderr = finish(proc)
    assert proc.returncode == status, stderr
    assert left_behind(proc.pid, bot) == []
