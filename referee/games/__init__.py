"""The game registry: versioned game ids -> lazily imported :class:`GameSpec` objects.

Games are found without the referee naming any of them:

* every subpackage of ``saloon.referee.games`` declares ``GAMES = {"<id>": "module:attr"}``
  in its ``__init__`` (which must stay tiny: the engine module is imported only on use);
* third-party packages add ``[project.entry-points."saloon.games"]`` ``"<id>" = "module:attr"``.

Adding a game therefore touches no file outside its own folder.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib.metadata import entry_points

from saloon.referee.errors import UnknownGameError
from saloon.referee.games.base import (
    CHANCE,
    TERMINAL,
    GameSpec,
    Json,
    Options,
    OptionSpec,
    Outcome,
    State,
    competition_ranks,
)

__all__ = [
    "CHANCE",
    "TERMINAL",
    "GameSpec",
    "Json",
    "OptionSpec",
    "Options",
    "Outcome",
    "State",
    "competition_ranks",
    "entry_points_table",
    "game_ids",
    "get_game",
]

ENTRY_POINT_GROUP = "saloon.games"


@cache
def entry_points_table() -> dict[str, str]:
    """Every known game id -> its "module:attr" entry point, sorted by id."""
    table: dict[str, str] = {}
    for info in pkgutil.iter_modules(__path__, prefix=f"{__name__}."):
        if not info.ispkg:
            continue
        module = importlib.import_module(info.name)
        table.update(getattr(module, "GAMES", {}))
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        table.setdefault(ep.name, ep.value)
    return dict(sorted(table.items()))


def game_ids() -> list[str]:
    """The registered game ids, sorted."""
    return list(entry_points_table())


@cache
def get_game(game_id: str) -> GameSpec:
    """The GameSpec registered as ``game_id``; UnknownGameError lists the known ids."""
    table = entry_points_table()
    target = table.get(game_id)
    if target is None:
        base = game_id.rsplit("-v", 1)[0]
        versions = [g for g in table if g.rsplit("-v", 1)[0] == base]
        hint = f" (versions of that game: {', '.join(versions)})" if versions else ""
        raise UnknownGameError(
            f"unknown game {game_id!r}{hint}; known games: {', '.join(table) or 'none'}"
        )
    module_name, _, attr = target.partition(":")
    spec = getattr(importlib.import_module(module_name), attr)
    if not isinstance(spec, GameSpec) or spec.id != game_id:
        raise UnknownGameError(f"entry point {target!r} does not define game {game_id!r}")
    return spec
