"""Bot protocol speed: the referee's decision round trip against a bare gRPC floor.

    .venv/bin/python bench/protocol.py [--decisions 3000] [--seconds 3]

Prints two tables:

1. Decision round trip over a unix socket, bot in its own process: the floor (a bare gRPC
   bidi ping-pong of the same message sizes: a queue-fed request iterator, ``next()`` on
   the responses, a server that answers fixed bytes) next to the referee's
   ``GrpcSeat.decide`` with the real runtime and house:random (JSON encoding, protobuf,
   the reader thread, the bot's typed decoding and its choice), median and p99, and the
   ratio of the medians. Both run in the same process, interleaved in rounds.
2. Full matches per second per game: in-process house bots, and the same bots over gRPC
   (one warm runtime process per seat, as with warm containers; start-up not counted).
"""

from __future__ import annotations

import argparse
import queue
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import orjson

from saloon.referee.games import game_ids, get_game
from saloon.referee.limits import MatchLimits
from saloon.referee.match import Match, play_local
from saloon.referee.remote import GrpcSeat, ProcessSeat
from saloon.referee.seats import DecisionRequest, InProcessSeat, StartInfo
from saloon.sdk.house import house_bots, make_house_bot
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import PLAY_METHOD, unix_target

LIMITS = MatchLimits(decision_ms=10_000, bank_ms=60_000, start_ms=30_000)


# -- the floor -------------------------------------------------------------------------
def floor_server(socket_path: str, reply_size: int) -> None:
    """A bare gRPC server answering each message with ``reply_size`` fixed bytes."""
    reply = b"x" * reply_size

    def play(requests: Iterator[bytes], context: Any) -> Iterator[bytes]:
        for _ in requests:
            yield reply

    service, method = PLAY_METHOD.strip("/").split("/")
    handler = grpc.method_handlers_generic_handler(
        service, {method: grpc.stream_stream_rpc_method_handler(play)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([handler])
    server.add_insecure_port(unix_target(socket_path))
    server.start()
    server.wait_for_termination()


class Floor:
    """A bare bidi stream to the floor server: send bytes, wait for the answer."""

    def __init__(self, request_size: int, reply_size: int) -> None:
        self.dir = tempfile.mkdtemp(prefix="saloon-bench-")
        path = str(Path(self.dir) / "floor.sock")
        argv = [sys.executable, __file__, "--floor-server", path, str(reply_size)]
        self.proc = subprocess.Popen(argv, start_new_session=True)
        while not Path(path).exists():
            time.sleep(0.01)
        self.channel = grpc.insecure_channel(unix_target(path))
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.call = self.channel.stream_stream(PLAY_METHOD)(self._requests())
        self.payload = b"y" * request_size

    def _requests(self) -> Iterator[bytes]:
        while (item := self.outbox.get()) is not None:
            yield item

    def round_trip(self) -> None:
        self.outbox.put(self.payload)
        next(self.call)

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()
        self.proc.terminate()
        self.proc.wait()


# -- the referee's round trip -----------------------------------------------------------
class Recorder(InProcessSeat):
    """An in-process seat that keeps every decision request it is asked."""

    requests: list[DecisionRequest] = []

    def decide(self, request: DecisionRequest) -> int:
        Recorder.requests.append(request)
        return super().decide(request)


def sample_requests(game_id: str, matches: int) -> list[DecisionRequest]:
    """Real decision requests of seat 0 from a few in-process matches."""
    Recorder.requests = []
    spec = get_game(game_id)
    for seed in range(matches):
        seats = [Recorder(make_house_bot(game_id, "random"), "house:random")]
        seats += [
            InProcessSeat(make_house_bot(game_id, "random"), "house:random")
            for _ in range(spec.min_players - 1)
        ]
        Match(spec, seats, seed).run()
    return list(Recorder.requests)


def wire_size(request: DecisionRequest) -> int:
    """Bytes of the ToBot message the gRPC seat sends for ``request``."""
    message = bot_pb2.ToBot(
        decision=bot_pb2.DecisionRequest(
            index=request.index,
            kind=request.kind,
            observation_json=orjson.dumps(request.observation),
            legal_json=orjson.dumps(request.legal),
            decision_ms=request.decision_ms,
            bank_ms=request.bank_ms,
        )
    )
    return message.ByteSize()


def bot_work_us(game_id: str, requests: list[DecisionRequest]) -> float:
    """Median time the runtime spends in-process on one request (parse, typed decode, act)."""
    from saloon.sdk.loader import load_bot
    from saloon.sdk.runtime import MatchSession

    session = MatchSession(load_bot("house:random"))
    start = bot_pb2.MatchStart(game=game_id, seat=0, num_seats=get_game(game_id).min_players)
    session.handle(bot_pb2.ToBot(start=start))
    wire = [
        bot_pb2.ToBot(
            decision=bot_pb2.DecisionRequest(
                index=r.index,
                kind=r.kind,
                observation_json=orjson.dumps(r.observation),
                legal_json=orjson.dumps(r.legal),
            )
        ).SerializeToString()
        for r in requests
    ]
    times = []
    for raw in wire * 3:
        t = time.perf_counter_ns()
        reply = session.handle(bot_pb2.ToBot.FromString(raw))
        assert reply is not None
        reply.SerializeToString()
        times.append((time.perf_counter_ns() - t) / 1000)
    return statistics.median(times)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_round_trip(game_id: str, decisions: int) -> tuple[list[float], list[float], int, float]:
    """Floor and referee round trips (us), interleaved in rounds; request size; bot work."""
    requests = sample_requests(game_id, 5)
    bot_us = bot_work_us(game_id, requests)
    size = round(statistics.mean(wire_size(r) for r in requests))
    reply = bot_pb2.FromBot(decision=bot_pb2.Decision(index=100, action=3)).ByteSize()
    floor = Floor(size, reply)
    seat = ProcessSeat("house:random", command=None)
    seat.process.command[3] = "house:random"
    seat.start(StartInfo("bench", game_id, {}, 0, get_game(game_id).min_players, 1, 10_000, 60_000))
    floor_us: list[float] = []
    referee_us: list[float] = []
    try:
        for _ in range(100):  # warm both
            floor.round_trip()
            seat.decide(requests[0])
        done = 0
        rounds = 10
        while done < decisions:
            for _ in range(decisions // rounds):
                t = time.perf_counter_ns()
                floor.round_trip()
                floor_us.append((time.perf_counter_ns() - t) / 1000)
            for i in range(decisions // rounds):
                request = requests[(done + i) % len(requests)]
                t = time.perf_counter_ns()
                seat.decide(request)
                referee_us.append((time.perf_counter_ns() - t) / 1000)
            done += decisions // rounds
    finally:
        floor.close()
        seat.close()
    return floor_us, referee_us, size, bot_us


# -- matches per second -----------------------------------------------------------------
def matches_per_second(game_id: str, seconds: float) -> tuple[float, float, int]:
    """In-process and warm-gRPC matches/s of house bots (greedy/random by seat)."""
    spec = get_game(game_id)
    seats = spec.min_players
    names = list(house_bots(game_id))
    specs = [f"house:{names[s % len(names)]}" for s in range(seats)]

    def rate(play: Any) -> float:
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            play(count)
            count += 1
        return count / (time.perf_counter() - started)

    local = rate(lambda seed: play_local(game_id, specs, seed, limits=LIMITS))
    runtimes = [ProcessSeat(s) for s in specs]
    for runtime, s in zip(runtimes, specs, strict=True):
        runtime.process.command[3] = s
        runtime.launch()
    try:
        for runtime in runtimes:  # wait until each serves
            runtime.start(StartInfo("warm", game_id, {}, 0, seats, 1, 10_000, 60_000))
        targets = [r.target for r in runtimes]
        remote = rate(
            lambda seed: Match(
                spec,
                [GrpcSeat(t, s) for t, s in zip(targets, specs, strict=True)],
                seed,
                limits=LIMITS,
            ).run()
        )
    finally:
        for runtime in runtimes:
            runtime.close()
    return local, remote, seats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--game", default="seas-of-strife-v1", help="for the round trip")
    parser.add_argument("--floor-server", nargs=2, metavar=("SOCKET", "REPLY_SIZE"))
    args = parser.parse_args()
    if args.floor_server:
        floor_server(args.floor_server[0], int(args.floor_server[1]))
        return

    floor_us, referee_us, size, bot_us = bench_round_trip(args.game, args.decisions)
    f50, r50 = statistics.median(floor_us), statistics.median(referee_us)
    f99, r99 = percentile(floor_us, 0.99), percentile(referee_us, 0.99)
    print(f"Decision round trip, {args.game}, unix socket, {len(referee_us)} decisions,")
    print(f"request ~{size} bytes (mean wire size of real requests)\n")
    print(f"| {'path':<40} | {'median us':>9} | {'p99 us':>8} |")
    print(f"|{'-' * 42}|{'-' * 11}|{'-' * 10}|")
    print(f"| {'floor: bare gRPC bidi ping-pong':<40} | {f50:>9.0f} | {f99:>8.0f} |")
    print(f"| {'referee: GrpcSeat.decide + SDK runtime':<40} | {r50:>9.0f} | {r99:>8.0f} |")
    print(f"| {'ratio referee / floor':<40} | {r50 / f50:>9.2f} | {r99 / f99:>8.2f} |")
    print(f"| {'bot work in the runtime (in-process)':<40} | {bot_us:>9.0f} | {'':>8} |")
    ratio = (r50 - bot_us) / f50
    print(f"| {'ratio (referee - bot work) / floor':<40} | {ratio:>9.2f} | {'':>8} |")
    print()
    print(f"| {'game':<22} | seats | {'in-process/s':>12} | {'gRPC/s':>8} |")
    print(f"|{'-' * 24}|-------|{'-' * 14}|{'-' * 10}|")
    for game_id in game_ids():
        local, remote, seats = matches_per_second(game_id, args.seconds)
        print(f"| {game_id:<22} | {seats:>5} | {local:>12.1f} | {remote:>8.1f} |")


if __name__ == "__main__":
    main()
