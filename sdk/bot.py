"""What a bot author writes against: :class:`Bot`, :class:`Decision` and friends."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from saloon.sdk.errors import NotALegalAction

ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")


@dataclass(frozen=True)
class MatchInfo:
    """What a bot learns when a match starts."""

    game: str
    options: dict[str, Any]
    seat: int
    num_seats: int
    #: A seed for the bot's own randomness, derived from the match seed and the seat:
    #: a bot that draws only from ``random.Random(info.seed)`` replays exactly.
    seed: int
    #: Time allowed per decision, and the match time bank, in milliseconds.
    decision_ms: int = 0
    bank_ms: int = 0


@dataclass(frozen=True)
class Clock:
    """The time a bot has for the pending decision, in milliseconds."""

    decision_ms: int
    bank_ms: int


@dataclass(frozen=True)
class MatchResult:
    """What a bot learns when a match ends."""

    seat: int
    scores: list[float]
    ranks: list[int]


@dataclass(frozen=True)
class Decision(Generic[ObsT, ActT]):
    """One decision to make: the seat's typed observation and the typed legal actions.

    Return one of ``legal`` from :meth:`Bot.act` (equal by value is enough).
    """

    kind: str
    observation: ObsT
    legal: tuple[ActT, ...]
    clock: Clock | None = None
    raw_observation: dict[str, Any] = field(default_factory=dict, repr=False)
    raw_legal: tuple[Any, ...] = field(default=(), repr=False)

    def index_of(self, choice: object) -> int:
        """The index of ``choice`` among the legal actions; NotALegalAction if absent."""
        for index, action in enumerate(self.legal):
            if action is choice:
                return index
        for index, action in enumerate(self.legal):
            if action == choice:
                return index
        raise NotALegalAction(f"{choice!r} is not one of the {len(self.legal)} legal actions")


class Bot:
    """Base class of a bot: override :meth:`act`, optionally the two hooks."""

    def on_match_start(self, info: MatchInfo) -> None:
        """Called once before the first decision."""

    def act(self, decision: Decision[Any, Any]) -> Any:
        """Return one of ``decision.legal``."""
        raise NotImplementedError

    def on_match_end(self, result: MatchResult) -> None:
        """Called once after the last decision."""


class FunctionBot(Bot):
    """A bot made of one function ``act(decision) -> action``."""

    def __init__(self, act: Callable[[Decision[Any, Any]], Any]) -> None:
        self._act = act

    def act(self, decision: Decision[Any, Any]) -> Any:
        return self._act(decision)
