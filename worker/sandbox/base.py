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

from saloon.referee.botprocess import BOT_DIR_PREFIX, BotProcess, pid_namespace, process_start
from saloon.referee.errors import SandboxUnusable
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxInfo, SandboxLimits
from saloon.referee.seats import Seat
from saloon.sdk.languages import Language, ManifestError, detect_path


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
        deal: int | None = None,
    ) -> Seat:
        """A seat for one match on the bot at ``bot_path`` (a package), held to ``limits``.

        ``deal`` names the match's deal (its seed; the matches of a duplicate deal share
        it): the seat's runtime has never played a match of that deal, so nothing a bot
        kept in memory from one rotation of a deal serves it in another.
        """

    @abstractmethod
    def close(self) -> None:
        """Remove every container or process this sandbox started; idempotent."""

    def idle_count(self) -> int:
        """Bot runtimes kept warm, idle, for the next seats (the metrics' warm gauge)."""
        return 0

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
        deal: int | None = None,
    ) -> Seat:
        """A process seat on the bot file or folder at ``bot_path``: a new runtime process
        for this match alone, so it has never played ``deal`` (nothing to check)."""
        from saloon.referee.remote import ProcessSeat
        from saloon.sdk.loader import bot_version as version_of

        seat = ProcessSeat(bot_path, bot_id, limits=limits, process=_process_for(bot_path))
        if bot_version:
            # A stored package (or one being qualified), unpacked in a folder of this
            # worker's: its faults and stderr name it bot/<entry>, never that folder.
            seat.process.show_as(
                "bot" if os.path.isdir(bot_path) else f"bot/{os.path.basename(bot_path)}"
            )
        seat.bot_version = bot_version or version_of(bot_path)
        seat.sandbox = SandboxInfo("process", limits)
        with self._lock:
            # Seats of finished matches are closed already: keep only the open ones.
            self._seats = [s for s in self._seats if not getattr(s, "_closed", False)]
            self._seats.append(seat)
        return seat

    def sweep(self) -> int:
        """Kill the bot processes that processes of this host killed with -9 left running
        (:func:`sweep_orphans`; every worker's keeper runs it, whatever its sandboxes)."""
        return sweep_orphans()

    def close(self) -> None:
        """Close every seat handed out (each kills its process group)."""
        with self._lock:
            seats, self._seats = self._seats, []
        for seat in seats:
            seat.close()


#: ``TMPDIR=<root>/saloon-bot-<pid>-<start>-<pidns>-...`` in a bot process's environment
#: (saloon.referee.botprocess.bot_dir_prefix): what it names is the process that started it.
_BOT_TMPDIR = re.compile(
    rb"(?:^|\0)TMPDIR=([^\0]*/" + BOT_DIR_PREFIX.encode() + rb"(\d+)-(\d+)-(\d+)-[^\0/]*)"
)


def sweep_orphans(proc: str = "/proc") -> int:
    """Kill every bot process of this host whose starter is gone; how many were killed.

    A worker's bot processes die with it (saloon.worker.matches.play.WatchedBotProcess);
    this is the backstop, for any process that started bots (``saloon play`` too) and for
    a bot's descendants that no PID namespace holds. A bot process's TMPDIR names its
    starter by pid, start time and PID namespace: the starter is gone when no process of
    that pid and start time lives (a zombie is gone; a pid now another process's is gone).
    Bots whose starter is of another PID namespace (another container's) are left to the
    keepers there. Each candidate is killed with its process group, and its folder
    removed. Linux (/proc), every uid's only as root: one read of each process's
    environment, a few ms per sweep for a few hundred processes.
    """
    own_ns = pid_namespace(proc=proc)
    try:
        pids = [int(name) for name in os.listdir(proc) if name.isdigit()]
    except OSError:  # no /proc: not Linux
        return 0
    me = os.getpid()
    starters: dict[tuple[int, int], bool] = {}
    killed = 0
    folders: set[str] = set()
    for pid in pids:
        if pid == me:
            continue
        try:
            fd = os.open(f"{proc}/{pid}/environ", os.O_RDONLY)
        except OSError:  # gone, or another uid's (not root)
            continue
        try:
            environ = os.read(fd, 1 << 16)
        except OSError:
            continue
        finally:
            os.close(fd)
        if BOT_DIR_PREFIX.encode() not in environ:
            continue
        found = _BOT_TMPDIR.search(environ)
        if found is None or int(found.group(4)) != own_ns:
            continue
        starter = (int(found.group(2)), int(found.group(3)))
        if starter not in starters:
            starters[starter] = _alive(*starter, proc=proc)
        if starters[starter]:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # its own group, if it leads one
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
        folders.add(found.group(1).decode(errors="replace"))
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
    return killed


def _alive(pid: int, started: int, proc: str) -> bool:
    """True when process ``pid``, started at ``started`` (clock ticks after boot), lives."""
    state = process_start(pid, proc)
    return state is not None and state[0] not in ("Z", "X") and state[1] == started


def _process_for(bot_path: str) -> type[BotProcess]:
    """The runtime process of the bot at ``bot_path``: Python's, or for a JavaScript
    folder the kit's Node.js runtime on this machine's node (saloon.referee.nodeprocess);
    SandboxUnusable when node or the kit's packages are missing here. A folder whose
    language is unclear is left to Python's loader, which says what is wrong."""
    from saloon.referee.nodeprocess import NodeBotProcess, node_unusable

    if not os.path.isdir(bot_path):
        return BotProcess
    try:
        language = detect_path(bot_path).language
    except ManifestError:
        return BotProcess
    if language is not Language.JAVASCRIPT:
        return BotProcess
    reason = node_unusable(language)
    if reason is not None:
        raise SandboxUnusable(f"the process sandbox cannot run JavaScript bots here: {reason}")
    return NodeBotProcess
