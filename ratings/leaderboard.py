"""Leaderboards: the rows people read, from a fold's standings; table, JSON and CSV.

Rows are ranked by the conservative rating mu - 3 sigma (1 = best), then mu, then name. A
bot known to the store but without a rated match is listed after them as unrated: rank,
rating and statistics empty, never zero. A two-player ladder shows wins; a 3-6 player
ladder shows the average placing (1 = first) and average points instead. JSON and CSV
carry exactly the table's fields.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from saloon.ratings.fold import Standings
from saloon.ratings.ladders import Ladder
from saloon.ratings.params import Scope


@dataclass(frozen=True)
class BotInfo:
    """A bot the leaderboard lists even without a rated match."""

    bot: str
    owner: str = ""
    version: str = ""


@dataclass(frozen=True)
class Row:
    """One line of a leaderboard; ``rank`` and the rating are None for an unrated bot."""

    rank: int | None
    bot: str
    owner: str
    version: str
    conservative: float | None
    mu: float | None
    sigma: float | None
    matches: int
    wins: int | None
    avg_placing: float | None
    avg_points: float | None
    faults: int

    @property
    def rated(self) -> bool:
        """True when the bot has a rating."""
        return self.rank is not None


#: (field, header) of the columns, in order; the last group depends on the seat count.
COMMON_HEAD = [
    ("rank", "rank"),
    ("bot", "bot"),
    ("owner", "owner"),
    ("version", "version"),
    ("conservative", "mu-3sigma"),
    ("mu", "mu"),
    ("sigma", "sigma"),
    ("matches", "matches"),
]
TWO_PLAYER = [("wins", "wins")]
MULTI_PLAYER = [("avg_placing", "avg placing"), ("avg_points", "avg points")]
TAIL = [("faults", "faults")]


@dataclass(frozen=True)
class Leaderboard:
    """A ranked leaderboard of one ladder (a season's, or all-time)."""

    ladder: Ladder
    scope: Scope
    season: str
    rows: tuple[Row, ...]
    two_player: bool
    standings: Standings

    @property
    def title(self) -> str:
        """``<ladder> · season S`` or ``<ladder> · all-time``."""
        where = f"season {self.season}" if self.season else "all-time"
        return f"{self.ladder.label} · {where}"

    def columns(self) -> list[tuple[str, str]]:
        """(field, header) of every column, in order."""
        return [*COMMON_HEAD, *(TWO_PLAYER if self.two_player else MULTI_PLAYER), *TAIL]

    def records(self) -> list[dict[str, Any]]:
        """The rows as dicts of exactly the columns' fields (unrated: None)."""
        fields = [f for f, _ in self.columns()]
        return [{f: _rounded(getattr(row, f)) for f in fields} for row in self.rows]


def _rounded(value: Any) -> Any:
    return round(value, 3) if isinstance(value, float) else value


def build_leaderboard(
    standings: Standings, season: str = "", known: Iterable[BotInfo] = ()
) -> Leaderboard:
    """Rank the standings' bots; ``known`` bots without a rated match are listed unrated."""
    rated: list[tuple[float, float, str, Row]] = []
    unrated: list[Row] = []
    two = _two_player(standings)
    for bot, stats in standings.stats.items():
        rating = standings.rating(bot)
        wins = stats.wins if two else None
        placing = None if two else stats.avg_placing
        points = None if two else stats.avg_points
        if rating is None:
            unrated.append(
                Row(None, bot, stats.owner, stats.version, None, None, None,
                    stats.matches, wins, placing, points, stats.faults)
            )  # fmt: skip
            continue
        mu, sigma = rating
        version = standings.current[bot][1]
        row = Row(0, bot, stats.owner, version, mu - 3 * sigma, mu, sigma,
                  stats.matches, wins, placing, points, stats.faults)  # fmt: skip
        rated.append((-(mu - 3 * sigma), -mu, bot, row))
    for info in known:
        if info.bot not in standings.stats:
            zero = 0 if two else None
            unrated.append(
                Row(None, info.bot, info.owner, info.version, None, None, None,
                    0, zero, None, None, 0)
            )  # fmt: skip
    rated.sort(key=lambda t: t[:3])
    rows = [
        Row(i + 1, *[getattr(row, f) for f in _ROW_FIELDS[1:]]) for i, (*_, row) in enumerate(rated)
    ]
    rows.extend(sorted(unrated, key=lambda r: r.bot))
    return Leaderboard(standings.ladder, standings.scope, season, tuple(rows), two, standings)


_ROW_FIELDS = list(Row.__dataclass_fields__)


def _two_player(standings: Standings) -> bool:
    """True when the ladder's matches have 2 seats (without matches: the game has 2)."""
    if standings.seat_counts:
        return standings.seat_counts == {2}
    from saloon.games import get_game
    from saloon.games.errors import GameError
    from saloon.referee.errors import RefereeError

    try:
        return get_game(standings.ladder.game).max_players == 2
    except (GameError, RefereeError):
        return False


# -- renderings -------------------------------------------------------------------------
def render_json(board: Leaderboard, out: TextIO) -> None:
    """The leaderboard as a JSON object: ladder, scope, season, rows (the table's fields)."""
    payload = {
        "game": board.ladder.game,
        "ladder": board.ladder.label,
        "options": dict(board.ladder.options),
        "scope": board.scope.value,
        "season": board.season or None,
        "rated_comparisons": board.standings.comparisons,
        "columns": [f for f, _ in board.columns()],
        "rows": board.records(),
    }
    out.write(json.dumps(payload, indent=1) + "\n")


def render_csv(board: Leaderboard, out: TextIO) -> None:
    """The leaderboard as CSV: a header of the table's fields, one line per row."""
    fields = [f for f, _ in board.columns()]
    writer = csv.DictWriter(out, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for record in board.records():
        writer.writerow({k: "" if v is None else v for k, v in record.items()})


def _cell(field: str, value: Any) -> str:
    if value is None:
        return "unrated" if field == "rank" else "-"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def render_table(board: Leaderboard, out: TextIO) -> None:
    """The leaderboard as a rich table written to ``out`` (what the terminal shows)."""
    from rich.table import Table

    from saloon.ratings.terminal import print_rich

    table = Table(title=board.title, title_justify="left")
    numeric = {"rank", "conservative", "mu", "sigma", "matches", "wins", "avg_placing",
               "avg_points", "faults"}  # fmt: skip
    for field, header in board.columns():
        table.add_column(header, justify="right" if field in numeric else "left")
    for record in board.records():
        style = "dim" if record["rank"] is None else None
        table.add_row(*(_cell(f, v) for f, v in record.items()), style=style)
    print_rich(out, table, *([] if board.rows else ["no bots on this ladder yet"]))
