"""Sandboxes: where a submitted bot runs. One interface, two kinds.

* ``docker`` (:mod:`saloon.worker.sandbox.docker`): a locked-down container per bot runtime,
  kept warm per bot version; the production sandbox.
* ``process`` (:mod:`saloon.worker.sandbox.process`): the referee's local process seats
  (saloon.referee.process: a bot runtime in its own process group and PID namespace).
  It is NOT a security boundary: for trying bots on a laptop, never for untrusted code.

A worker opens one sandbox, asks it for a :class:`~saloon.referee.seats.Seat` per bot of a
match, and closes it at shutdown; :meth:`Sandbox.close` removes everything it started.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits
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
