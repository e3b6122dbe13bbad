"""House bots, written with the SDK like any author's bot.

``house:random`` plays every game; a game's own house bots live in
``saloon.sdk.house.<module>`` (see :func:`saloon.sdk.games.module_name`) as
``HOUSE_BOTS = {"greedy": GreedyBot, ...}``.
"""

from __future__ import annotations

import importlib

from saloon.sdk.bot import Bot
from saloon.sdk.errors import UnknownHouseBot
from saloon.sdk.games import module_name
from saloon.sdk.house.random_bot import RandomBot

GENERIC: dict[str, type[Bot]] = {"random": RandomBot}


def house_bots(game_id: str) -> dict[str, type[Bot]]:
    """Every house bot that plays ``game_id``, by name."""
    bots = dict(GENERIC)
    name = f"{__name__}.{module_name(game_id)}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
    else:
        bots.update(getattr(module, "HOUSE_BOTS", {}))
    return dict(sorted(bots.items()))


def make_house_bot(game_id: str, name: str) -> Bot:
    """A fresh instance of house bot ``name`` for ``game_id``."""
    bots = house_bots(game_id)
    if name not in bots:
        raise UnknownHouseBot(
            f"no house bot {name!r} for {game_id} (house bots: {', '.join(bots)})"
        )
    return bots[name]()
