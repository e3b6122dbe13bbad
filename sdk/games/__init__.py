"""Typed views of each game for bot authors, found by the full game id.

A game's SDK view module is registered beside its engine (``SDK_VIEWS = {"<id>": "module"}``
in ``referee/games/<pkg>/__init__.py``, see :mod:`saloon.referee.games`), by the full id: a
``seizure-v2`` gets v2's view or none, never v1's by accident. The module defines
``decode_observation(raw) -> typed observation`` and ``decode_action(kind, raw) -> typed
action``. A game without an SDK view still plays: bots then get the raw JSON values.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType
from typing import Any

from saloon.referee.games import sdk_views_table
from saloon.sdk.bot import Clock, Decision


@cache
def adapter_for(game_id: str) -> ModuleType | None:
    """The SDK view module registered for ``game_id`` (full id), or None when it has none."""
    name = sdk_views_table().get(game_id)
    return None if name is None else importlib.import_module(name)


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
