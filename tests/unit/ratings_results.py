"""Hand-built result inputs for the ratings tests (one helper, imported by each test)."""

from __future__ import annotations

from collections.abc import Sequence

from saloon.ratings.ladders import Ladder
from saloon.ratings.results import Result, SeatResult
from saloon.referee.record import Outcome

LADDER = Ladder("seas-of-strife-v1")


def result(
    index: int,
    placing: Sequence[tuple[str, int]],
    *,
    ladder: Ladder = LADDER,
    versions: dict[str, str] | None = None,
    scores: Sequence[float] | None = None,
    faults: dict[str, int] | None = None,
    played_out: Sequence[str] = (),
    outcome: Outcome = Outcome.COMPLETED,
    deal_group: str | None = None,
    season: int = 0,
    match_id: str | None = None,
) -> Result:
    """A result of ``(bot, rank)`` seats at schedule position (season, index)."""
    seats = tuple(
        SeatResult(
            bot,
            (versions or {}).get(bot, "v1"),
            rank,
            score=scores[i] if scores else float(rank),
            owner=f"owner-of-{bot}",
            played_out=bot in played_out,
            faults=(faults or {}).get(bot, 0),
        )
        for i, (bot, rank) in enumerate(placing)
    )
    return Result(
        ladder,
        match_id or f"s{season}-{index}",
        (season, index),
        seats,
        outcome=outcome,
        season=f"s{season}",
        deal_group=deal_group,
    )
