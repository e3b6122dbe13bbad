"""The process sandbox, with real bot processes: what a bot starts ends with its match,
sys.exit is a crash, the referee's environment stays out, rlimits hold, and a root referee
runs bots as an unprivileged uid.

Each hostile bot stops itself at a bound when not contained (tests/integration/bots/
sandbox_*.py) and aims only at what its test planted. Processes a bot leaves behind are
found on the host by a token (``saloon-token-<the bot's seed>``) on their command line:
inside a PID namespace a bot cannot know its children's host pids.
"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from saloon.referee.bots import resolve_seat
from saloon.referee.limits import MatchLimits, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.process.bot import BotProcess
from saloon.referee.process.confine import ENV_ALLOW
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.record import MatchRecord
from saloon.referee.seeds import derive_seed

from .helpers import bot, check_record
from .own_pid_namespace import OwnPidNamespace

GAME = "seas-of-strife-v1"
LIMITS = MatchLimits(decision_ms=3_000, bank_ms=10_000, strike_limit=3, start_ms=20_000)
#: Generous on a loaded machine; a leftover child would hold the match for 120 s.
PROMPT_S = 30.0
#: Time the kernel gets to tear a PID namespace down after the match.
REAP_S = 5.0

# Skipped loudly without them, failed under CI=true (CI runs as root on Debian).
needs_pid_namespace = pytest.mark.usefixtures("pid_namespace")
needs_root = pytest.mark.usefixtures("as_root")


def play(
    name: str, seed: int, limits: SandboxLimits | None = None
) -> tuple[MatchRecord, ProcessSeat, float]:
    """One match of the bot ``name`` against two house bots: record, seat, wall time."""
    seat = ProcessSeat(bot(name), limits=limits or SandboxLimits())
    others = [resolve_seat("house:greedy", GAME), resolve_seat("house:random", GAME)]
    started = time.monotonic()
    record = play_match(GAME, [seat, *others], seed, limits=LIMITS)
    return record, seat, time.monotonic() - started


def token_pids(token: str) -> list[int]:
    """Host pids of live processes whose command line carries ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def gone(token: str) -> bool:
    """True once no process carries ``token`` (waiting up to REAP_S)."""
    deadline = time.monotonic() + REAP_S
    while token_pids(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def fresh_seed() -> tuple[int, str]:
    seed = random.randrange(1, 2**31)
    return seed, f"saloon-token-{derive_seed(seed, 'seat:0')}"


@needs_pid_namespace
def test_setsid_child_holding_stderr_neither_delays_the_match_nor_survives_it() -> None:
    seed, token = fresh_seed()
    record, seat, wall_s = play("sandbox_setsid_stderr.py", seed)
    assert f"child alive {token}" in seat.stderr  # the child existed and wrote to stderr
    assert "child detached and alive: True" in seat.stderr
    assert record.faults == []
    assert wall_s < PROMPT_S
    assert gone(token), f"the bot's child outlived the match: {token_pids(token)}"


@needs_pid_namespace
def test_setsid_child_with_closed_files_does_not_survive_the_match() -> None:
    seed, token = fresh_seed()
    record, seat, _ = play("sandbox_setsid_closed.py", seed)
    assert re.search(r"child \d+ detached", seat.stderr)
    assert record.faults == []
    assert gone(token), f"the bot's child outlived the match: {token_pids(token)}"


def test_sys_exit_in_act_is_a_crash_at_once() -> None:
    record, seat, wall_s = play("sandbox_sys_exit.py", 3)
    assert [(f.kind.value, f.seat) for f in record.faults] == [("CRASH", 0)]
    assert "SystemExit" in record.faults[0].detail
    assert "the bot wants out" in record.faults[0].detail
    assert record.faults[0].decision >= 0 and record.played_out == [0]
    assert "Traceback" in seat.stderr
    assert wall_s < PROMPT_S  # not three timeouts of a silent stream
    check_record(record)


def test_keyboard_interrupt_at_match_start_is_a_crash() -> None:
    record, _, _ = play("sandbox_interrupt.py", 3)
    assert [(f.kind.value, f.decision) for f in record.faults] == [("CRASH", -1)]
    assert "KeyboardInterrupt" in record.faults[0].detail


def test_the_referees_environment_stays_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SALOON_TEST_TOKEN", "planted-secret-token")
    monkeypatch.setenv("DATABASE_URL", "postgresql://planted-secret@127.0.0.1/x")
    record, seat, _ = play("sandbox_env.py", 5)
    assert record.faults == []
    assert "SAW THE PLANTED SECRET" not in seat.stderr
    names = re.search(r"env: (.*)", seat.stderr)
    assert names is not None
    seen = set(names.group(1).split(","))
    assert "SALOON_TEST_TOKEN" not in seen and "DATABASE_URL" not in seen
    assert seen <= {*ENV_ALLOW, "HOME", "TMPDIR", "PYTHONUNBUFFERED", "MALLOC_ARENA_MAX"}


@needs_root
def test_a_root_referee_runs_bots_as_an_unprivileged_uid() -> None:
    record, seat, _ = play("sandbox_env.py", 6)
    assert record.faults == []
    ids = re.search(r"uid: (\d+) gid: (\d+) groups: \[(.*)\]", seat.stderr)
    assert ids is not None, seat.stderr
    assert int(ids.group(1)) != 0 and int(ids.group(2)) != 0
    assert int(ids.group(1)) == seat.process.uid
    assert ids.group(3) in ("", ids.group(2))  # no supplementary groups of root's


def test_memory_bomb_is_stopped_at_the_address_space_limit() -> None:
    record, seat, _ = play("sandbox_memory.py", 7, SandboxLimits(memory_mb=128))
    assert "NOT CONTAINED" not in seat.stderr
    assert [f.kind.value for f in record.faults] == ["CRASH"]
    assert "MemoryError" in record.faults[0].detail


@needs_root
def test_fork_bomb_is_bounded_by_the_process_limit() -> None:
    record, seat, wall_s = play("sandbox_fork.py", 9, SandboxLimits(pids=48))
    found = re.search(r"forked (\d+) refused by (.*)", seat.stderr)
    assert found is not None, seat.stderr[-2000:]
    assert int(found.group(1)) < 48 and "BlockingIOError" in found.group(2)
    # The bomb hurts only its own runtime (grpc may fail to start threads): the match ends.
    assert all(f.seat == 0 for f in record.faults)
    assert wall_s < PROMPT_S
    check_record(record)


def test_file_size_limit_stops_a_growing_file() -> None:
    record, seat, _ = play("sandbox_file_size.py", 8, SandboxLimits(tmpfs_mb=4))
    found = re.search(r"wrote (\d+) MiB refused by (.*)", seat.stderr)
    assert found is not None, seat.stderr
    assert int(found.group(1)) <= 4 and "File too large" in found.group(2)
    assert record.faults == []


@needs_pid_namespace
def test_a_runtime_that_leaves_its_process_group_still_ends_with_the_match() -> None:
    seed, token = fresh_seed()
    record, seat, wall_s = play("sandbox_setsid_self.py", seed)
    assert record.faults == [] and wall_s < PROMPT_S
    assert gone(token), f"the bot's child outlived the match: {token_pids(token)}"
    assert gone(str(seat.process.socket_path)), "the bot runtime outlived the match"


@needs_pid_namespace
def test_unshare_sigprocmask_noise_stays_out_of_the_bots_stderr() -> None:
    # unshare 2.38 wrote "sigprocmask unblock failed" into the bot's stderr whenever the
    # runtime died of SIGKILL before unshare did: the kill order (group first) avoids it.
    for seed in range(1, 9):
        _, seat, _ = play("function_bot.py", seed)
        assert "sigprocmask" not in seat.process.stderr.text(), seat.process.stderr.text()
    # A runtime killed alone (here by hand; the CPU limit's SIGKILL does it too) still
    # makes unshare say it: the owner's stderr leaves that line out.
    process = BotProcess(bot("function_bot.py"))
    process.spawn()
    try:
        deadline = time.monotonic() + PROMPT_S
        while not process.socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert process.proc is not None
        for child in (
            Path(f"/proc/{process.proc.pid}/task/{process.proc.pid}/children").read_text().split()
        ):
            os.kill(int(child), signal.SIGKILL)
        process.proc.wait(PROMPT_S)
        time.sleep(0.2)  # the stderr reader reads what unshare wrote
        assert "sigprocmask unblock failed" in process.stderr.text()
        assert "sigprocmask" not in process.stderr_text()
    finally:
        process.kill()


#: A "worker" that starts a bot process with no parent-death watch (a sleeper carrying the
#: token of $SALOON_TEST_TOKEN, which the worker's own command line does not) and sleeps;
#: with argv[2] not 0, the bot's folder names that pid as its starter's, with the starter's
#: own start time (what a starter's pid reused looks like).
ORPHANING_STARTER = """
import os, sys, time
from saloon.referee.process import folders
from saloon.referee.process.bot import BotProcess

bot, token, other = sys.argv[1], os.environ["SALOON_TEST_TOKEN"], int(sys.argv[2])
if other:
    _, _, _, started, namespace, _ = folders.bot_dir_prefix().split("-")
    prefix = f"{folders.BOT_DIR_PREFIX}{other}-{started}-{namespace}-"
    folders.bot_dir_prefix = lambda: prefix
sleeper = [sys.executable, "-c", "import time; time.sleep(120)", token]
process = BotProcess(bot, sleeper)
process.spawn()
print(process.proc.pid, flush=True)
time.sleep(120)
"""


def orphaning_starter(
    token: str, other: int = 0, prefix: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """A started ORPHANING_STARTER whose bot process (the token's) runs; ``prefix``: what
    runs it (an OwnPidNamespace's nsenter)."""
    argv = [*prefix, sys.executable, "-c", ORPHANING_STARTER, bot("function_bot.py"), str(other)]
    env = {**os.environ, "SALOON_TEST_TOKEN": token}
    starter = subprocess.Popen(argv, stdout=subprocess.PIPE, env=env)
    assert starter.stdout is not None
    starter.stdout.readline()
    deadline = time.monotonic() + PROMPT_S
    while not token_pids(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert token_pids(token), "the bot process did not start"
    return starter


# The sweep's tests run their starter and sweeps in a PID namespace of their own: every
# keeper of this host sweeps the orphans of its namespace, so on a host shared with other
# test runs their workers' keepers swept this test's orphans first (or left theirs for
# this test's sweep to count). See tests.integration.own_pid_namespace.


@needs_root
@needs_pid_namespace
def test_bot_processes_whose_worker_died_are_swept() -> None:
    # A "worker" that starts a bot process with no parent-death watch, then dies by kill -9:
    # its bot processes live on until a sweep of this host finds them.
    _, token = fresh_seed()
    with OwnPidNamespace() as ns:
        starter = orphaning_starter(token, prefix=ns.prefix)
        assert ns.sweep() == 0  # its starter lives: left alone
        assert token_pids(token)
        ns.kill(starter)
        assert token_pids(token), "the bot process died with its starter: nothing to sweep"
        assert ns.sweep() >= 1
        assert gone(token), f"the sweep left {token_pids(token)}"


@needs_root
@needs_pid_namespace
def test_a_bot_whose_starters_pid_is_another_processs_now_is_swept() -> None:
    # The pid the bot's folder names lives (the namespace's PID 1), but that process did
    # not start at the time the folder names: the bot's starter is gone, its pid reused.
    _, token = fresh_seed()
    with OwnPidNamespace() as ns:
        orphaning_starter(token, other=1, prefix=ns.prefix)
        assert ns.sweep() >= 1
        assert gone(token), f"the sweep left {token_pids(token)}"


@needs_root
@needs_pid_namespace
def test_a_root_referee_with_a_tmpdir_of_mode_0700_still_plays_path_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = tmp_path / "closed-tmp"
    closed.mkdir(mode=0o700)
    closed.chmod(0o700)
    monkeypatch.setenv("TMPDIR", str(closed))
    monkeypatch.setattr(tempfile, "tempdir", None)  # tempfile caches the temp dir
    assert tempfile.gettempdir() == str(closed)
    record, seat, _ = play("function_bot.py", 5)
    assert record.faults == [], seat.stderr
    assert not str(seat.process.socket_path).startswith(str(closed))


@needs_root
@needs_pid_namespace
def test_a_root_referee_whose_tmpdir_and_tmp_are_closed_fails_in_one_line() -> None:
    # In a mount namespace of its own (this host's /tmp is left as it is): /tmp a tmpfs of
    # mode 0700, and TMPDIR a folder of mode 0700 in it. No folder a bot's uid could enter:
    # `saloon play` with a path bot says so in one line naming the TMPDIR.
    closed = "/tmp/closed-tmp"
    # A checkout under /tmp (a CI clone) would vanish under the tmpfs: it is held on a
    # private tmpfs at /mnt first and bound back at its path.
    root = str(Path(__file__).resolve().parents[2])
    keep = ""
    if root == "/tmp" or root.startswith("/tmp/"):
        keep = (
            "mount -t tmpfs saloon-keep /mnt && mkdir /mnt/keep && "
            f"mount --bind {root} /mnt/keep && "
        )
    back = f"mkdir -p {root} && mount --bind /mnt/keep {root} && " if keep else ""
    setup = (
        f"{keep}mount -t tmpfs -o mode=0700,size=4m saloon-test /tmp && {back}"
        f'mkdir -m 0700 {closed} && TMPDIR={closed} exec "$0" "$@"'
    )
    in_namespace = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", setup]
    seats = ["--seat", bot("function_bot.py"), "--seat", "house:random", "--seat", "house:greedy"]
    done = subprocess.run(
        [*in_namespace, sys.executable, "-m", "saloon.arena.cli", "play", GAME, *seats],
        capture_output=True,
        text=True,
        timeout=PROMPT_S * 2,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [
        f"saloon: error: TMPDIR {closed} is closed to other users and /tmp is unusable: a bot "
        "runs as its own uid and could not read its own files (give TMPDIR mode 0711, or "
        "another TMPDIR)"
    ]
