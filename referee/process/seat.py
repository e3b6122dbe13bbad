"""A bot file or folder run as its own runtime process (the process sandbox), as a seat.

The process itself (its limits, containment, uid, stderr) is
:class:`~saloon.referee.process.bot.BotProcess`, made by the seat's process factory
(saloon.referee.process.factory); the seat launches it, waits for it to
serve (saloon.referee.remote.start: the platform's part bounded apart, the bot's import
and set-up on its start clock), then plays over gRPC (saloon.referee.remote.seat) and
kills it when the seat closes. Faults and stderr name the bot by its author's path, never
by the sandbox's copy.
"""

from __future__ import annotations

import time
from pathlib import Path

from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits
from saloon.referee.process.bot import BotProcess
from saloon.referee.process.factory import ProcessFactory
from saloon.referee.remote.seat import GrpcSeat
from saloon.referee.remote.start import (
    NOT_GRPC,
    accepts,
    answers_garbage,
    connect_unclocked,
    serve_by,
    wait_for_marker,
)
from saloon.referee.seats import DecisionRequest, StartInfo
from saloon.sdk.protocol import loading_marker, unix_target


class ProcessSeat(GrpcSeat):
    """A bot file or folder run as its own runtime process (the process sandbox)."""

    _launched = 0.0
    _start_s = 0.0

    def __init__(
        self,
        bot_path: str,
        bot_id: str | None = None,
        command: list[str] | None = None,
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
        process: ProcessFactory = BotProcess,
    ) -> None:
        """``command`` replaces the runtime's command line (see BotProcess); ``process``
        makes the seat's runtime process (a ProcessFactory: BotProcess, a subclass of it,
        or a factory of saloon.referee.process.factory)."""
        self.process = process(bot_path, command, limits)
        super().__init__(unix_target(self.process.socket_path), bot_id or bot_path)

    def launch(self) -> None:
        self._launched = time.monotonic()
        self.process.spawn()

    def _connect(self, deadline: float) -> float:
        if not self.process.announces_loading:  # a command of the caller's: one clock
            self._serve_by(deadline)
            return self.open_stream(deadline)
        # The platform's part first (saloon.referee.remote.start); the bot's clock starts
        # when the runtime says it is about to load the bot.
        marker = Path(loading_marker(str(self.process.socket_path)))
        seen = wait_for_marker(marker, self._launched, self._check_alive)
        deadline = max(deadline, seen + self._start_s)
        self._serve_by(deadline)
        return connect_unclocked(
            self, self.process.socket_path, deadline, self._start_s, self._check_alive
        )

    def _serve_by(self, deadline: float) -> None:
        """Wait until the socket accepts connections (connecting earlier only adds gRPC's
        reconnect back-off); a TIMEOUT of the bot's at ``deadline``."""
        serve_by(
            lambda: accepts(self.process.socket_path), self._check_alive, deadline, self._start_s
        )

    def _check_alive(self) -> None:
        code = self.process.exit_code()
        if code is not None:
            reason = self.process.load_error()
            if reason is not None:
                raise SeatFault(FaultKind.CRASH, f"the bot did not load: {reason}")
            raise SeatFault(
                FaultKind.CRASH,
                f"bot process exited with code {code}: {self.process.stderr_tail()}",
            )

    def start(self, info: StartInfo) -> None:
        self._start_s = info.start_ms / 1000
        try:
            super().start(info)
        except SeatFault as fault:
            raise self._authored(fault) from None

    def decide(self, request: DecisionRequest) -> int:
        try:
            return super().decide(request)
        except SeatFault as fault:
            raise self._authored(fault) from None

    def _authored(self, fault: SeatFault) -> SeatFault:
        """The fault with the sandbox's copy of the bot named by the author's path."""
        detail = self.process.authored(fault.detail)
        return SeatFault(fault.kind, detail, fatal=fault.fatal)

    def _start_timed_out(self) -> SeatFault:
        if answers_garbage(self.process.socket_path):
            return SeatFault(FaultKind.INVALID, NOT_GRPC, fatal=True)
        return super()._start_timed_out()

    def close(self) -> None:
        super().close()
        self.process.kill()

    @property
    def stderr(self) -> str:
        """What the bot wrote to stderr (capped, marked by decision), for its owner."""
        return self.process.stderr_text()

    def diagnostics(self) -> str:
        return self.stderr
