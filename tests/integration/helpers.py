"""Shared helpers of the integration tests: bot paths, replay of a record."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from saloon.games import get_game
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.record import MatchRecord

BOTS = Path(__file__).parent / "bots"


def bot(name: str) -> str:
    """The path of a test bot file or folder."""
    return str(BOTS / name)


def server_seat(mode: str) -> ProcessSeat:
    """A seat run by a hand-written misbehaving server (tests/integration/bots/servers.py)."""
    command = [sys.executable, bot("servers.py"), mode, "--socket", "{socket}"]
    return ProcessSeat(f"server:{mode}", command=command)


def check_record(record: MatchRecord) -> None:
    """The record survives its JSON form, and replaying its log gives its scores."""
    again = MatchRecord.from_json(json.loads(record.dumps()))
    assert again.dumps() == record.dumps()
    state = get_game(record.game).new_game(len(record.seats), record.options)
    for entry in record.log:
        if entry.is_chance:
            state.apply_chance(entry.outcome)
        else:
            assert state.current_player() == entry.seat
            state.apply_action(entry.action)
    assert state.is_terminal()
    assert state.scores() == record.scores
    assert len(record.ranks) == len(record.seats)
    engine = state.ranks()
    if not record.played_out:
        assert record.ranks == engine, "without played-out seats the record keeps engine ranks"
    kept = [s for s in range(len(engine)) if s not in record.played_out]
    for seat in record.played_out:
        assert all(record.ranks[seat] > record.ranks[k] for k in kept), "played out ranks last"
    for a in kept:
        for b in kept:
            if engine[a] < engine[b]:
                assert record.ranks[a] < record.ranks[b], "kept seats keep the engine's order"
