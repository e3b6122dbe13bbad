"""A bot process that dies with the process that started it (a worker), on Linux.

A worker killed with -9 cannot clean up; the bot processes it started must die with it.
:class:`ParentWatch` puts a bot process's whole command line under a parent-death watch
(the program :data:`PROGRAM`, saloon.referee.process.parent_watch) tied to the starting
process; the sandbox's tools pass the signal on (unshare's --kill-child, setpriv's
--pdeathsig), but each sets it again only after a fork or a change of uid has cleared it,
and never checks the parent is still there (and under process-group containment as root,
setpriv's change of uid cleared it for good): a worker that died in between left its
runtime running. So the watch runs again right before the runtime, after the last fork or
change of uid, and checks the worker and the first watch's process (unshare's parent,
which the runtime's signal is tied to) by their pidfds, which work across the runtime's
PID namespace, where the parent's pid is not visible.

A process factory gives its bot processes a watch
(saloon.referee.process.factory.watched_process); a worker's process sandbox is opened
with that factory (saloon.worker.matches.play).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from pathlib import Path

from saloon.referee.errors import SandboxUnusable
from saloon.referee.process.folders import others_can_read
from saloon.referee.process.parent_watch import OWN_PIDFD

#: The watch's program (standard library only), run as a file by this interpreter.
PROGRAM = Path(__file__).resolve().with_name("parent_watch.py")

_pidfd: tuple[int, int] | None = None
_pidfd_lock = threading.Lock()


def own_pidfd() -> int | None:
    """A pidfd of this process (Linux 5.3+; opened once per process, kept open), or None."""
    global _pidfd
    with _pidfd_lock:
        if _pidfd is None or _pidfd[0] != os.getpid():
            try:
                _pidfd = (os.getpid(), os.pidfd_open(os.getpid()))
            except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
                return None
        return _pidfd[1]


@functools.cache
def _readable_by_bots() -> None:
    """SandboxUnusable when a bot's own uid (a root referee's) could not read PROGRAM."""
    if os.geteuid() == 0 and not others_can_read(PROGRAM):
        raise SandboxUnusable(
            f"a bot's uid cannot read {PROGRAM}, the watch its process starts under: give "
            "it and the folders above it o+rx"
        )


class ParentWatch:
    """The parent-death watch's parts of a bot process's command line (Linux; elsewhere
    the command line is left as it is). Stateless: what it ties a process to is the
    process that builds the command line, when it does."""

    def check(self) -> None:
        """SandboxUnusable when the watch could not run here (checked once)."""
        if sys.platform.startswith("linux"):
            _readable_by_bots()

    def around(self, argv: list[str]) -> list[str]:
        """``argv`` (the sandbox's whole command line) started under the watch, tied to
        this process by its pid and its pidfd."""
        if not sys.platform.startswith("linux"):
            return argv
        fd = own_pidfd()
        fds = [] if fd is None else [str(fd)]
        return [*self.command(), str(os.getpid()), *fds, "--", *argv]

    def before_runtime(self, runtime: list[str]) -> list[str]:
        """The runtime's command line under the watch again, for where it runs after the
        last fork or change of uid: tied to this process and the first watch's by their
        pidfds (no pid: the runtime's PID namespace does not see them)."""
        fd = own_pidfd()
        if not sys.platform.startswith("linux") or fd is None:
            return runtime
        return [*self.command(), "0", str(fd), OWN_PIDFD, "--", *runtime]

    def fds(self) -> tuple[int, ...]:
        """This process's pidfd, for the watches to check (the bot process inherits it)."""
        fd = own_pidfd() if sys.platform.startswith("linux") else None
        return () if fd is None else (fd,)

    @staticmethod
    def command() -> list[str]:
        """The watch program's command line, before its arguments."""
        return [sys.executable, "-I", "-S", str(PROGRAM)]


#: The watch of the bot processes this process starts.
PARENT_WATCH = ParentWatch()
