"""Full matches between SDK bots run as real processes over gRPC on real unix sockets."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from saloon.games import game_ids, get_game
from saloon.referee.bots import resolve_seat
from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_local, play_match
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.remote import BotConnection, ConnectionThreadError
from saloon.referee.seats import StartInfo
from saloon.sdk.protocol import unix_target

from .bots.house_mix import HOUSE_MIX
from .helpers import bot, check_record

LIMITS = MatchLimits(decision_ms=2_000, bank_ms=10_000, start_ms=20_000)


def house_names(game_id: str, seats: int) -> list[str]:
    """The house bot tests/integration/bots/house_mix.py plays at each seat."""
    return [f"house:{HOUSE_MIX[s % len(HOUSE_MIX)]}" for s in range(seats)]


@pytest.mark.parametrize("game_id", game_ids())
def test_grpc_match_equals_in_process_match(game_id: str) -> None:
    seats = get_game(game_id).min_players
    local = play_local(game_id, house_names(game_id, seats), seed=11, limits=LIMITS)
    remote = play_local(game_id, [bot("house_mix.py")] * seats, seed=11, limits=LIMITS)
    assert remote.faults == []
    assert [e.to_json() for e in remote.log] == [e.to_json() for e in local.log]
    assert (remote.scores, remote.ranks) == (local.scores, local.ranks)
    check_record(remote)
    decisions = [t for t in remote.timing["decisions_us"]]
    assert decisions and all(us > 0 for _, _, us in decisions)


def test_mixed_seats_and_bot_styles() -> None:
    """A function bot, a bot folder importing its own module, and a house bot together."""
    specs = [bot("function_bot.py"), bot("folder_bot"), "house:random"]
    record = play_local("seas-of-strife-v1", specs, seed=3, limits=LIMITS)
    assert record.faults == []
    assert [s.bot for s in record.seats] == specs
    check_record(record)


@pytest.fixture
def served_bot(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A runtime started by hand (as a developer would, e.g. under a debugger)."""
    socket_path = tmp_path / "bot.sock"
    argv = [sys.executable, "-m", "saloon.sdk.run", "house:greedy", "--socket", str(socket_path)]
    proc = subprocess.Popen(argv, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        yield unix_target(socket_path)
    finally:
        proc.terminate()
        proc.wait(10)


def test_grpc_target_seat_serves_several_matches(served_bot: str) -> None:
    """grpc:TARGET reaches a running runtime; one runtime serves match after match."""
    for seed in (1, 2):
        seats = [resolve_seat(f"grpc:{served_bot}", "seas-of-strife-v1")]
        seats += [resolve_seat("house:random", "seas-of-strife-v1") for _ in range(2)]
        remote = play_match("seas-of-strife-v1", seats, seed, limits=LIMITS)
        local = play_local(
            "seas-of-strife-v1", ["house:greedy", "house:random", "house:random"], seed
        )
        assert remote.faults == []
        assert remote.scores == local.scores


def test_tcp_for_development() -> None:
    """--port serves on 127.0.0.1 (development); port 0 picks a free one and prints it."""
    argv = [sys.executable, "-m", "saloon.sdk.run", bot("function_bot.py"), "--port", "0"]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = int(line.rsplit(":", 1)[1])
        seats = [resolve_seat(f"grpc:127.0.0.1:{port}", "seas-of-strife-v1")]
        seats += [resolve_seat("house:random", "seas-of-strife-v1") for _ in range(2)]
        record = play_match("seas-of-strife-v1", seats, 5, limits=LIMITS)
        assert record.faults == []
    finally:
        proc.terminate()
        proc.wait(10)


def test_bot_stderr_is_kept_with_the_seat() -> None:
    seat = ProcessSeat(bot("raises.py"))
    others = [resolve_seat("house:random", "seas-of-strife-v1") for _ in range(2)]
    play_match("seas-of-strife-v1", [seat, *others], 1, limits=LIMITS)
    assert "ValueError: the bot's own bug" in seat.stderr
    assert "Traceback" in seat.stderr


def test_unloadable_bot_is_a_crash_with_its_error() -> None:
    seat = ProcessSeat(bot("servers.py"))  # a .py file that defines no bot
    others = [resolve_seat("house:random", "seas-of-strife-v1") for _ in range(2)]
    record = play_match("seas-of-strife-v1", [seat, *others], 1, limits=LIMITS)
    assert [(f.kind.value, f.decision) for f in record.faults] == [("CRASH", -1)]
    assert "defines no bot" in record.faults[0].detail
    assert record.played_out == [0]


def test_warm_connection_plays_match_after_match(served_bot: str) -> None:
    """One BotConnection (one channel) serves a seat per match, as a warm container does."""
    connection = BotConnection(served_bot)
    try:
        assert connection.wait_ready(20)
        for seed in (1, 2, 3):
            others = [resolve_seat("house:random", "seas-of-strife-v1") for _ in range(2)]
            seats = [connection.seat("warm:greedy"), *others]
            remote = play_match("seas-of-strife-v1", seats, seed, limits=LIMITS)
            local = play_local(
                "seas-of-strife-v1", ["house:greedy", "house:random", "house:random"], seed
            )
            assert remote.faults == []
            assert [e.to_json() for e in remote.log] == [e.to_json() for e in local.log]
            assert (remote.scores, remote.ranks) == (local.scores, local.ranks)
            assert connection.healthy()  # closing a warm seat keeps its connection
        channel = connection.channel
        errors: list[BaseException] = []

        def elsewhere() -> None:
            try:
                connection.seat("x").start(StartInfo("m", "seas-of-strife-v1", {}, 0, 3, 1, 9, 9))
            except ConnectionThreadError as exc:
                errors.append(exc)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join(20)
        assert len(errors) == 1 and connection.channel is channel
    finally:
        connection.close()
    assert not connection.healthy()
