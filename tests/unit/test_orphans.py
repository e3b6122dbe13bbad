"""The sweep of orphaned bot processes (saloon.referee.process.orphans.sweep_orphans) on a
/proc of the test's own making, whose processes are real ones of the test's. Linux."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from saloon.referee.process.folders import BOT_DIR_PREFIX, process_start
from saloon.referee.process.orphans import sweep_orphans

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

#: A group leader that starts a member of its group, says its pid, and exits.
LEADER = "import subprocess; print(subprocess.Popen(['sleep', '60']).pid, flush=True)"
#: Time a killed process takes to end (at once, normally).
END_S = 10.0


@contextlib.contextmanager
def group_without_its_leader() -> Iterator[tuple[int, int]]:
    """A process group whose leader is gone (reaped) and whose member lives: (the group's
    id, the member's pid); the member is killed at the end if it still lives."""
    leader = subprocess.Popen(
        [sys.executable, "-c", LEADER], stdout=subprocess.PIPE, start_new_session=True
    )
    assert leader.stdout is not None
    member = int(leader.stdout.readline())
    leader.stdout.close()
    leader.wait()
    try:
        assert os.getpgid(member) == leader.pid
        yield leader.pid, member
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(member, signal.SIGKILL)


def ended(pid: int) -> bool:
    """True once process ``pid`` is a zombie or gone (waiting up to END_S)."""
    deadline = time.monotonic() + END_S
    while time.monotonic() < deadline:
        state = process_start(pid)
        if state is None or state[0] in ("Z", "X"):
            return True
        time.sleep(0.01)
    return False


def test_a_sweep_counts_an_orphan_whose_group_it_killed_though_the_orphan_was_reaped_first(
    tmp_path: Path,
) -> None:
    # The sweep read an orphan's environment, then killed its group (the orphan leads it):
    # the orphan, dead, was reaped at once by the init that had adopted it (a PID
    # namespace's, or a host's, that waits on its children) before the sweep signalled it
    # alone. It counted 0 and the keeper said nothing of what it had removed (an idle
    # worker's sweep test failed on its log line, its orphan gone). Here the orphan's
    # process is gone before the sweep, its group not: what the sweep met in that race.
    proc = tmp_path / "proc"
    (proc / "self" / "ns").mkdir(parents=True)
    (proc / "self" / "ns" / "pid").touch()
    namespace = (proc / "self" / "ns" / "pid").stat().st_ino
    folder = tmp_path / f"{BOT_DIR_PREFIX}{2**22 + 1}-12345-{namespace}-abc"  # starter gone
    folder.mkdir()
    with group_without_its_leader() as (orphan, member):
        (proc / str(orphan)).mkdir()
        (proc / str(orphan) / "environ").write_bytes(f"HOME=/\0TMPDIR={folder}\0".encode())
        assert sweep_orphans(proc=str(proc)) == 1
        assert ended(member), "the sweep left the orphan's group running"
    assert not folder.exists()
