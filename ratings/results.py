"""What the fold rates: plain, frozen result inputs, independent of where they are stored.

Adapters turn store rows (:mod:`saloon.ratings.source`) or match records into these.
"""

from __future__ import annotations

from dataclasses import dataclass

from saloon.ratings.ladders import Ladder
from saloon.referee.record import Outcome


@dataclass(frozen=True)
class SeatResult:
    """One seat of a result: who played it and how it ended."""

    #: The bot's name: ``house:greedy``, a stored bot's name, or a local path.
    bot: str
    #: The program that played: a stored bot's version, ``saloon-X`` for house bots.
    version: str
    #: Competition rank, 0 best, ties shared (after played-out seats were moved last).
    rank: int
    score: float = 0.0
    owner: str = ""
    #: True when house:random played the seat out after a crash or too many strikes.
    played_out: bool = False
    #: Faults the seat's bot committed in this match.
    faults: int = 0


@dataclass(frozen=True)
class Result:
    """One match result, as the fold rates it."""

    ladder: Ladder
    match_id: str
    #: Position in schedule order: (season sequence, schedule index). The fold sorts on it
    #: (then on match_id), never on when a result was recorded.
    order: tuple[int, ...]
    seats: tuple[SeatResult, ...]
    outcome: Outcome = Outcome.COMPLETED
    season: str = ""
    #: Duplicate deals: the matches that replay one deal with the seats rotated share a
    #: deal group and are rated together as one comparison (docs/ratings.md).
    deal_group: str | None = None
