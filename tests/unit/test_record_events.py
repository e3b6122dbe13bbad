"""Each game's public events land in the record, survive JSON, and replay checks them."""

from __future__ import annotations

import dataclasses
import json

import orjson
import pytest

from saloon.referee.errors import RecordError
from saloon.referee.faults import Fault, FaultKind
from saloon.referee.match import play_local
from saloon.referee.record import AbortReason, LogEntry, MatchRecord, Note, Outcome, StderrBlock
from saloon.referee.replay import verify

EXPECTED = {
    "seas-of-strife-v1": ({"trick", "hand_scored"}, 3),
    "seizure-v1": ({"round_scored"}, 2),
    "western-showdown-v1": ({"stack_taken", "game_won"}, 2),
}


@pytest.mark.parametrize("game", sorted(EXPECTED))
def test_public_events_are_recorded_and_verified(game: str) -> None:
    names, seats = EXPECTED[game]
    record = play_local(game, ["house:greedy"] + ["house:random"] * (seats - 1), seed=4)
    events = [e for entry in record.log for e in entry.events]
    assert {e["event"] for e in events} == names
    again = MatchRecord.from_json(json.loads(record.dumps()))
    assert [e.events for e in again.log] == [e.events for e in record.log]
    verify(again)
    if game == "seizure-v1":
        # The round totals a replay shows add up to the final scores.
        last = [e for e in events if e["event"] == "round_scored"][-1]
        assert last["totals"] == record.scores
    raw = json.loads(record.dumps())
    entry = next(e for e in raw["log"] if "events" in e)
    entry["events"][0]["event"] = "forged"
    with pytest.raises(RecordError, match="recorded events"):
        verify(MatchRecord.from_json(raw))


@pytest.mark.parametrize("game", sorted(EXPECTED))
def test_json_bytes_are_the_bytes_of_the_json_form(game: str) -> None:
    seats = EXPECTED[game][1]
    record = play_local(game, ["house:greedy"] + ["house:random"] * (seats - 1), seed=4)
    assert record.json_bytes() == orjson.dumps(record.to_json())
    assert record.json_bytes(timing=False) == orjson.dumps(record.to_json(timing=False))
    # Every optional part: auto and fallback entries, chance entries, faults, notes, stderr.
    odd = dataclasses.replace(
        record,
        log=[
            *record.log[:3],
            LogEntry(0, "PLAY", 2, auto=True),
            LogEntry(1, "PLAY", 0, fallback=True, events=({"event": "x", "n": [1]},)),
            LogEntry(None, "deal", outcome=(3, 1)),
        ],
        faults=[Fault(1, FaultKind.TIMEOUT, 4, "slow")],
        played_out=[1],
        outcome=Outcome.ABORTED,
        abort_reason=AbortReason.WALL_CLOCK,
        notes=[Note(0, 2, "capped")],
        stderr=[StderrBlock(1, "decision", 3, ("a", "b"))],
    )
    assert odd.json_bytes() == orjson.dumps(odd.to_json())
    assert MatchRecord.from_json(orjson.loads(odd.json_bytes())) == odd
