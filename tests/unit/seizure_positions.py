"""Helpers for hand-built Seizure positions in the engine tests."""

from __future__ import annotations

from saloon.games.seizure.cards import number_card, pair_index
from saloon.games.seizure.engine import SeizureState


def card(colours: str, number: int, copy: int = 0) -> int:
    """``card("red/blue", 7)`` -> the id of a 7 red/blue."""
    a, b = colours.split("/")
    return number_card(pair_index(a, b), number, copy)


def play(state: SeizureState, *actions: int) -> None:
    """Apply these actions in order."""
    for action in actions:
        state.apply_action(action)
