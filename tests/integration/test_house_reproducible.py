"""The house search bots decide by their playout budget, never by the clock: the same seed
gives the same record on a quiet machine and under a CPU hog, and the record notes a
search that a time cap did stop (issue: house:search won under load and lost when quiet).

The hog is bounded: two busy-looping processes this test starts, that end by themselves
after a minute, and that the test kills by pid when it is done."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from saloon.games import get_game
from saloon.referee.limits import DEFAULT_LIMITS
from saloon.referee.match import Match, play_local
from saloon.referee.record import without_timing
from saloon.referee.seats import InProcessSeat
from saloon.sdk.bot import MatchInfo
from saloon.sdk.search import InformationSetSearch, SearchBot, SearchBudget, Searcher

HOG = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end:\n    pass\n"
#: A tight decision clock: the old house search capped itself at a quarter of it (5 ms,
#: below what 200 playouts take), so its moves followed the machine's speed.
TIGHT = replace(DEFAULT_LIMITS, decision_ms=20)


@contextmanager
def cpu_hog(processes: int = 2) -> Iterator[None]:
    """``processes`` busy loops (one per core of the test machines), stopped by pid."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def record_of(seed: int) -> dict[str, Any]:
    record = play_local("seizure-v1", ["house:search", "house:greedy"], seed, limits=TIGHT)
    assert record.notes == []  # the safety cap never fired
    return without_timing(record.to_json())


def test_house_search_gives_the_same_record_under_a_cpu_hog() -> None:
    quiet = record_of(5)
    with cpu_hog():
        loaded = record_of(5)
    assert loaded == quiet


def test_the_record_notes_a_search_the_time_cap_stopped() -> None:
    class Starved(SearchBot):
        def make_search(self, info: MatchInfo, budget: SearchBudget) -> Searcher:
            return InformationSetSearch(
                info.game, info.seat, random.Random(1), SearchBudget(10**9, 1)
            )

    seats = [InProcessSeat(Starved(), "starved"), InProcessSeat(Starved(), "starved2")]
    record = Match(get_game("western-showdown-v1"), seats, 1).run()
    assert record.notes, "a 1 ms cap on a billion playouts must fire"
    note = record.notes[0]
    assert record.log[note.decision].seat == note.seat
    assert f"stopped decision {note.decision} after" in note.text
    assert "notes" in record.to_json()
