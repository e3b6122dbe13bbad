"""Typed views of each game for bot authors, found by game id.

A game's SDK module is ``saloon.sdk.games.<module>`` where ``<module>`` is the game id
without its version, dashes made underscores (``seas-of-strife-v1`` -> ``seas_of_strife``).
It defines ``decode_observation(raw) -> typed observation`` and
``decode_action(kind, raw) -> typed action``. A game without an SDK module still plays:
bots then get the raw JSON values.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from types import ModuleType
from typing import Any

from saloon.sdk.bot import Clock, Decision

_VERSION = re.compile(r"-v\d+$")


def module_name(game_id: str) -> str:
    """The SDK module name of a game id: ``seas-of-strife-v1`` -> ``seas_of_strife``."""
    return _VERSION.sub("", game_id).replace("-", "_")


@cache
def adapter_for(game_id: str) -> ModuleType | None:
    """The game's SDK module, or None when the game has none."""
    name = f"{__name__}.{module_name(game_id)}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None


def make_decision(
    game_id: str,
    kind: str,
    raw_observation: dict[str, Any],
    raw_legal: list[Any] | tuple[Any, ...],
    clock: Clock | None = None,
) -> Decision[Any, Any]:
    """Build the typed :class:`Decision` a bot receives from the wire values."""
    adapter = adapter_for(game_id)
    if adapter is None:
        return Decision(
            kind, raw_observation, tuple(raw_legal), clock, raw_observation, tuple(raw_legal)
        )
    observation = adapter.decode_observation(raw_observation)
    legal = tuple(adapter.decode_action(kind, raw) for raw in raw_legal)
    return Decision(kind, observation, legal, clock, raw_observation, tuple(raw_legal))
