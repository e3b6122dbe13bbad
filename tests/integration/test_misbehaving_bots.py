"""Misbehaving bots, each a real process: the right fault, a valid record, no hang.

Each misbehaving seat plays against in-process house bots with short clocks. The only time
check is the no-hang bound: the match finished well inside what its clocks allow.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest

from saloon.referee.bots import resolve_seat
from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_local, play_match
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.seats import Seat

from .helpers import bot, check_record, server_seat

GAME = "seas-of-strife-v1"
LIMITS = MatchLimits(decision_ms=200, bank_ms=0, strike_limit=3, start_ms=5_000)
#: Generous: every clock of the match used up, plus process start-up and slack.
NO_HANG_S = 60.0


@dataclass(frozen=True)
class Case:
    name: str
    kinds: list[str]  # the fault kinds recorded, in order
    first_decision: int | None = None  # -1 when the fault is at match start


CASES = [
    Case("silent.py", ["TIMEOUT"] * 3),
    Case("late.py", ["TIMEOUT"] * 3),
    Case("exits.py", ["CRASH"]),
    Case("raises.py", ["CRASH"]),
    Case("illegal.py", ["INVALID"] * 3),
    Case("bad_start.py", ["CRASH"], -1),
    Case("server:garbage", ["INVALID"] * 3),
    Case("server:huge", ["INVALID"]),
    Case("server:flood", ["INVALID"]),
    Case("server:stall", ["TIMEOUT"], -1),
    Case("server:garbage-socket", ["INVALID"], -1),
]


def seat_for(name: str) -> Seat:
    if name.startswith("server:"):
        return server_seat(name.removeprefix("server:"))
    return ProcessSeat(bot(name))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_misbehaving_bot(case: Case) -> None:
    limits = LIMITS
    if case.name in ("server:stall", "server:garbage-socket"):
        limits = MatchLimits(decision_ms=200, bank_ms=0, start_ms=1_500)
    elif case.name == "server:huge":
        # gRPC refuses the 8 MiB answer only once it has come through HTTP/2 flow
        # control: ~190-200 ms on a loaded 2-core machine, as long as a 200 ms clock.
        limits = MatchLimits(decision_ms=3_000, bank_ms=0, strike_limit=3, start_ms=5_000)
    bad = seat_for(case.name)
    others = [resolve_seat("house:greedy", GAME), resolve_seat("house:random", GAME)]
    started = time.monotonic()
    record = play_match(GAME, [bad, *others], seed=4, limits=limits)
    assert time.monotonic() - started < NO_HANG_S

    assert [f.kind.value for f in record.faults] == case.kinds
    assert all(f.seat == 0 for f in record.faults)
    if case.first_decision is not None:
        assert record.faults[0].decision == case.first_decision
    else:  # faults are recorded at the decision that caused them
        assert all(record.log[f.decision].seat == 0 for f in record.faults)
    assert record.played_out == [0]
    assert record.ranks[0] == max(record.ranks) and record.ranks[0] >= 1
    check_record(record)
    if isinstance(bad, ProcessSeat):  # the bot process is gone, killed by its id
        assert bad.process.exit_code() is not None


def test_referee_unharmed_after_misbehaviour() -> None:
    """After a crashing bot, the same process plays a normal match with the same result."""
    seats = [ProcessSeat(bot("exits.py")), resolve_seat("house:greedy", GAME)]
    seats.append(resolve_seat("house:random", GAME))
    play_match(GAME, seats, seed=9, limits=LIMITS)
    first = play_local(GAME, ["house:greedy"] * 3, seed=9)
    second = play_local(GAME, ["house:greedy"] * 3, seed=9)
    assert first.dumps(timing=False) == second.dumps(timing=False)


def test_late_answers_use_the_bank_then_time_out() -> None:
    """A bank covers a late answer (charged), and only an empty bank makes it a TIMEOUT."""
    limits = MatchLimits(decision_ms=100, bank_ms=450, strike_limit=3, start_ms=5_000)
    others = [resolve_seat("house:greedy", GAME), resolve_seat("house:random", GAME)]
    record = play_match(GAME, [ProcessSeat(bot("late.py")), *others], seed=4, limits=limits)
    late = [t for t in record.timing["decisions_us"] if t[1] == 0]
    assert record.faults, "a 300 ms bot must run out of a 450 ms bank"
    first_fault = record.faults[0].decision
    assert [t[0] for t in late].index(first_fault) >= 1  # the first late answer was taken
    assert record.played_out == [0]
