"""A seat on a bot runtime of the Docker sandbox (see :mod:`saloon.worker.sandbox.docker`).

The seat acquires its runtime in the background at launch (a match's containers start
together), waits for the bot's socket, has the sandbox take the socket directory over,
then plays over the runtime's warm gRPC channel. Any fault marks the runtime for removal;
a clean match gives it back to the warm pool. A seat given its match's deal (the seed) gets a
runtime that has never played that deal.

What the engine does wrong is not the bot's fault: a container that cannot be created or
started, one the engine lost, removed or cannot inspect, raises
:class:`~saloon.worker.errors.SandboxFailed` out of the match (no record; the match job
fails and retries) instead of a CRASH fault in the bot's record.

A cold runtime's start is split in two (saloon.referee.remote.start): the
platform's part, the container up and the runtime serving until it writes its loading
marker (it is about to load the bot), bounded generously and, when overrun, a
SandboxFailed (retried: a loaded machine is not the bot's fault); then the bot's part,
its import and set-up until it is ready, clocked against the match's start time and, when
overrun, a TIMEOUT fault charged to the bot. A warm runtime has loaded its bot already.
"""

from __future__ import annotations

import stat
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from saloon.referee.errors import PlatformStartTimeout
from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.limits import SandboxLimits, platform_start_s
from saloon.referee.process.stderr import LOAD_ERROR
from saloon.referee.remote import (
    BotConnection,
    GrpcSeat,
    connect_unclocked,
    serve_by,
    wait_for_marker,
)
from saloon.referee.seats import DecisionRequest, StartInfo
from saloon.sdk.protocol import loading_marker, unix_target
from saloon.worker.errors import SandboxError, SandboxFailed
from saloon.worker.sandbox.packages import BotPackage

if TYPE_CHECKING:
    from saloon.worker.sandbox.docker import DockerSandbox, Runtime

#: How often a starting seat checks on its container through the engine's API.
ALIVE_POLL_S = 0.1
#: Time a broken stream waits for its container to exit, to report why it died.
EXIT_GRACE_S = 1.0


class DockerSeat(GrpcSeat):
    """A seat on a bot runtime in a container of the Docker sandbox."""

    _launched = 0.0
    _start_s = 0.0

    def __init__(
        self,
        sandbox: DockerSandbox,
        package: BotPackage,
        tag: str,
        bot_id: str,
        limits: SandboxLimits,
        deal: int | None = None,
    ) -> None:
        super().__init__("", bot_id)
        #: The match's deal (its seed): the runtime handed to this seat has never played it.
        self.deal = deal
        self.sandbox_of = sandbox
        self.package = package
        self.tag = tag
        self.limits = limits
        self.sandbox = sandbox.info(limits)
        self.runtime: Runtime | None = None
        self._acquiring: threading.Thread | None = None
        self._acquire_error: str = ""
        self._since: float | None = None
        self._faulted = False
        self._next_alive_check = 0.0
        self._diagnostics = ""
        self._released = False

    # -- acquiring the runtime (in the background: a match's containers start together) ---
    def launch(self) -> None:
        self._launched = time.monotonic()
        if self._acquiring is None:
            self._acquiring = threading.Thread(
                target=self._acquire, name=f"acquire-{self.bot_id}", daemon=True
            )
            self._acquiring.start()

    def _acquire(self) -> None:
        try:
            self.runtime = self.sandbox_of.acquire(self.package, self.tag, self.limits, self.deal)
            # A warm runtime's earlier matches are not this match's diagnostics.
            self._since = None if self.runtime.matches == 1 else time.time()
        except SandboxError as exc:
            self._acquire_error = str(exc)

    # -- the seat interface: any fault marks the runtime for removal -----------------------
    def start(self, info: StartInfo) -> None:
        self._start_s = info.start_ms / 1000
        try:
            super().start(info)
        except (SeatFault, SandboxFailed):
            self._faulted = True
            raise

    def decide(self, request: DecisionRequest) -> int:
        try:
            return super().decide(request)
        except (SeatFault, SandboxFailed):
            self._faulted = True
            raise

    def _connect(self, deadline: float) -> float:
        # The platform's part (module docstring): the container, then the runtime up.
        platform_deadline = self._launched + platform_start_s()
        if self._acquiring is not None:
            self._acquiring.join(max(0.0, platform_deadline - time.monotonic()))
        runtime = self.runtime
        if runtime is None:
            # The engine's doing (the image is built and checked, so a container that
            # cannot be created or started in time is not the bot's): the match retries.
            why = self._acquire_error or "the container did not start in time"
            raise SandboxFailed(f"no bot runtime for {self.bot_id}: {why}")
        if runtime.matches == 1 and not _is_socket(runtime.socket_path):
            marker = Path(loading_marker(str(runtime.socket_path)))
            try:
                seen = wait_for_marker(marker, self._launched, self._check_alive)
            except PlatformStartTimeout as exc:
                self._faulted = True
                raise SandboxFailed(f"{self.bot_id}: {exc}") from None
            deadline = max(deadline, seen + self._start_s)
        # The bot's part: its import and set-up, until it binds its socket (never follow
        # anything that is not a socket) and answers the match start.
        serve_by(
            lambda: _is_socket(runtime.socket_path), self._check_alive, deadline, self._start_s
        )
        self.sandbox_of.lock_socket_dir(runtime)
        if not _is_socket(runtime.socket_path):
            raise SeatFault(FaultKind.INVALID, "the bot replaced its socket", fatal=True)
        self.target = unix_target(str(runtime.socket_path))
        warm = runtime.connection
        if warm is None or warm.closed:
            # The runtime's first match here: open the channel its later matches reuse.
            warm = BotConnection(self.target)
            runtime.connection = warm
        if warm.thread_id == threading.get_ident():
            self.connection = warm
            self._owns_connection = False
        if runtime.matches == 1:  # the bot's set-up is clocked, the referee's connect not
            return connect_unclocked(
                self, runtime.socket_path, deadline, self._start_s, self._check_alive
            )
        return super()._connect(deadline)

    def _check_alive(self) -> None:
        runtime = self.runtime
        if runtime is None:
            return
        ended = self._broken is not None
        now = time.monotonic()
        if not ended and now < self._next_alive_check:
            return
        self._next_alive_check = now + ALIVE_POLL_S
        if ended:
            self.sandbox_of.wait_exit(runtime, EXIT_GRACE_S)
        running, why, engine = self.sandbox_of.state(runtime)
        if running:
            return
        self._faulted = True
        if engine:
            raise SandboxFailed(f"the runtime of {self.bot_id} was lost: {why}")
        logs = self.sandbox_of.logs(runtime, self._since)
        for line in logs.splitlines():  # the runtime's own line: the bot did not load
            if line.startswith(LOAD_ERROR):
                reason = line[len(LOAD_ERROR) :]
                raise SeatFault(FaultKind.CRASH, f"the bot did not load: {reason}")
        tail = logs.strip().replace("\n", " | ")
        raise SeatFault(FaultKind.CRASH, f"{why}: {tail[-400:]}" if tail else why)

    # -- the end of the seat ------------------------------------------------------------
    def close(self) -> None:
        super().close()
        if self._released:
            return
        self._released = True
        if self._acquiring is not None:
            self._acquiring.join()
        runtime = self.runtime
        if runtime is None:
            return
        self._diagnostics = self.sandbox_of.logs(runtime, self._since)
        healthy = not self._faulted and self._finished
        if healthy:
            healthy = self.sandbox_of.state(runtime)[0]
        self.sandbox_of.release(runtime, healthy)

    def diagnostics(self) -> str:
        return self._diagnostics

    def printed_since_start(self) -> str:
        """What the runtime has printed since this seat's match began, read from the engine
        now ('' without a runtime). :meth:`diagnostics` is what had reached the engine's log
        when the seat closed: the engine copies a container's output to its log a moment
        behind, so the last lines of a fast match can be missing there. A warm runtime's
        later matches are in it too once another seat has it."""
        runtime = self.runtime
        return self.sandbox_of.logs(runtime, self._since) if runtime is not None else ""


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except OSError:
        return False
