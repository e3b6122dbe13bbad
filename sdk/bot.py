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

    #: The full game id, e.g. ``seizure-v1``.
    game: str
    #: The game's options as the match sets them (name -> value).
    options: dict[str, Any]
    #: Your seat number, 0-based.
    seat: int
    #: How many seats the match has (the same name everywhere in the SDK).
    num_seats: int
    #: A seed for the bot's own randomness, DERIVED from the match seed, the match and your
    #: seat (it is not the match seed: each seat of each match gets its own, and it tells
    #: nothing of the deal): a bot that draws only from ``random.Random(info.seed)`` replays
    #: exactly.
    seed: int
    #: Time allowed per decision before the time bank is drawn on, in milliseconds (0:
    #: not clocked).
    decision_ms: int = 0
    #: The match time bank, in milliseconds (see :class:`Clock`).
    bank_ms: int = 0


@dataclass(frozen=True)
class Clock:
    """The time a bot has for the pending decision, in milliseconds."""

    #: Time allowed for this decision before the bank is used, in milliseconds.
    decision_ms: int
    #: What is left of your match time bank, in milliseconds.
    bank_ms: int


@dataclass(frozen=True)
class MatchResult:
    """What a bot learns when a match ends."""

    #: Your seat number.
    seat: int
    #: Every seat's final score, in the game's own unit.
    scores: list[float]
    #: Every seat's final rank, 0-based (0 best, ties shared; a played-out seat last).
    ranks: list[int]


@dataclass(frozen=True)
class Decision(Generic[ObsT, ActT]):
    """One decision to make: the seat's typed observation and the typed legal actions.

    Return one of ``legal`` from :meth:`Bot.act` (equal by value is enough).
    """

    #: The decision kind, e.g. ``PLAY_CARD`` (constants of the game's SDK module).
    kind: str
    #: Your seat's typed observation (the game's ``Observation``).
    observation: ObsT
    #: The typed legal actions; return one of them (equal by value is enough).
    legal: tuple[ActT, ...]
    #: The time you have for this decision (None when not clocked).
    clock: Clock | None = None
    #: The observation's JSON, as the engine sent it (docs/rules/).
    raw_observation: dict[str, Any] = field(default_factory=dict, repr=False)
    #: The legal actions' JSON, in the same order as ``legal``.
    raw_legal: tuple[Any, ...] = field(default=(), repr=False)
    #: Which decision of the match this is: the index of the log entry it becomes, the
    #: number ``saloon replay`` shows and the record's faults and stderr name (-1 where no
    #: match asked, e.g. a decision a search built for a playout).
    index: int = -1

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

    def take_notes(self) -> list[str]:
        """Lines about the last decision for the match record's ``notes`` (override to
        report, e.g. :class:`saloon.sdk.search.SearchBot`'s time cap), emptied by the call.

        The referee asks after every decision of a bot in its own process (house bots);
        a bot in its own process has its notes written to its stderr, by decision."""
        return []


class FunctionBot(Bot):
    """A bot made of one function ``act(decision) -> action``."""

    def __init__(self, act: Callable[[Decision[Any, Any]], Any]) -> None:
        self._act = act

    def act(self, decision: Decision[Any, Any]) -> Any:
        return self._act(decision)
