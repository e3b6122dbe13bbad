"""Seats: the small interface between the match loop and a bot, wherever it runs.

The loop speaks only to :class:`Seat`. :class:`InProcessSeat` runs an SDK bot in the
referee's own process (house bots, tests); other seats (a bot process over gRPC, a
container) implement the same interface.
"""

from __future__ import annotations

import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from saloon.games import Json
from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.limits import DEFAULT_START_MS, SandboxInfo
from saloon.sdk.bot import Bot, Clock, MatchInfo, MatchResult
from saloon.sdk.errors import NotALegalAction
from saloon.sdk.games import make_decision


@dataclass(frozen=True)
class StartInfo:
    """What a seat is told when the match starts."""

    match_id: str
    game: str
    options: dict[str, Any]
    seat: int
    num_seats: int
    seed: int
    decision_ms: int
    bank_ms: int
    #: Time the bot has to be ready (process start, connection, match start hook).
    start_ms: int = DEFAULT_START_MS


@dataclass(frozen=True)
class DecisionRequest:
    """One decision asked of a seat."""

    #: Index of the log entry this decision will become.
    index: int
    kind: str
    observation: dict[str, Json]
    legal: list[Json]
    #: The deadline for this answer, and what is left of the seat's time bank (ms).
    decision_ms: int
    bank_ms: int


@dataclass(frozen=True)
class EndInfo:
    """What a seat is told when the match ends."""

    scores: list[float]
    ranks: list[int]


class Seat(ABC):
    """One bot's place at the table."""

    #: The bot id recorded for this seat (``house:greedy``, a path, ``bot@version``).
    bot_id: str
    #: What version of the bot played ("" when unknown): ``saloon-X`` for house bots, a
    #: content hash for a bot path.
    bot_version: str = ""
    #: True when the seat's answers are held to the clocks (bots outside the referee).
    timed: bool = False
    #: The sandbox the bot runs in (kind, runtime, limits), recorded with the seat; None
    #: for bots in the referee's process or reached at a target someone else started.
    sandbox: SandboxInfo | None = None

    def launch(self) -> None:  # noqa: B027 -- optional hook, a no-op by default
        """Begin acquiring what the seat needs (start a process) without waiting for it.

        The loop launches every seat before starting any, so bot processes boot together.
        """

    @abstractmethod
    def start(self, info: StartInfo) -> None:
        """Tell the bot the match starts; SeatFault if it cannot play."""

    @abstractmethod
    def decide(self, request: DecisionRequest) -> int:
        """The bot's answer: an index into ``request.legal``; SeatFault on misbehaviour."""

    @abstractmethod
    def finish(self, info: EndInfo) -> None:
        """Tell the bot the match is over (never raises)."""

    def diagnostics(self) -> str:
        """What the bot wrote for its owner (a process's captured stderr); "" if nothing."""
        return ""

    def take_notes(self) -> list[str]:
        """What the bot noted about its last decision (``Bot.take_notes``), emptied."""
        return []

    def close(self) -> None:  # noqa: B027 -- optional hook, a no-op by default
        """Release what the seat holds (processes, sockets); idempotent."""


def _where(exc: BaseException) -> str:
    """``file:line in function`` of the innermost frame of ``exc``'s traceback."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    last = frames[-1]
    return f"{last.filename}:{last.lineno} in {last.name}"


#: A seat kind of a higher layer: ``(bot path, game id) -> Seat`` (``docker``, say).
SeatFactory = Callable[[str, str], Seat]


class InProcessSeat(Seat):
    """An SDK bot called directly in the referee's process (trusted: not clocked).

    A bot exception becomes a CRASH fault whose detail names the file and line; the whole
    traceback is kept for :meth:`diagnostics`. With ``debug=True`` the exception is
    re-raised instead, so it reaches a debugger (``saloon play --debug``).
    """

    def __init__(self, bot: Bot, bot_id: str, bot_version: str = "", debug: bool = False) -> None:
        self.bot = bot
        self.bot_id = bot_id
        self.bot_version = bot_version
        self.debug = debug
        self._game = ""
        self._seat = 0
        self._tracebacks: list[str] = []

    def _crash(self, hook: str, exc: Exception) -> SeatFault:
        """Keep the traceback; the fault names the exception and where it was raised."""
        self._tracebacks.append("".join(traceback.format_exception(exc)))
        return SeatFault(FaultKind.CRASH, f"{hook} raised {exc!r} at {_where(exc)}")

    def diagnostics(self) -> str:
        return "\n".join(self._tracebacks)

    def take_notes(self) -> list[str]:
        try:
            return [str(note) for note in self.bot.take_notes()]
        except Exception:  # a note is an aside: a bot failing to give one loses only that
            return []

    def start(self, info: StartInfo) -> None:
        self._game = info.game
        self._seat = info.seat
        try:
            self.bot.on_match_start(
                MatchInfo(
                    game=info.game,
                    options=dict(info.options),
                    seat=info.seat,
                    num_seats=info.num_seats,
                    seed=info.seed,
                    decision_ms=info.decision_ms,
                    bank_ms=info.bank_ms,
                )
            )
        except Exception as exc:  # the bot's own code failed: a fault, not our crash
            if self.debug:
                raise
            raise self._crash("on_match_start", exc) from exc

    def decide(self, request: DecisionRequest) -> int:
        decision = make_decision(
            self._game,
            request.kind,
            request.observation,
            request.legal,
            Clock(request.decision_ms, request.bank_ms),
            request.index,
        )
        try:
            choice = self.bot.act(decision)
        except Exception as exc:  # the bot's own code failed: a fault, not our crash
            if self.debug:
                raise
            raise self._crash("act", exc) from exc
        try:
            return decision.index_of(choice)
        except NotALegalAction as exc:
            if self.debug:
                raise
            raise SeatFault(FaultKind.INVALID, str(exc)) from None

    def finish(self, info: EndInfo) -> None:
        try:
            self.bot.on_match_end(MatchResult(self._seat, list(info.scores), list(info.ranks)))
        except Exception:
            return
