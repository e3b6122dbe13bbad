"""The parent-death watch's program (saloon.referee.process.parent_watch), run as the
sandbox runs it: a file, under ``python -I -S`` (no site-packages, so nothing of the
project's), before the command it guards. Linux (pidfds, prctl)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from saloon.referee.process.watch import PARENT_WATCH, ParentWatch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

PRINT_ARGS = [sys.executable, "-c", "import sys; print(sys.argv[1:])"]


def run_watch(args: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.CompletedProcess[str]:
    argv = [*ParentWatch.command(), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, pass_fds=pass_fds)


def test_the_watch_runs_on_the_standard_library_alone_and_execs_its_command() -> None:
    done = run_watch([str(os.getpid()), "--", *PRINT_ARGS, "a", "b"])
    assert (done.returncode, done.stdout, done.stderr) == (0, "['a', 'b']\n", "")


def test_the_watch_ends_when_its_parent_is_not_the_one_named() -> None:
    done = run_watch([str(os.getppid()), "--", *PRINT_ARGS, "never"])
    assert (done.returncode, done.stdout) == (1, "")


def test_the_watch_ends_when_a_pidfd_it_hangs_on_is_of_an_ended_process() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    fd = os.pidfd_open(gone.pid)
    try:
        gone.wait()
        done = run_watch(["0", str(fd), "--", *PRINT_ARGS, "never"], pass_fds=(fd,))
    finally:
        os.close(fd)
    assert (done.returncode, done.stdout) == (1, "")


def test_the_first_watch_hands_its_pidfd_to_the_last_which_closes_them_all() -> None:
    # The sandbox's chain: the first watch (tied to this process by pid and pidfd) puts a
    # pidfd of its own in place of the last watch's placeholder; the last one checks both
    # and closes them before the runtime, which holds neither.
    fd = PARENT_WATCH.fds()[0]
    fstat = "import os, sys; [os.fstat(int(a)) for a in sys.argv[1:]]"
    runtime = [sys.executable, "-c", fstat, str(fd)]
    chain = PARENT_WATCH.around(PARENT_WATCH.before_runtime(runtime))
    assert chain[: len(ParentWatch.command())] == ParentWatch.command()
    done = subprocess.run(chain, capture_output=True, text=True, timeout=30, pass_fds=(fd,))
    assert done.returncode == 1 and "Bad file descriptor" in done.stderr
    done = subprocess.run(
        PARENT_WATCH.around(PARENT_WATCH.before_runtime([*PRINT_ARGS, "x"])),
        capture_output=True,
        text=True,
        timeout=30,
        pass_fds=(fd,),
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "['x']\n", "")
