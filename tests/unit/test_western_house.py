"""Western Legends: Showdown house bots: greedy's choices, and greedy against random."""

from __future__ import annotations

from typing import Any

from saloon.games.western_showdown import engine as ws
from saloon.games.western_showdown.cards import DOCTOR, MINE, RANCH, SALOON
from saloon.referee.match import play_local
from saloon.sdk.games import make_decision
from saloon.sdk.games import western_showdown as sdk
from saloon.sdk.house import house_bots
from saloon.sdk.house.western_showdown import GreedyBot

GAME_ID = "western-showdown-v1"


def red(value: int, copy: int = 0) -> int:
    return [1, 1, 1, 2, 3, 4, 5, 6, 7].index(value) + copy


def black(value: int, copy: int = 0) -> int:
    return 9 + red(value, copy)


def midgame(
    locations: tuple[int, int, int],
    stacks: tuple[list[int], list[int], list[int]],
    hands: tuple[list[int], list[int]],
) -> ws.WesternShowdownState:
    """Seat 0 to play a TURN; cards not placed or in hand wait in their draw piles."""
    state = ws.WesternShowdownState()
    state.locations = list(locations)
    for slot, loc in enumerate(locations):
        state.slot_of[loc] = slot
    state.stacks = [list(s) for s in stacks]
    state.hands = [sorted(h) for h in hands]
    used = {c for s in stacks for c in s} | set(hands[0]) | set(hands[1])
    state.draw = [[c for c in range(9 * s, 9 * s + 9) if c not in used] for s in range(2)]
    state.played = [[c for s in stacks for c in s if c // 9 == seat] for seat in range(2)]
    state.start_player = state.reputation = 1
    state.turn = 0
    state._phase = ws._TURN
    return state


def greedy_choice(state: ws.WesternShowdownState) -> Any:
    seat = state.current_player()
    legal = state.legal_actions()
    decision = make_decision(
        GAME_ID,
        state.decision_kind(),
        state.observation(seat),
        [state.action_to_json(a) for a in legal],
    )
    choice = GreedyBot().act(decision)
    return legal[decision.index_of(choice)]


def test_greedy_is_registered() -> None:
    assert house_bots(GAME_ID)["greedy"] is GreedyBot


def test_greedy_completes_a_location_it_can_take_now() -> None:
    state = midgame(
        (RANCH, SALOON, MINE),
        ([black(6), black(4)], [], []),
        ([red(5), red(1), red(2)], [black(1)]),
    )
    # (It may first lay the 2 elsewhere and use DETERMINATION's extra card for it.)
    while state.current_player() == 0:
        state.apply_action(greedy_choice(state))
    assert {black(6), black(4)} <= set(state.won[0])


def test_greedy_keeps_living_legend_for_a_fat_stack() -> None:
    thin = midgame(
        (DOCTOR, SALOON, MINE),
        ([black(2)], [], []),
        ([red(7), red(3), red(1)], [black(1)]),
    )
    assert greedy_choice(thin) // 7 != red(7)
    fat = midgame(
        (DOCTOR, SALOON, MINE),
        ([black(1), red(1), black(1, 1), red(1, 1), black(2)], [], []),
        ([red(7), red(3), red(2)], [black(4)]),
    )
    assert greedy_choice(fat) == red(7) * 7 + DOCTOR
    fat.apply_action(red(7) * 7 + DOCTOR)
    assert fat.decision_kind() == "ACTIVATE"
    assert greedy_choice(fat) == ws.YES
    assert len(fat.won[0]) == 0
    fat.apply_action(ws.YES)
    assert len(fat.won[0]) == 6


def test_greedy_does_not_set_up_the_opponent() -> None:
    # The Ranch holds 6+4 = 10: a red 1 leaves 11, which any black 1+ completes next turn;
    # the 1 is better placed where it gives nothing away.
    state = midgame(
        (RANCH, SALOON, MINE),
        ([black(6), black(4)], [], [black(3)]),
        ([red(1)], [black(1)]),
    )
    assert greedy_choice(state) % 7 != RANCH


def test_greedy_beats_random() -> None:
    """Greedy wins at least 150 of 200 games against house:random (seats alternate).

    Statistic: in development greedy won 389 of 400 such games (97%; 95% Wilson interval
    95-98%). If the two were equal (p = 0.5) the chance of 150 or more wins in 200 would
    be below 1e-12, so passing this is overwhelming evidence greedy is stronger; with the
    true rate near 0.97, failing it has probability below 1e-20. Runs in about a second.
    """
    wins = 0
    for game in range(200):
        greedy_seat = game % 2
        bots = ["house:random", "house:random"]
        bots[greedy_seat] = "house:greedy"
        record = play_local(GAME_ID, bots, seed=1000 + game)
        assert not record.faults
        wins += record.ranks[greedy_seat] == 0
    assert wins >= 150, f"greedy won only {wins} of 200"


def test_greedy_plays_best_of_three() -> None:
    record = play_local(GAME_ID, ["house:greedy", "house:random"], seed=7, options={"best_of": 3})
    assert not record.faults and sorted(record.scores) in ([0.0, 2.0], [1.0, 2.0])


def test_sdk_actions_are_what_greedy_returns() -> None:
    state = midgame((RANCH, SALOON, MINE), ([], [], []), ([red(3)], [black(1)]))
    state.apply_action(red(3) * 7 + SALOON)
    assert state.decision_kind() == "ACTIVATE"
    assert greedy_choice(state) == ws.YES  # BULLETPROOF is always worth switching on
    assert state.decision_kind() == sdk.ACTIVATE
