"""What the results store hands back: statuses as enums, rows as frozen dataclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from saloon.referee.faults import FaultKind
from saloon.referee.record import Outcome


class SeasonStatus(StrEnum):
    """Where a season is in its life."""

    CREATED = "created"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


class MatchStatus(StrEnum):
    """Where one scheduled match is; DONE is final (a result is recorded)."""

    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class BotRow:
    """A registered bot: its unique name and who owns it."""

    name: str
    owner: str
    created_at: datetime


@dataclass(frozen=True)
class VersionRow:
    """One version of a bot (a content hash, usually); ``seq`` is 1, 2, 3... per bot."""

    bot: str
    version: str
    seq: int
    meta: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True)
class ScheduledMatch:
    """One match of a season's schedule, as the scheduler hands it to create_season."""

    match_id: str
    index: int
    spec: dict[str, Any]


@dataclass(frozen=True)
class SeasonRow:
    """A season: its spec (``spec["game"]`` is the game id) and status."""

    season_id: str
    game: str
    spec: dict[str, Any]
    status: SeasonStatus
    #: 1, 2, 3...: the order seasons were created in (results() sorts by it).
    seq: int
    created_at: datetime
    updated_at: datetime
    #: The queue it was last started on (None: never; played in-process).
    queue: str | None = None
    #: Matches per job on the queue (fixed at its first start; 1 before).
    batch: int = 1
    #: Its jobs tapered: full jobs of ``batch``, then smaller ones (seasons started since
    #: tapering; saloon.worker.matches.batching.JobLayout).
    batch_tapered: bool = False


@dataclass(frozen=True)
class ScheduledMatchRow:
    """A scheduled match with where it is: status, attempts, the last status detail."""

    match_id: str
    season_id: str
    index: int
    spec: dict[str, Any]
    status: MatchStatus
    #: Times the match was marked RUNNING (a retried job counts again).
    attempts: int
    detail: str
    updated_at: datetime


@dataclass(frozen=True)
class MatchState:
    """Where a scheduled match is, without its spec (what a look for lost matches reads)."""

    match_id: str
    index: int
    status: MatchStatus
    #: The last status detail (a RUNNING match's: the worker that claimed it).
    detail: str


@dataclass(frozen=True)
class Progress:
    """How far a season is: matches per status and the total."""

    season_id: str
    total: int
    counts: dict[MatchStatus, int] = field(default_factory=dict)

    def count(self, status: MatchStatus) -> int:
        """Matches in ``status``."""
        return self.counts.get(status, 0)

    @property
    def done(self) -> int:
        """Matches with a recorded result."""
        return self.count(MatchStatus.DONE)

    @property
    def remaining(self) -> int:
        """Matches neither done, failed nor cancelled."""
        finished = sum(self.count(s) for s in (MatchStatus.DONE, MatchStatus.FAILED))
        return self.total - finished - self.count(MatchStatus.CANCELLED)


@dataclass(frozen=True)
class SeatRow:
    """One seat of a recorded result as stored: its index, the seat's bot id as the record
    wrote it, how it went (score/rank None if aborted). A row, like every row the store
    hands back; what the ratings fold takes is saloon.ratings.results.SeatResult (a bot's
    name and owner, a rank), built from these by saloon.ratings.source."""

    seat: int
    bot: str
    version: str
    score: float | None
    rank: int | None
    played_out: bool
    faults: int


@dataclass(frozen=True)
class ResultRow:
    """One recorded match result (the full record is match_record(match_id))."""

    match_id: str
    #: None for a match recorded outside any season (local play).
    season_id: str | None
    index: int | None
    game: str
    options: dict[str, Any]
    seed: int
    outcome: Outcome
    abort_reason: str
    seats: tuple[SeatRow, ...]
    saloon_version: str
    finished_at: datetime

    @property
    def scores(self) -> tuple[float, ...]:
        """Final scores by seat; () when the match was aborted before scoring."""
        scores = tuple(s.score for s in self.seats)
        return () if any(x is None for x in scores) else tuple(x for x in scores if x is not None)

    @property
    def ranks(self) -> tuple[int, ...]:
        """Final ranks by seat (0 best); () when the match was aborted before ranking."""
        ranks = tuple(s.rank for s in self.seats)
        return () if any(x is None for x in ranks) else tuple(x for x in ranks if x is not None)

    @property
    def played_out(self) -> tuple[int, ...]:
        """Seats handed to house:random after faults, sorted."""
        return tuple(s.seat for s in self.seats if s.played_out)

    @property
    def bots(self) -> tuple[str, ...]:
        """The bot id of each seat, by seat."""
        return tuple(s.bot for s in self.seats)


@dataclass(frozen=True)
class FaultRow:
    """One fault of a recorded match: seat, kind, the log index it happened at, detail."""

    match_id: str
    seat: int
    kind: FaultKind
    #: The log index of the decision (-1: at match start); the record calls it "decision".
    index: int
    detail: str
