"""Sandboxes: where a submitted bot runs. One interface, two kinds.

* ``docker`` (:mod:`saloon.worker.sandbox.docker`): a locked-down container per bot runtime,
  kept warm per bot version; the production sandbox.
* ``process``: the referee's local process seat (a bot runtime in its own process group).
  It is NOT a security boundary: for trying bots on a laptop, never for untrusted code.

A worker opens one sandbox, asks it for a :class:`~saloon.referee.seats.Seat` per bot of a
match, and closes it at shutdown; :meth:`Sandbox.close` removes everything it started.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import threading
from abc import ABC, abstractmethod
from pathlib import Path

from saloon.referee.botprocess import BOT_DIR_PREFIX
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxInfo, SandboxLimits
from saloon.referee.seats import Seat


class Sandbox(ABC):
    """Starts bot runtimes and hands out seats on them."""

    #: ``process`` or ``docker``.
    kind: str

    @abstractmethod
    def seat(
        self,
        bot_path: str,
        bot_id: str,
        bot_version: str = "",
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
    ) -> Seat:
        """A seat for one match on the bot at ``bot_path`` (a package), held to ``limits``."""

    @abstractmethod
    def close(self) -> None:
        """Remove every container or process this sandbox started; idempotent."""

    def sweep(self) -> int:
        """Remove what processes of this host that are gone left behind (a worker killed
        with -9 leaves its bot containers running); how many. Workers' keepers call it
        every few seconds."""
        return 0

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class ProcessSandbox(Sandbox):
    """The local process sandbox: each seat a bot runtime process (not a security boundary)."""

    kind = "process"

    def __init__(self) -> None:
        self._seats: list[Seat] = []
        self._lock = threading.Lock()  # the arena qualifies submissions on several threads

    def seat(
        self,
        bot_path: str,
        bot_id: str,
        bot_version: str = "",
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
    ) -> Seat:
        """A process seat on the bot file or folder at ``bot_path``."""
        from saloon.referee.remote import ProcessSeat
        from saloon.sdk.loader import bot_version as version_of

        seat = ProcessSeat(bot_path, bot_id, limits=limits)
        seat.bot_version = bot_version or version_of(bot_path)
        seat.sandbox = SandboxInfo("process", limits)
        with self._lock:
            # Seats of finished matches are closed already: keep only the open ones.
            self._seats = [s for s in self._seats if not getattr(s, "_closed", False)]
            self._seats.append(seat)
        return seat

    def sweep(self) -> int:
        """Kill the bot processes that workers of this host killed with -9 left running.

        Their processes are killed with their worker (the parent-death signal, then
        unshare's --kill-child), but that chain has windows a death can fall into; a bot
        process's TMPDIR names the pid of the process that started it
        (saloon.referee.botprocess.bot_dir_prefix): one whose starter is gone is killed
        with its process group, and its folder removed.
        """
        return sweep_orphans()

    def close(self) -> None:
        """Close every seat handed out (each kills its process group)."""
        with self._lock:
            seats, self._seats = self._seats, []
        for seat in seats:
            seat.close()


#: ``TMPDIR=<root>/saloon-bot-<pid>-...`` in a bot process's environment.
_BOT_TMPDIR = re.compile(rb"(?:^|\0)TMPDIR=([^\0]*/" + BOT_DIR_PREFIX.encode() + rb"(\d+)-[^\0/]*)")


def sweep_orphans(proc: Path = Path("/proc")) -> int:
    """Kill every bot process of this host whose starting process is gone (Linux: /proc;
    readable for every uid only as root); how many were killed."""
    killed = 0
    folders: set[str] = set()
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            found = _BOT_TMPDIR.search((entry / "environ").read_bytes())
        except OSError:  # gone, or another uid's (not root)
            continue
        if found is None or (proc / found.group(2).decode()).exists():
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(int(entry.name), signal.SIGKILL)  # its own group, if it leads one
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(int(entry.name), signal.SIGKILL)
            killed += 1
        folders.add(found.group(1).decode(errors="replace"))
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return killed
