"""The local process sandbox: each seat a bot runtime process (not a security boundary).

The processes, their limits and their seats are the referee's
(saloon.referee.process); this is the worker's :class:`~saloon.worker.sandbox.base.Sandbox`
over them, which makes each seat's process with the factory it was opened with: by the
bot's language (:func:`~saloon.referee.process.factory.sandbox_process`, the default), or
a worker's, under its parent-death watch
(:func:`~saloon.referee.process.factory.watched_process`, saloon.worker.matches.play).
"""

from __future__ import annotations

import os
import threading

from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxInfo, SandboxLimits
from saloon.referee.process.factory import ProcessFactory, sandbox_process
from saloon.referee.process.orphans import sweep_orphans
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.seats import Seat
from saloon.sdk.loader import bot_version as version_of
from saloon.worker.sandbox.base import Sandbox


class ProcessSandbox(Sandbox):
    """The local process sandbox: each seat a bot runtime process (not a security boundary)."""

    kind = "process"

    def __init__(self, process: ProcessFactory = sandbox_process) -> None:
        """``process`` makes each seat's bot process (saloon.referee.process.factory)."""
        self.process = process
        self._seats: list[ProcessSeat] = []
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
        seat = ProcessSeat(bot_path, bot_id, limits=limits, process=self.process)
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
            self._seats = [s for s in self._seats if not s.closed]
            self._seats.append(seat)
        return seat

    def sweep(self) -> int:
        """Kill the bot processes that processes of this host killed with -9 left running
        (:func:`~saloon.referee.process.orphans.sweep_orphans`; every worker's keeper runs
        it, whatever its sandboxes)."""
        return sweep_orphans()

    def close(self) -> None:
        """Close every seat handed out (each kills its process group)."""
        with self._lock:
            seats, self._seats = self._seats, []
        for seat in seats:
            seat.close()
