"""Sandbox kinds without Docker: the record's sandbox object, seat kinds, the process kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from saloon.arena.cli import SEAT_KINDS
from saloon.referee.bots import resolve_seat
from saloon.referee.errors import BotSpecError
from saloon.referee.limits import SandboxInfo, SandboxLimits
from saloon.referee.match import play_match
from saloon.referee.record import MatchRecord, SeatInfo
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.worker.errors import UnknownSandbox, WorkerError
from saloon.worker.sandbox import open_sandbox
from saloon.worker.sandbox.process import ProcessSandbox

HONEST = Path(__file__).parents[1] / "integration" / "hostile" / "honest"


def test_sandbox_of_a_seat_round_trips_and_old_records_load() -> None:
    info = SandboxInfo("docker", SandboxLimits(memory_mb=128, cpus=0.5), "runsc")
    raw = SeatInfo(0, "docker:bot", "sha256:0123456789abcdef", info).to_json()
    assert raw["sandbox"] == {
        "kind": "docker",
        "runtime": "runsc",
        "limits": {
            "memory_mb": 128,
            "cpus": 0.5,
            "pids": 64,
            "tmpfs_mb": 16,
            "open_files": 256,
            "cpu_seconds": 600,
        },
    }
    record = play_match(
        "seizure-v1",
        [InProcessSeat(make_house_bot("seizure-v1", "random"), "house:random")] * 2,
        seed=1,
    )
    old = record.to_json()
    assert all("sandbox" not in seat for seat in old["seats"])  # records before sandboxes
    record.seats[0] = SeatInfo(0, "docker:bot", "", info)
    again = MatchRecord.from_json(json.loads(record.dumps()))
    assert again.seats[0].sandbox == info
    assert MatchRecord.from_json(old).seats[0].sandbox is None


def test_docker_is_a_registered_seat_kind() -> None:
    assert "docker" in SEAT_KINDS


def test_unknown_sandbox_and_unknown_kind_are_clear_errors() -> None:
    with pytest.raises(UnknownSandbox):
        open_sandbox("vm")
    assert issubclass(UnknownSandbox, WorkerError)
    with pytest.raises(BotSpecError, match="unknown sandbox"):
        resolve_seat(str(HONEST), "seizure-v1", sandbox="vm")
    with pytest.raises(BotSpecError, match="registered seat kind"):
        resolve_seat("nosuchkind:bot", "seizure-v1")


def test_process_sandbox_records_its_kind_and_limits() -> None:
    limits = SandboxLimits(memory_mb=300)
    with open_sandbox("process") as sandbox:
        assert isinstance(sandbox, ProcessSandbox)
        seat = sandbox.seat(str(HONEST), "honest", limits=limits)
        house = InProcessSeat(make_house_bot("seizure-v1", "random"), "house:random")
        record = play_match("seizure-v1", [seat, house], seed=2)
    assert record.faults == []
    assert record.seats[0].sandbox == SandboxInfo("process", limits)
    assert record.seats[0].version.startswith("sha256:")
