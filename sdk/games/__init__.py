"""Typed views of each game for bot authors, found by the full game id.

A game's SDK view module is registered beside its engine (``SDK_VIEWS = {"<id>": "module"}``
in ``games/<pkg>/__init__.py``, see :mod:`saloon.games`), by the full id: a
``seizure-v2`` gets v2's view or none, never v1's by accident. The module defines
``decode_observation(raw) -> typed observation`` and ``decode_action(kind, raw) -> typed
action``. A game without an SDK view still plays: bots then get the raw JSON values.
"""

from __future__ import annotations

import importlib
from functools import cache, cached_property
from types import ModuleType
from typing import Any

import orjson

from saloon.games import sdk_views_table
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
    index: int = -1,
) -> Decision[Any, Any]:
    """Build the typed :class:`Decision` a bot receives from the wire values."""
    adapter = adapter_for(game_id)
    if adapter is None:
        return Decision(
            kind,
            raw_observation,
            tuple(raw_legal),
            clock,
            raw_observation,
            tuple(raw_legal),
            index,
        )
    observation = adapter.decode_observation(raw_observation)
    legal = tuple(adapter.decode_action(kind, raw) for raw in raw_legal)
    return Decision(kind, observation, legal, clock, raw_observation, tuple(raw_legal), index)


class _WireDecision(Decision[Any, Any]):
    """A :class:`Decision` made from the wire: its observation is parsed and typed when the
    bot first reads it (``observation`` or ``raw_observation``), not before ``act``.

    A bot that looks only at ``legal`` (or keeps the raw JSON) pays nothing for the
    observation's typed views; one that reads it pays the same as before, once. To the bot
    it is a Decision like any other (same fields, equality and repr).
    """

    __qualname__ = "Decision"
    _game_id: str
    _observation_json: bytes

    @cached_property
    def raw_observation(self) -> dict[str, Any]:
        return orjson.loads(self._observation_json)  # type: ignore[no-any-return]

    @cached_property
    def observation(self) -> Any:
        adapter = adapter_for(self._game_id)
        if adapter is None:
            return self.raw_observation
        return adapter.decode_observation(self.raw_observation)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decision):
            return _astuple(self) == _astuple(other)
        return NotImplemented

    __hash__ = Decision.__hash__

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled and copied as the plain Decision it stands for (its observation typed).
        return (Decision, _astuple(self))


def _astuple(decision: Decision[Any, Any]) -> tuple[Any, ...]:
    return (
        decision.kind,
        decision.observation,
        decision.legal,
        decision.clock,
        decision.raw_observation,
        decision.raw_legal,
        decision.index,
    )


def decision_from_wire(
    game_id: str,
    kind: str,
    observation_json: bytes,
    legal_json: bytes,
    clock: Clock | None = None,
    index: int = -1,
) -> Decision[Any, Any]:
    """The typed :class:`Decision` of a decision request as the referee sends it (JSON).

    Equal to ``make_decision`` of the parsed JSON; the legal actions are typed at once, the
    observation when the bot first reads it.
    """
    raw_legal = tuple(orjson.loads(legal_json))
    adapter = adapter_for(game_id)
    if adapter is None:
        legal = raw_legal
    else:
        legal = tuple([adapter.decode_action(kind, raw) for raw in raw_legal])
    # Frozen: the fields set as the dataclass's own __init__ would, but for the observation
    # (its __init__ stays Decision's, for dataclasses.replace and the like).
    decision = object.__new__(_WireDecision)
    decision.__dict__.update(
        kind=kind,
        legal=legal,
        clock=clock,
        raw_legal=raw_legal,
        index=index,
        _game_id=game_id,
        _observation_json=observation_json,
    )
    return decision
