"""Leaderboards from the results store: which ladder, which scope, which bots are known."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from saloon.ratings.errors import NoResultsError
from saloon.ratings.fold import fold
from saloon.ratings.formats import Format
from saloon.ratings.htmlpage import render_html
from saloon.ratings.incremental import BoardScope, IncrementalBoard, board_standings
from saloon.ratings.ladders import Ladder, default_ladder, ladder_for
from saloon.ratings.leaderboard import (
    Leaderboard,
    build_leaderboard,
    render_csv,
    render_json,
    render_table,
)
from saloon.ratings.params import Scope
from saloon.ratings.source import known_bots, load, with_defaults

if TYPE_CHECKING:
    from saloon.worker.store.store import Store


def write_leaderboard(board: Leaderboard, fmt: Format, out: TextIO) -> None:
    """Write ``board`` to ``out`` in ``fmt``."""
    {
        Format.TABLE: render_table,
        Format.JSON: render_json,
        Format.CSV: render_csv,
        Format.HTML: render_html,
    }[fmt](board, out)


def season_leaderboard(store: Store, season_id: str, details: bool = True) -> Leaderboard:
    """The leaderboard of one season (season scope: no drift), from its checkpoint
    (saloon.ratings.incremental); ``details``: with histories and head-to-head."""
    standings, known, _ladders = board_standings(store, season_scope(store, season_id), details)
    return build_leaderboard(standings, season_id, known)


def season_scope(store: Store, season_id: str) -> BoardScope:
    """The board of season ``season_id`` (NoResultsError when there is no such season)."""
    season = store.season(season_id)
    if season is None:
        raise NoResultsError(f"no season {season_id!r} in the store")
    return BoardScope.season(season_id, season_ladder(store, season_id, season.game))


def game_scope(game: str, options: Mapping[str, str] | None = None) -> BoardScope:
    """The all-time board of ``game``'s ladder with ``options`` (defaults filled in)."""
    return BoardScope.all_time(default_ladder(game, options))


def board_stamp(store: Store, scope: BoardScope) -> int:
    """Bring ``scope``'s board up to date; a stamp that changes exactly when it does (one
    walk statement when nothing is new: what a cache of rendered boards checks)."""
    return IncrementalBoard(store, scope).update()


def season_ladder(store: Store, season_id: str, game: str) -> Ladder:
    """The ladder a season's matches are played on (its first match's options)."""
    import sqlalchemy as sa

    from saloon.worker.store import schema as t

    sm, se = t.scheduled_matches, t.seasons
    with store.read("season ladder") as conn:
        spec = conn.execute(
            sa.select(sm.c.spec)
            .join(se, se.c.id == sm.c.season_pk)
            .where(se.c.season_id == season_id)
            .order_by(sm.c.idx)
            .limit(1)
        ).scalar_one_or_none()
    if spec is None:
        return default_ladder(game)
    return ladder_for(game, with_defaults(game, dict(dict(spec).get("options", {}))))


def game_leaderboard(
    store: Store, game: str, options: Mapping[str, str] | None = None, details: bool = True
) -> tuple[Leaderboard, list[Ladder]]:
    """The all-time leaderboard of ``game``'s ladder with ``options`` (defaults filled in),
    and the game's other ladders that have results."""
    scope = game_scope(game, options)
    ladder = scope.ladder
    standings, known, ladders = board_standings(store, scope, details)
    board = build_leaderboard(standings, "", known)
    return board, [other for other in ladders if other != ladder]


def rebuilt_leaderboard(store: Store, game: str, season_id: str | None = None) -> Leaderboard:
    """The same board by a full fold over every result (what the checkpoint must equal)."""
    loaded = load(store, game=game, season_id=season_id)
    if season_id is None:
        ladder = default_ladder(game)
        return build_leaderboard(
            fold(loaded.results, ladder, Scope.ALL_TIME), "", known_bots(loaded, ladder)
        )
    ladder = season_ladder(store, season_id, game)
    return build_leaderboard(
        fold(loaded.results, ladder, Scope.SEASON), season_id, known_bots(loaded, ladder)
    )
