"""The game registry: versioned game ids -> lazily imported :class:`GameSpec` objects.

Games are found without the referee naming any of them:

* every subpackage of ``saloon.games`` declares ``GAMES = {"<id>": "module:attr"}``
  in its ``__init__`` (which must stay tiny: the engine module is imported only on use);
* third-party packages add ``[project.entry-points."saloon.games"]`` ``"<id>" = "module:attr"``.

Beside ``GAMES`` the same ``__init__`` registers, by the *full* game id (a ``-v2`` never
inherits ``-v1``'s by accident), what the SDK layer offers for it, as lazy import names
(strings: this layer imports nothing of the SDK):

* ``SDK_VIEWS = {"<id>": "module"}``: the module with ``decode_observation`` and
  ``decode_action`` (see :mod:`saloon.sdk.games`);
* ``HOUSE_BOTS = {"<id>": {"<name>": "module:BotClass"}}``: the game's own house bots
  (``house:random`` plays every game without being listed).

Third-party packages use the entry-point groups ``saloon.sdk_views`` (``"<id>" = "module"``)
and ``saloon.house_bots`` (``"<id>/<name>" = "module:BotClass"``).

Adding a game therefore changes no existing code file: the registry finds it.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from importlib.metadata import entry_points

from saloon.games.base import (
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
from saloon.games.errors import UnknownGameError

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
    "house_bots_table",
    "sdk_views_table",
]

ENTRY_POINT_GROUP = "saloon.games"
SDK_VIEWS_GROUP = "saloon.sdk_views"
HOUSE_BOTS_GROUP = "saloon.house_bots"


@cache
def _game_packages() -> tuple[object, ...]:
    """The built-in game subpackages (their tiny ``__init__`` modules), imported once."""
    return tuple(
        importlib.import_module(info.name)
        for info in pkgutil.iter_modules(__path__, prefix=f"{__name__}.")
        if info.ispkg
    )


@cache
def entry_points_table() -> dict[str, str]:
    """Every known game id -> its "module:attr" entry point, sorted by id."""
    table: dict[str, str] = {}
    for module in _game_packages():
        table.update(getattr(module, "GAMES", {}))
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        table.setdefault(ep.name, ep.value)
    return dict(sorted(table.items()))


@cache
def sdk_views_table() -> dict[str, str]:
    """Full game id -> the import name of its SDK view module (games without one absent)."""
    table: dict[str, str] = {}
    for module in _game_packages():
        table.update(getattr(module, "SDK_VIEWS", {}))
    for ep in entry_points(group=SDK_VIEWS_GROUP):
        table.setdefault(ep.name, ep.value)
    return dict(sorted(table.items()))


@cache
def house_bots_table() -> dict[str, dict[str, str]]:
    """Full game id -> {house bot name -> "module:BotClass"} of that game's own house bots."""
    table: dict[str, dict[str, str]] = {}
    for module in _game_packages():
        for game_id, bots in getattr(module, "HOUSE_BOTS", {}).items():
            table.setdefault(game_id, {}).update(bots)
    for ep in entry_points(group=HOUSE_BOTS_GROUP):
        game_id, _, name = ep.name.partition("/")
        table.setdefault(game_id, {}).setdefault(name, ep.value)
    return {game_id: dict(sorted(bots.items())) for game_id, bots in sorted(table.items())}


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
