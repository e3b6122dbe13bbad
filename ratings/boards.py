"""Leaderboards from the results store: which ladder, which scope, which bots are known."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, TextIO

from saloon.ratings.errors import NoResultsError
from saloon.ratings.fold import fold
from saloon.ratings.htmlpage import render_html
from saloon.ratings.ladders import Ladder, default_ladder
from saloon.ratings.leaderboard import (
    Leaderboard,
    build_leaderboard,
    render_csv,
    render_json,
    render_table,
)
from saloon.ratings.params import Scope
from saloon.ratings.source import Loaded, known_bots, load

if TYPE_CHECKING:
    from saloon.worker.store.store import Store


class Format(StrEnum):
    """How a leaderboard is written."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    HTML = "html"


def write_leaderboard(board: Leaderboard, fmt: Format, out: TextIO) -> None:
    """Write ``board`` to ``out`` in ``fmt``."""
    {
        Format.TABLE: render_table,
        Format.JSON: render_json,
        Format.CSV: render_csv,
        Format.HTML: render_html,
    }[fmt](board, out)


def season_leaderboard(store: Store, season_id: str) -> Leaderboard:
    """The leaderboard of one season (season scope: no drift)."""
    season = store.season(season_id)
    if season is None:
        raise NoResultsError(f"no season {season_id!r} in the store")
    loaded = load(store, season_id=season_id)
    ladder = _season_ladder(loaded, season.game)
    standings = fold(loaded.results, ladder, Scope.SEASON)
    return build_leaderboard(standings, season_id, known_bots(loaded, ladder))


def _season_ladder(loaded: Loaded, game: str) -> Ladder:
    if loaded.ladders:
        return loaded.ladders[0]
    if loaded.scheduled:
        return next(iter(loaded.scheduled))
    return default_ladder(game)


def game_leaderboard(
    store: Store, game: str, options: Mapping[str, str] | None = None
) -> tuple[Leaderboard, list[Ladder]]:
    """The all-time leaderboard of ``game``'s ladder with ``options`` (defaults filled in),
    and the game's other ladders that have results."""
    ladder = default_ladder(game, options)
    loaded = load(store, game=game)
    standings = fold(loaded.results, ladder, Scope.ALL_TIME)
    board = build_leaderboard(standings, "", known_bots(loaded, ladder))
    return board, [other for other in loaded.ladders if other != ladder]
