"""Hand-built Western Showdown positions for the engine tests."""

from __future__ import annotations

from saloon.games import get_game
from saloon.games.western_showdown import engine as ws
from saloon.games.western_showdown.cards import MINE, RANCH, SALOON
from saloon.games.western_showdown.engine import WesternShowdownState

GAME = get_game("western-showdown-v1")


def red(value: int, copy: int = 0) -> int:
    """The id of a red card of this value (copy picks among the three 1s)."""
    return [1, 1, 1, 2, 3, 4, 5, 6, 7].index(value) + copy


def black(value: int, copy: int = 0) -> int:
    """The id of a black card of this value."""
    return 9 + red(value, copy)


def new_game(options: dict[str, str | int] | None = None) -> WesternShowdownState:
    """A fresh game, typed as the Western state."""
    state = GAME.new_game(2, options)
    assert isinstance(state, WesternShowdownState)
    return state


def place(card: int, location: int) -> int:
    """The TURN / DETERMINATION_EXTRA action placing ``card`` at ``location``."""
    return card * 7 + location


def table(
    locations: tuple[int, int, int] = (RANCH, SALOON, MINE),
    stacks: tuple[list[int], ...] = ([], [], []),
    hands: tuple[list[int], list[int]] = ([], []),
    turn: int = 0,
    reputation: int = 0,
    draw: tuple[list[int], list[int]] | None = None,
    bulletproof: tuple[int, ...] = (),
) -> WesternShowdownState:
    """``turn``'s TURN decision in a hand-built position.

    Cards neither on the table nor in hand wait in their owner's draw pile, unless ``draw``
    is given: then the rest is in its owner's won pile.
    """
    state = WesternShowdownState()
    state.locations = list(locations)
    for slot, loc in enumerate(locations):
        state.slot_of[loc] = slot
    state.stacks = [list(s) for s in stacks]
    state.hands = [sorted(h) for h in hands]
    used = {c for s in stacks for c in s} | set(hands[0]) | set(hands[1])
    if draw is None:
        state.draw = [[c for c in range(9 * s, 9 * s + 9) if c not in used] for s in range(2)]
    else:
        state.draw = [list(d) for d in draw]
        used |= set(draw[0]) | set(draw[1])
        state.won = [[c for c in range(9 * s, 9 * s + 9) if c not in used] for s in range(2)]
    for c in bulletproof:
        state.bulletproof |= 1 << c
    state.start_player = state.reputation = reputation
    state.mulligans = [0, 0]
    state.turn = turn
    state._phase = ws._TURN
    return state


def all_cards(state: WesternShowdownState) -> list[int]:
    return sorted(c for zone in state.cards().values() for c in zone)
