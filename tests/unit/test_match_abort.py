"""A match that cannot finish normally still ends with a record (outcome aborted)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from saloon.games import get_game
from saloon.referee.bots import resolve_seat
from saloon.referee.errors import RecordError
from saloon.referee.limits import (
    WALL_CAP_CEILING_MS,
    WALL_CAP_DECISIONS,
    WALL_CAP_FLOOR_MS,
    MatchLimits,
    wall_cap_ms,
)
from saloon.referee.match import Match
from saloon.referee.record import AbortReason, MatchRecord, Outcome
from saloon.referee.replay import verify

GAME = "seas-of-strife-v1"
BOTS = ["house:greedy", "house:random", "house:random"]


def _seats() -> list:  # type: ignore[type-arg]
    return [resolve_seat(b, GAME) for b in BOTS]


def test_a_normal_match_is_completed() -> None:
    record = Match(get_game(GAME), _seats(), 3).run()
    assert record.outcome is Outcome.COMPLETED and record.abort_reason is None
    assert record.to_json()["outcome"] == "completed"
    assert "abort_reason" not in record.to_json()


def test_reaching_max_length_aborts_with_a_record() -> None:
    game = replace(get_game(GAME), max_length=20)
    record = Match(game, _seats(), 3, match_id="s-0").run()
    assert record.outcome is Outcome.ABORTED
    assert record.abort_reason is AbortReason.MAX_LENGTH
    assert len(record.log) == 20 and record.scores == [] and record.ranks == []
    again = MatchRecord.from_json(json.loads(record.dumps()))
    assert again.outcome is Outcome.ABORTED and again.abort_reason is AbortReason.MAX_LENGTH


def test_the_wall_clock_cap_aborts_with_a_record() -> None:
    record = Match(get_game(GAME), _seats(), 3, wall_ms=0).run()
    assert record.outcome is Outcome.ABORTED
    assert record.abort_reason is AbortReason.WALL_CLOCK
    assert record.to_json()["abort_reason"] == "wall_clock"
    verify(record)  # the (short) log replays; there is no result to check


def test_an_aborted_record_with_ranks_does_not_verify() -> None:
    record = Match(get_game(GAME), _seats(), 3, wall_ms=0).run()
    record.ranks = [0, 1, 2]
    with pytest.raises(RecordError):
        verify(record)


def test_records_written_before_outcomes_load_as_completed() -> None:
    raw = Match(get_game(GAME), _seats(), 5).run().to_json()
    del raw["outcome"]
    assert MatchRecord.from_json(raw).outcome is Outcome.COMPLETED


def test_the_wall_cap_formula() -> None:
    limits = MatchLimits(decision_ms=1000, bank_ms=10_000, start_ms=10_000)
    # 4 seats x (10 s + 10 s) + 600 decisions x 1 s
    assert wall_cap_ms(limits, 4, 10_000) == 4 * 20_000 + WALL_CAP_DECISIONS * 1000
    # a short game counts only its own max_length of decisions
    assert wall_cap_ms(limits, 2, 100) == 2 * 20_000 + 100 * 1000
    tiny = MatchLimits(decision_ms=1, bank_ms=1, start_ms=1)
    assert wall_cap_ms(tiny, 3, 50) == WALL_CAP_FLOOR_MS
    huge = MatchLimits(decision_ms=60_000, bank_ms=60_000, start_ms=60_000)
    assert wall_cap_ms(huge, 6, 10_000) == WALL_CAP_CEILING_MS
