"""Kept streams: a warm connection plays match after match on one Bot.Play stream.

Real runtimes (the SDK's gRPC server, in this process) on real unix sockets; a match's
faults never reach the next match's stream.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from saloon.referee.bots import resolve_seat
from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_match
from saloon.referee.record import MatchRecord
from saloon.referee.remote import BotConnection
from saloon.sdk import Bot, Decision
from saloon.sdk.loader import load_bot
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import unix_target
from saloon.sdk.runtime import BotService, bot_handler

GAME = "seas-of-strife-v1"
#: A second per decision: clean matches must stay clean on a loaded CI machine (300 ms
#: once gave a first-legal-action bot a TIMEOUT at load ~4), and a late answer is still
#: late by a clear margin.
LIMITS = MatchLimits(decision_ms=1000, bank_ms=0, strike_limit=3, start_ms=10_000)


def serve(service: BotService, path: Path) -> grpc.Server:
    from concurrent import futures

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers([bot_handler(service)])
    server.add_insecure_port(unix_target(path))
    server.start()
    return server


def play(connection: BotConnection, seed: int) -> MatchRecord:
    seats = [connection.seat("warm")]
    seats += [resolve_seat("house:random", GAME) for _ in range(2)]
    return play_match(GAME, seats, seed, limits=LIMITS)


def matches(service: BotService, tmp_path: Path, count: int) -> tuple[list[MatchRecord], int]:
    """``count`` matches of seat 0 on one warm connection; the records and streams opened."""
    server = serve(service, tmp_path / "bot.sock")
    connection = BotConnection(unix_target(tmp_path / "bot.sock"))
    try:
        assert connection.wait_ready(10)
        records = [play(connection, seed) for seed in range(1, count + 1)]
        return records, connection.streams
    finally:
        connection.close()
        server.stop(None)


def test_clean_matches_share_one_stream(tmp_path: Path) -> None:
    records, streams = matches(BotService(load_bot("house:random")), tmp_path, 3)
    assert [r.faults for r in records] == [[], [], []]
    assert streams == 1


class SlowOnce(Bot):
    """Answers its first decision of the whole runtime after the deadline, then at once."""

    calls = 0

    def act(self, decision: Decision[Any, Any]) -> Any:
        SlowOnce.calls += 1
        if SlowOnce.calls == 1:
            time.sleep(2 * LIMITS.decision_ms / 1000)  # a TIMEOUT, then a late answer
        return decision.legal[0]


class CrashOnce(Bot):
    calls = 0

    def act(self, decision: Decision[Any, Any]) -> Any:
        CrashOnce.calls += 1
        if CrashOnce.calls == 1:
            raise RuntimeError("once")
        return decision.legal[0]


@pytest.mark.parametrize(("bot", "kind"), [(SlowOnce, "TIMEOUT"), (CrashOnce, "CRASH")])
def test_a_fault_drops_the_stream_and_the_next_match_is_clean(
    tmp_path: Path, bot: type[Bot], kind: str
) -> None:
    """A late answer (or a crash) of match 1 never reaches match 2: a new stream."""
    bot.calls = 0  # type: ignore[attr-defined]
    records, streams = matches(BotService(lambda game: bot()), tmp_path, 3)
    # (The late answer may also make the next decision late: one TIMEOUT or more.)
    assert records[0].faults
    assert {(f.seat, f.kind.value) for f in records[0].faults} == {(0, kind)}
    assert records[1].faults == [] and records[2].faults == []
    assert streams == 2  # match 2 on a new stream, kept for match 3


class OldRuntime(BotService):
    """A runtime from before kept streams: it never sees MatchStart.keep_stream."""

    def Play(self, request_iterator: Iterable[bot_pb2.ToBot], context: Any) -> Iterator[Any]:
        def unaware() -> Iterator[bot_pb2.ToBot]:
            for message in request_iterator:
                if message.WhichOneof("message") == "start":
                    message.start.ClearField("keep_stream")
                yield message

        return super().Play(unaware(), context)


class Chatty(BotService):
    """Keeps streams, but sends a stale answer after each `ended`."""

    def Play(self, request_iterator: Iterable[bot_pb2.ToBot], context: Any) -> Iterator[Any]:
        for reply in super().Play(request_iterator, context):
            yield reply
            if reply.WhichOneof("message") == "ended":
                yield bot_pb2.FromBot(decision=bot_pb2.Decision(index=7, action=0))


@pytest.mark.parametrize("service", [OldRuntime, Chatty])
def test_a_stream_not_kept_cleanly_is_replaced(tmp_path: Path, service: type[BotService]) -> None:
    """An old runtime ends its stream after each match; a chatty one's kept stream is
    dropped at the next start: either way every match is clean, on a stream of its own."""
    records, streams = matches(service(load_bot("house:random")), tmp_path, 3)
    assert [r.faults for r in records] == [[], [], []]
    assert streams == 3
