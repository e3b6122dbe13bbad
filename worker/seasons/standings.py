"""Standings of a season from its recorded results: a plain summary per participant.

Wins, mean place (1 = first) and mean score per bot over the completed matches (aborted ones are
skipped); ratings (saloon.ratings) turn the same results into a leaderboard.

The leaderboard's statistics (:class:`saloon.ratings.fold.BotStats`) are a different count and
are computed there (each printed figure depends on its own definition): a line here is one
seat's bot id (a stored bot's versions apart), every seat is a match and every rank 0 is a win,
a shared first included; there, a line is a bot name (its versions together), a bot in several
seats counts one match at the mean of its places, and only a first place alone is a win. With
one seat and one version per bot and no shared first, the two count the same matches, wins,
places, points and faults (tests/unit/test_season_stats.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from saloon.referee.record import Outcome
from saloon.worker.store.rows import ResultRow


@dataclass(frozen=True)
class Standing:
    """One participant's line: matches played, wins (rank 0, shared or not), mean rank
    (0 = first) and score, faults."""

    bot: str
    matches: int
    wins: int
    mean_rank: float
    mean_score: float
    faults: int


def standings(results: Sequence[ResultRow]) -> list[Standing]:
    """Every bot's line, best first (most wins, then lowest mean rank, then name)."""
    acc: dict[str, list[float]] = {}
    for result in results:
        if result.outcome is not Outcome.COMPLETED:
            continue
        for seat in result.seats:
            line = acc.setdefault(seat.bot, [0, 0, 0.0, 0.0, 0])
            line[0] += 1
            line[1] += seat.rank == 0
            line[2] += seat.rank or 0
            line[3] += seat.score or 0.0
            line[4] += seat.faults
    out = [
        Standing(bot, int(n), int(w), r / n, s / n, int(f))
        for bot, (n, w, r, s, f) in acc.items()
        if n
    ]
    return sorted(out, key=lambda s: (-s.wins, s.mean_rank, s.bot))


def render(title: str, lines: Sequence[Standing], aborted: int = 0) -> object:
    """A rich table of the standings (printed with a rich Console)."""
    from rich.table import Table

    caption = f"{aborted} aborted matches skipped" if aborted else None
    table = Table(title=title, caption=caption)
    for name, justify in [
        ("#", "right"),
        ("bot", "left"),
        ("matches", "right"),
        ("wins", "right"),
        ("mean place", "right"),
        ("mean score", "right"),
        ("faults", "right"),
    ]:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for place, s in enumerate(lines, 1):
        table.add_row(
            str(place),
            s.bot,
            str(s.matches),
            str(s.wins),
            f"{s.mean_rank + 1:.2f}",  # places count from 1, as `saloon play` shows them
            f"{s.mean_score:.1f}",
            str(s.faults),
        )
    return table
