"""The engine-level playout policies of house:search make house:greedy's choices.

Each game is played from fixed seeds, half the moves greedy's and half random ones (so the
positions are varied, abilities and voids included); at every decision with a choice the
engine-level policy must answer what the greedy bot answers through a real observation
(``bot_playout``, the exact and slow way).
"""

from __future__ import annotations

import random
from typing import cast

import pytest

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.western_showdown.engine import WesternShowdownState
from saloon.sdk.house import make_house_bot, playouts
from saloon.sdk.house.playouts import (
    greedy_seizure_playout,
    greedy_strife_playout,
    greedy_strife_rollout,
    greedy_western_playout,
)
from saloon.sdk.search import Playout, bot_playout, play_out, round_horizon


def disagreements(
    game: str, players: int, games: int, policy: Playout
) -> tuple[int, dict[str, int]]:
    """(decisions compared, disagreements by decision kind)."""
    greedy = bot_playout(game, make_house_bot(game, "greedy"))
    compared = 0
    differ: dict[str, int] = {}
    for seed in range(games):
        rng = random.Random(seed)
        state = get_game(game).new_game(players)
        while state.current_player() != TERMINAL:
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            action = legal[0]
            if len(legal) > 1:
                expected = greedy(state, legal, random.Random(0))
                got = policy(state, legal, random.Random(0))
                compared += 1
                if got != expected:
                    kind = state.decision_kind()
                    differ[kind] = differ.get(kind, 0) + 1
                action = expected if rng.random() < 0.5 else legal[rng.randrange(len(legal))]
            state.apply_action(action)
    return compared, differ


@pytest.mark.parametrize("players", [3, 4, 6])
def test_strife_playout_is_greedy(players: int) -> None:
    compared, differ = disagreements("seas-of-strife-v1", players, 20, greedy_strife_playout)
    assert compared > 500
    assert differ == {}


def test_western_playout_is_greedy() -> None:
    compared, differ = disagreements("western-showdown-v1", 2, 60, greedy_western_playout)
    assert compared > 1500
    assert differ == {}


def test_seizure_playout_is_greedy_but_for_trade_partner_ties() -> None:
    """Greedy breaks a tie between trade partners of equal hand size by the points it has
    seen go into their hands; the playout by seat number (it does not track what each
    seat saw)."""
    compared, differ = disagreements("seizure-v1", 4, 6, greedy_seizure_playout)
    assert compared > 1000
    assert set(differ) <= {"TRADE_PARTNER"}


@pytest.mark.parametrize("players", [3, 4, 6])
def test_strife_rollout_is_play_out_with_the_greedy_playout(players: int) -> None:
    """greedy_strife_rollout (one loop for the whole playout) ends where the generic
    play_out with greedy_strife_playout and the round horizon ends, in the same state, from
    positions throughout seeded games (CHOOSE_LEADER, voids, several colours, a hand's and
    the game's end included), with and without a depth limit."""
    spec = get_game("seas-of-strife-v1")
    compared = 0
    for seed in range(8):
        rng = random.Random(seed)
        state = spec.new_game(players)
        while state.current_player() != TERMINAL:
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            if rng.random() < 0.2:
                for depth in (None, 1, 5):
                    generic = state.clone()
                    play_out(generic, greedy_strife_playout, round_horizon, random.Random(0), depth)
                    loop = state.clone()
                    greedy_strife_rollout(loop, random.Random(0), depth)
                    assert loop.render() == generic.render()
                    assert loop.current_player() == generic.current_player()
                    assert loop.observation(0) == generic.observation(0)
                    compared += 1
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    assert compared > 200


def test_western_playout_remembers_a_choice_by_what_the_seat_sees() -> None:
    """greedy_western_playout remembers its choices by position; a position the deciding
    seat cannot tell apart (its resample_hidden: the opponent's hand and the draw piles
    redealt) is the same position to it, and the remembered choice is the one greedy
    makes there afresh."""
    spec = get_game("western-showdown-v1")
    playouts._WESTERN_CHOICES.clear()
    compared = 0
    for seed in range(30):
        rng = random.Random(seed)
        state = spec.new_game(2)
        while state.current_player() != TERMINAL:
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            if len(legal) > 1:
                first = greedy_western_playout(state, legal, random.Random(0))
                size = len(playouts._WESTERN_CHOICES)
                other = state.resample_hidden(state.current_player(), rng)
                assert other.legal_actions() == legal
                again = greedy_western_playout(other, legal, random.Random(0))
                assert len(playouts._WESTERN_CHOICES) == size  # remembered, not recomputed
                fresh = playouts._greedy_western_choice(
                    cast(WesternShowdownState, other), other.decision_kind(), legal
                )
                assert again == first == fresh
                compared += 1
            state.apply_action(legal[rng.randrange(len(legal))])
    assert compared > 300
