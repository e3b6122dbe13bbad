"""A PID namespace of a test's own, for the tests of the keepers' sweep of orphaned bots.

Every worker's keeper sweeps the bot processes of its PID namespace whose starter is gone,
whoever started them (saloon.referee.process.orphans): on a host shared with other test
runs (another checkout's, a CI run's, someone's idle worker), their keepers sweep a test's
orphans too, often before the test's own worker looks. A test that asserts which keeper
swept, or that an orphan is still there until it looks, or that nothing but the
parent-death chain ended a bot, runs its processes here: a bot's folder names its
starter's PID namespace, and keepers leave the bots of another namespace alone; the
namespace's own keepers see its processes alone.

Its first process (PID 1) reaps orphans, as a host's init does; ending the namespace
(:meth:`OwnPidNamespace.close`) kills everything in it. Linux, as root (``unshare`` and
``nsenter``, util-linux).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

#: The namespace's PID 1: says it runs once a clock tick has passed since it started (no
#: process started in it later shares its start time: a test names it as a reused pid),
#: then reaps its orphans until killed.
REAPER = """
import os, time
started = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
tick = os.sysconf("SC_CLK_TCK")
for _ in range(200):  # start times count from boot, in ticks (Linux 5.3+)
    if time.clock_gettime(time.CLOCK_BOOTTIME) * tick >= started + 2:
        break
    time.sleep(0.005)
print(os.getpid(), flush=True)
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.1)
"""
#: How long a process the namespace starts takes to show up (it is at once, normally).
SHOW_UP_S = 10.0
#: A keeper's sweep of orphaned bot processes, run in the namespace: prints how many.
SWEEP = "from saloon.referee.process.orphans import sweep_orphans; print(sweep_orphans())"


def _children(pid: int) -> list[int]:
    try:
        return [int(w) for w in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _nspids(pid: int) -> list[int]:
    """Process ``pid``'s pid in each PID namespace it is in, from this one inwards."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("NSpid:"):
            return [int(word) for word in line.split()[1:]]
    raise AssertionError(f"no NSpid for process {pid}")


class OwnPidNamespace:
    """A PID namespace (and a mount namespace with its own /proc) that this test made."""

    def __init__(self) -> None:
        argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "--"]
        self._holder = subprocess.Popen(
            [*argv, sys.executable, "-S", "-c", REAPER], stdout=subprocess.PIPE, text=True
        )
        assert self._holder.stdout is not None
        said = self._holder.stdout.readline().strip()
        assert said == "1", f"the namespace's first process is not its PID 1: {said!r}"
        (self.init,) = _children(self._holder.pid)
        self._level = len(_nspids(self.init)) - 1
        #: What starts a command in the namespace (its processes are children of nsenter
        #: there, which is not: :meth:`inner` finds them).
        self.prefix = [
            "nsenter",
            f"--target={self.init}",
            "--pid",
            "--mount",
            f"--wd={os.getcwd()}",
            "--",
        ]

    def inner(self, proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> int:
        """The pid (here) of the command ``proc`` (started with :attr:`prefix`) runs."""
        deadline = time.monotonic() + SHOW_UP_S
        while not (children := _children(proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(children) == 1, f"nsenter {proc.pid} started {children}"
        return children[0]

    def pid_in(self, pid: int) -> int:
        """Process ``pid``'s pid in the namespace (what it names its bot folders by)."""
        return _nspids(pid)[self._level]

    def kill(self, proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
        """Kill with -9 the command ``proc`` runs in the namespace, and wait for it."""
        os.kill(self.inner(proc), signal.SIGKILL)
        proc.wait(SHOW_UP_S)

    def sweep(self) -> int:
        """Sweep the namespace's orphaned bot processes, as a keeper there does: how many
        were killed."""
        argv = [*self.prefix, sys.executable, "-c", SWEEP]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True)
        return int(done.stdout)

    def close(self) -> None:
        """End the namespace: its PID 1 dies with its holder, and every process in it."""
        if self._holder.poll() is None:
            self._holder.kill()
        self._holder.wait()
        if self._holder.stdout is not None:
            self._holder.stdout.close()

    def __enter__(self) -> OwnPidNamespace:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
