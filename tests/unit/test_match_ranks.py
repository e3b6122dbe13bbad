"""The record carries the engine's ranks; played-out seats rank last (Seizure end=gap ties)."""

from __future__ import annotations

import pytest

from saloon.games import get_game
from saloon.games.seizure.cards import LEFT_FIRST as LEFT
from saloon.games.seizure.cards import PLUS_FIRST as PLUS
from saloon.games.seizure.engine import SeizureState
from saloon.referee.match import Match, final_ranks
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house.random_bot import RandomBot

from .seizure_positions import card


def _gap_tie_at_round_50(extra_seat: bool) -> SeizureState:
    """Round 50 of end=gap; seat 0 goes out with its last card and the tie survives the cap."""
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    heavy = [*range(PLUS, PLUS + 4), *range(LEFT, LEFT + 4)]  # 4 x 3 + 4 x 2 = 20 points
    hands = [[last], [card("red/green", 1)], heavy]
    totals = [1, 0, 10]
    if extra_seat:
        hands.append([card("red/green", 1, copy=1), *range(LEFT + 4, LEFT + 8)])
        totals.append(21)
    state = SeizureState.from_position(hands, [ref], end_gap=True, totals=totals, strict=False)
    state.round = 50
    return state


@pytest.mark.parametrize(
    ("extra_seat", "ranks"), [(False, [0, 0, 1]), (True, [0, 0, 1, 1])], ids=["3p", "4p"]
)
def test_gap_tie_at_the_round_cap_keeps_the_engine_ranks(
    extra_seat: bool, ranks: list[int]
) -> None:
    seats = [InProcessSeat(RandomBot(), "house:random") for _ in range(3 + extra_seat)]
    match = Match(get_game("seizure-v1"), seats, seed=1, options={"end": "gap"})
    match.state = _gap_tie_at_round_50(extra_seat)
    record = match.run()
    assert record.scores[:3] == [1, 1, 30]
    assert record.ranks == ranks, "the rules rank [10, 10, 30] as [0, 0, 1], not [0, 0, 2]"


@pytest.mark.parametrize(
    ("engine", "played_out", "ranks"),
    [
        ([0, 0, 1], [], [0, 0, 1]),  # dense (Seizure end=gap): unchanged
        ([0, 0, 1, 1], [0], [2, 0, 1, 1]),  # rank 0 still held by seat 1
        ([0, 0, 1, 1], [0, 1], [1, 1, 0, 0]),  # the whole rank-0 group left
        ([0, 0, 1, 1], [2], [0, 0, 2, 1]),
        ([0, 1, 2, 3], [0], [3, 0, 1, 2]),  # competition: closes up by the seats removed
        ([0, 0, 2, 3], [1], [0, 3, 1, 2]),
        ([1, 0, 0], [1, 2], [0, 1, 1]),
    ],
)
def test_played_out_seats_rank_last_in_the_engine_s_style(
    engine: list[int], played_out: list[int], ranks: list[int]
) -> None:
    assert final_ranks(engine, played_out) == ranks
