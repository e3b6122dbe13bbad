"""Each game's public events land in the record, survive JSON, and replay checks them."""

from __future__ import annotations

import json

import pytest

from saloon.referee.errors import RecordError
from saloon.referee.match import play_local
from saloon.referee.record import MatchRecord
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
