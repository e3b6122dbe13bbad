"""House bots, written with the SDK like any author's bot.

``house:random`` (and any bot in :data:`GENERIC`) plays every game. A game's own house bots
are registered beside its engine, by the full game id, in ``games/<pkg>/__init__.py``:
``HOUSE_BOTS = {"<id>": {"<name>": "module:BotClass"}}`` (see :mod:`saloon.games`);
they are imported only when asked for.
"""

from __future__ import annotations

import importlib

from saloon.games import house_bots_table
from saloon.sdk.bot import Bot
from saloon.sdk.errors import BotLoadError, UnknownHouseBot
from saloon.sdk.house.random_bot import RandomBot

#: House bots that play every game, by name.
GENERIC: dict[str, type[Bot]] = {"random": RandomBot}


def house_bot_names(game_id: str) -> list[str]:
    """The names of every house bot that plays ``game_id`` (full id), sorted; no import."""
    return sorted({*GENERIC, *house_bots_table().get(game_id, {})})


def house_bot_class(game_id: str, name: str) -> type[Bot]:
    """The class of house bot ``name`` for ``game_id``; UnknownHouseBot lists the others."""
    if name in GENERIC:
        return GENERIC[name]
    target = house_bots_table().get(game_id, {}).get(name)
    if target is None:
        raise UnknownHouseBot(
            f"no house bot {name!r} for {game_id} "
            f"(house bots: {', '.join(house_bot_names(game_id))})"
        )
    module_name, _, attr = target.partition(":")
    cls = getattr(importlib.import_module(module_name), attr, None)
    if not (isinstance(cls, type) and issubclass(cls, Bot)):
        raise BotLoadError(f"house bot {target!r} registered for {game_id} is not a Bot class")
    return cls


def house_bots(game_id: str) -> dict[str, type[Bot]]:
    """Every house bot that plays ``game_id`` (full id), by name (imports them all)."""
    return {name: house_bot_class(game_id, name) for name in house_bot_names(game_id)}


def make_house_bot(game_id: str, name: str) -> Bot:
    """A fresh instance of house bot ``name`` for ``game_id``."""
    return house_bot_class(game_id, name)()
