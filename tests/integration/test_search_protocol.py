"""house:search never faults under the default clocks when it runs as its own process and
plays over the protocol (python -m saloon.sdk.run, gRPC on a unix socket), as in the arena.

It searches by its playout budget (2 to 60 ms a decision at house:search's defaults),
far inside the one-second decision clock. One game per test keeps the suite quick: Western Legends:
Showdown (every decision kind of a two-seat game) and Seas of Strife with three seats."""

from __future__ import annotations

from pathlib import Path

import pytest

from saloon.referee.limits import DEFAULT_LIMITS
from saloon.referee.match import play_local

BOT = str(Path(__file__).resolve().parent / "bots" / "search_bot.py")


@pytest.mark.parametrize(
    ("game", "others"),
    [("western-showdown-v1", 1), ("seas-of-strife-v1", 2)],
)
def test_search_bot_plays_over_the_protocol_without_faults(game: str, others: int) -> None:
    record = play_local(game, [BOT] + ["house:greedy"] * others, seed=3, limits=DEFAULT_LIMITS)
    assert record.faults == []
    assert sorted(record.ranks)[0] == 0
