"""Bot misbehaviour, classified: the referee owns it, engines never see it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class FaultKind(StrEnum):
    """What went wrong with a seat's answer."""

    #: No answer within the decision deadline plus what was left of the time bank.
    TIMEOUT = "TIMEOUT"
    #: The bot is gone: process exited, stream broken, or its code raised.
    CRASH = "CRASH"
    #: An answer that is not one of the legal actions, or a malformed message.
    INVALID = "INVALID"


class SeatFault(Exception):
    """Raised by a seat when its bot misbehaved on a decision (or at match start).

    ``fatal`` means the seat cannot go on (its stream is gone): the loop plays it out as
    after a crash, whatever the kind. A CRASH is always fatal.
    """

    def __init__(self, kind: FaultKind, detail: str, *, fatal: bool = False) -> None:
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
        self.detail = detail
        self.fatal = fatal or kind is FaultKind.CRASH


@dataclass(frozen=True)
class Fault:
    """One recorded fault: which seat, what kind, at which log entry (-1: match start)."""

    seat: int
    kind: FaultKind
    decision: int
    detail: str
