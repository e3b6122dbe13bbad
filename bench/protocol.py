"""Bot protocol speed: the referee's decision round trip against a bare gRPC floor.

    .venv/bin/python bench/protocol.py [--decisions 3000] [--cycles 300] [--seconds 3]

Prints three tables (each figure beside its floor, measured in the same run):

1. Decision round trip over a unix socket, bot in its own process. The floor is the
   fastest bare gRPC bidi this machine does for the referee's job: a ``grpc.aio`` stream
   driven from the bench thread's own event loop (write, await the answer), against a
   server answering fixed bytes of the same sizes. Beside it the referee's
   ``GrpcSeat.decide`` with the real runtime (sandboxed process) and house:random (JSON
   encoding, protobuf, the event loop, the typed legal actions and the bot's choice: the
   runtime types the observation only when a bot reads it, and house:random does not), and
   between them the floor's client with the same runtime (real requests encoded
   beforehand: the runtime's part of the round trip), interleaved in rounds; medians, p99
   and ratios to the floor. Then, in a second phase
   (a sync channel's threads would slow the first), the old floor (a sync client with a
   queue-fed request iterator) against the floor again.
2. A seat's start + finish + close per match: on a warm ``BotConnection`` and with a new
   channel per seat (as before warm seats), against the floor's round trip.
3. Whole matches per second per game: in-process house bots, and the same bots over gRPC
   (one runtime process per seat, already serving): a new channel per seat and match, and
   warm connections.
4. Each runtime of ours beside Python's, in the process sandbox (``--languages`` prints
   only this one): the same bot (the first legal action) in Python and in JavaScript (the
   kit's Node.js runtime, when node and the kit's node_modules are here). Cold start to
   first decision (a new sandboxed process: launch, serve, Ready, one decision) and the
   referee's decision round trip (``GrpcSeat.decide``, real requests), interleaved in
   rounds so both see the same load; medians, p99 and the ratio to Python's (the issue's
   target: no runtime slower than Python's by more than 10%).
"""

from __future__ import annotations

import argparse
import queue
import shutil
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
import grpc.aio
import orjson
from rich.console import Console
from rich.table import Table

from saloon.games import game_ids, get_game
from saloon.referee.limits import MatchLimits
from saloon.referee.match import Match, play_local
from saloon.referee.process.seat import ProcessSeat
from saloon.referee.remote import BotConnection, GrpcSeat, thread_loop
from saloon.referee.seats import DecisionRequest, EndInfo, InProcessSeat, StartInfo
from saloon.sdk.house import make_house_bot
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


class SyncFloor:
    """The old floor: a sync client with a queue-fed request iterator and ``next()``."""

    def __init__(self, path: str, request_size: int) -> None:
        self.channel = grpc.insecure_channel(unix_target(path))
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.call = self.channel.stream_stream(PLAY_METHOD)(self._requests())
        self.payload = b"y" * request_size

    def _requests(self) -> Iterator[bytes]:
        while (item := self.outbox.get()) is not None:
            yield item

    def round_trips(self, count: int) -> list[float]:
        """``count`` round trips, each timed (us)."""
        times = []
        for _ in range(count):
            t = time.perf_counter_ns()
            self.outbox.put(self.payload)
            next(self.call)
            times.append((time.perf_counter_ns() - t) / 1000)
        return times

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()


class Floor:
    """The floor: a bare grpc.aio bidi stream driven from this thread's own event loop.

    The fastest bare gRPC bidi measured here for the referee's job (MEASURED.md): send
    bytes, await the answer, all inside one coroutine, no thread hand-off.
    """

    def __init__(self, request_size: int, reply_size: int) -> None:
        self.dir = tempfile.mkdtemp(prefix="saloon-bench-")
        self.path = str(Path(self.dir) / "floor.sock")
        argv = [sys.executable, __file__, "--floor-server", self.path, str(reply_size)]
        self.proc = subprocess.Popen(argv, start_new_session=True)
        while not Path(self.path).exists():
            time.sleep(0.01)
        self.loop = thread_loop()
        self.channel, self.call = self.loop.run_until_complete(self._open())
        self.payload = b"y" * request_size

    async def _open(self) -> tuple[grpc.aio.Channel, Any]:
        channel = grpc.aio.insecure_channel(unix_target(self.path))
        await channel.channel_ready()
        return channel, channel.stream_stream(PLAY_METHOD)(wait_for_ready=True)

    async def _round_trips(self, count: int) -> list[float]:
        call, payload, times = self.call, self.payload, []
        for _ in range(count):
            t = time.perf_counter_ns()
            await call.write(payload)
            await call.read()
            times.append((time.perf_counter_ns() - t) / 1000)
        return times

    def round_trips(self, count: int) -> list[float]:
        """``count`` round trips, each timed (us)."""
        return self.loop.run_until_complete(self._round_trips(count))

    def close(self) -> None:
        self.call.cancel()
        self.loop.run_until_complete(self.channel.close())
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class RuntimeFloor:
    """The floor's client on a stream to the SDK runtime: real requests, encoded beforehand.

    What the runtime side costs beyond the floor (its protobuf, the bot's typed decoding
    and choice), with nothing of the referee's side.
    """

    def __init__(self, loop: Any, target: str, game_id: str, requests: list[DecisionRequest]):
        self.loop = loop
        self.wire = [request_bytes(r) for r in requests]
        start = bot_pb2.MatchStart(
            protocol_version=1, game=game_id, seat=0, num_seats=get_game(game_id).min_players
        )
        self.channel, self.call = loop.run_until_complete(
            self._open(target, bot_pb2.ToBot(start=start).SerializeToString())
        )
        self.sent = 0

    async def _open(self, target: str, start: bytes) -> tuple[grpc.aio.Channel, Any]:
        channel = grpc.aio.insecure_channel(target)
        call = channel.stream_stream(PLAY_METHOD)(wait_for_ready=True)
        await call.write(start)
        await call.read()  # Ready
        return channel, call

    async def _round_trips(self, count: int) -> list[float]:
        call, wire, times = self.call, self.wire, []
        for _ in range(count):
            payload = wire[self.sent % len(wire)]
            self.sent += 1
            t = time.perf_counter_ns()
            await call.write(payload)
            await call.read()
            times.append((time.perf_counter_ns() - t) / 1000)
        return times

    def round_trips(self, count: int) -> list[float]:
        return self.loop.run_until_complete(self._round_trips(count))  # type: ignore[no-any-return]

    def close(self) -> None:
        self.call.cancel()
        self.loop.run_until_complete(self.channel.close())


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


def request_bytes(request: DecisionRequest) -> bytes:
    """The ToBot message the gRPC seat sends for ``request``."""
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
    return message.SerializeToString()


def wire_size(request: DecisionRequest) -> int:
    """Bytes of the ToBot message the gRPC seat sends for ``request``."""
    return len(request_bytes(request))


def bot_work_us(
    game_id: str, requests: list[DecisionRequest], read_observation: bool = False
) -> float:
    """Median time the runtime spends in-process on one request (parse, typed decode, act):
    house:random's (it reads only the legal actions), or a bot that also reads its typed
    observation (the runtime types it on first read)."""
    from saloon.sdk import Decision, FunctionBot
    from saloon.sdk.loader import load_bot
    from saloon.sdk.runtime import MatchSession

    def reader(decision: Decision[Any, Any]) -> Any:
        assert decision.observation is not None
        return decision.legal[0]

    factory = (lambda game: FunctionBot(reader)) if read_observation else load_bot("house:random")
    session = MatchSession(factory)
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


def bench_round_trip(game_id: str, decisions: int) -> dict[str, Any]:
    """Floors and referee round trips (us), interleaved in rounds; request size; bot work."""
    requests = sample_requests(game_id, 5)
    bot_us = bot_work_us(game_id, requests)
    reader_us = bot_work_us(game_id, requests, read_observation=True)
    size = round(statistics.mean(wire_size(r) for r in requests))
    reply = bot_pb2.FromBot(decision=bot_pb2.Decision(index=100, action=3)).ByteSize()
    floor = Floor(size, reply)
    seat = ProcessSeat("house:random")
    seat.start(StartInfo("bench", game_id, {}, 0, get_game(game_id).min_players, 1, 10_000, 60_000))
    runtime_floor = RuntimeFloor(floor.loop, seat.target, game_id, requests)
    floor_us: list[float] = []
    runtime_us: list[float] = []
    referee_us: list[float] = []
    # Short alternating rounds: both sides see the same machine load (it drifts a lot).
    per_round = 20
    rounds = max(1, decisions // per_round)
    try:
        floor.round_trips(100)  # warm all three
        runtime_floor.round_trips(100)
        for request in requests[:100]:
            seat.decide(request)
        for done in range(0, per_round * rounds, per_round):
            floor_us += floor.round_trips(per_round)
            runtime_us += runtime_floor.round_trips(per_round)
            for i in range(per_round):
                request = requests[(done + i) % len(requests)]
                t = time.perf_counter_ns()
                seat.decide(request)
                referee_us.append((time.perf_counter_ns() - t) / 1000)
    finally:
        runtime_floor.close()
        seat.close()
    # The old floor apart: a sync channel's threads in the process slow everything else.
    sync_floor = SyncFloor(floor.path, size)
    sync_us: list[float] = []
    floor2_us: list[float] = []
    try:
        sync_floor.round_trips(100)
        for _ in range(rounds):
            floor2_us += floor.round_trips(per_round)
            sync_us += sync_floor.round_trips(per_round)
    finally:
        sync_floor.close()
        floor.close()
    return {
        "floor": floor_us,
        "runtime": runtime_us,
        "sync": sync_us,
        "floor2": floor2_us,
        "referee": referee_us,
        "size": size,
        "bot_us": bot_us,
        "reader_us": reader_us,
    }


def bench_seat_cycle(game_id: str, cycles: int) -> dict[str, list[float]]:
    """A seat's start + finish + close (ms): on a warm connection, and with its own channel.

    Beside them, one bare round trip on an open stream (the floor's), in the same run: a
    warm seat's start is a round trip (MatchStart -> Ready) on the stream its connection
    kept from the match before; a cold one's opens a channel and a stream. Each on a
    runtime of its own (a kept stream holds one of a runtime's concurrent matches).
    """
    runtime = ProcessSeat("house:random")
    cold_runtime = ProcessSeat("house:random")
    seats = get_game(game_id).min_players
    info = StartInfo("cycle", game_id, {}, 0, seats, 1, 10_000, 60_000)
    end = EndInfo([0.0] * seats, list(range(1, seats + 1)))
    runtime.start(info)  # the runtimes serve from here on
    cold_runtime.start(info)
    connection = BotConnection(runtime.target)
    out: dict[str, list[float]] = {"warm": [], "cold": []}

    def cycle(seat: GrpcSeat) -> float:
        t = time.perf_counter_ns()
        seat.start(info)
        seat.finish(end)
        seat.close()
        return (time.perf_counter_ns() - t) / 1e6

    try:
        for _ in range(10):
            cycle(connection.seat("warm"))
        for _ in range(cycles):
            out["warm"].append(cycle(connection.seat("warm")))
            out["cold"].append(cycle(GrpcSeat(cold_runtime.target, "cold")))
    finally:
        connection.close()
        runtime.close()
        cold_runtime.close()
    return out


# -- matches per second -----------------------------------------------------------------
def matches_per_second(game_id: str, seconds: float) -> tuple[float, float, float, int]:
    """Matches/s of house bots (greedy/random by seat): in-process, over gRPC with a new
    channel per seat and match, and over warm connections (one per runtime)."""
    spec = get_game(game_id)
    seats = spec.min_players
    names = ["greedy", "random"]  # the quick house bots (house:search thinks ~100 ms a move)
    specs = [f"house:{names[s % len(names)]}" for s in range(seats)]

    def rate(play: Any) -> float:
        count, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            play(count)
            count += 1
        return count / (time.perf_counter() - started)

    local = rate(lambda seed: play_local(game_id, specs, seed, limits=LIMITS))
    runtimes = [ProcessSeat(s) for s in specs]
    for runtime in runtimes:
        runtime.launch()
    connections: list[BotConnection] = []
    try:
        for runtime in runtimes:  # wait until each serves
            runtime.start(StartInfo("warm", game_id, {}, 0, seats, 1, 10_000, 60_000))
        targets = [r.target for r in runtimes]
        cold = rate(
            lambda seed: Match(
                spec,
                [GrpcSeat(t, s) for t, s in zip(targets, specs, strict=True)],
                seed,
                limits=LIMITS,
            ).run()
        )
        connections = [BotConnection(t) for t in targets]
        warm = rate(
            lambda seed: Match(
                spec,
                [c.seat(s) for c, s in zip(connections, specs, strict=True)],
                seed,
                limits=LIMITS,
            ).run()
        )
    finally:
        for connection in connections:
            connection.close()
        for runtime in runtimes:
            runtime.close()
    return local, cold, warm, seats


# -- each runtime beside Python's --------------------------------------------------------
FIRST_LEGAL = {
    "bot.py": "def act(decision):\n    return decision.legal[0]\n",
    "bot.js": "module.exports.act = (decision) => decision.legal[0];\n",
}


def language_seats(folder: Path) -> dict[str, Any]:
    """Seat makers of the first-legal bot per runtime here: name -> () -> ProcessSeat."""
    from saloon.referee.bots import resolve_seat
    from saloon.referee.process.node import node_unusable
    from saloon.sdk.languages import Language

    makers: dict[str, Any] = {}
    for name, language, text in (
        ("Python", Language.PYTHON, FIRST_LEGAL["bot.py"]),
        ("JavaScript (node)", Language.JAVASCRIPT, FIRST_LEGAL["bot.js"]),
    ):
        if language is Language.JAVASCRIPT and node_unusable(language) is not None:
            print(f"JavaScript left out: {node_unusable(language)}")
            continue
        bot = folder / language.value
        bot.mkdir()
        (bot / ("bot.py" if language is Language.PYTHON else "bot.js")).write_text(text)
        makers[name] = lambda game_id, spec=str(bot): resolve_seat(spec, game_id)
    return makers


def bench_languages(game_id: str, decisions: int, starts: int) -> dict[str, dict[str, list[float]]]:
    """Per runtime: cold start to first decision (ms) and decision round trips (us)."""
    requests = sample_requests(game_id, 5)
    info = StartInfo("bench", game_id, {}, 0, get_game(game_id).min_players, 1, 30_000, 60_000)
    folder = Path(tempfile.mkdtemp(prefix="saloon-bench-lang-"))
    try:
        makers = language_seats(folder)
        got: dict[str, dict[str, list[float]]] = {n: {"cold": [], "rt": []} for n in makers}
        for _ in range(starts):  # interleaved: the same load for each runtime
            for name, make in makers.items():
                t = time.perf_counter_ns()
                seat = make(game_id)
                try:
                    seat.start(info)
                    seat.decide(requests[0])
                    got[name]["cold"].append((time.perf_counter_ns() - t) / 1e6)
                finally:
                    seat.close()
        seats = {name: make(game_id) for name, make in makers.items()}
        try:
            for seat in seats.values():
                seat.start(info)
                for request in requests[:100]:
                    seat.decide(request)
            per_round = 20
            for done in range(0, max(per_round, decisions), per_round):
                for name, seat in seats.items():
                    for i in range(per_round):
                        request = requests[(done + i) % len(requests)]
                        t = time.perf_counter_ns()
                        seat.decide(request)
                        got[name]["rt"].append((time.perf_counter_ns() - t) / 1000)
        finally:
            for seat in seats.values():
                seat.close()
        return got
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def print_languages(console: Console, game_id: str, decisions: int, starts: int) -> None:
    got = bench_languages(game_id, decisions, starts)
    table = Table(
        title=f"Each runtime beside Python's, process sandbox, {game_id}, the same bot (first "
        f"legal action): {starts} cold starts, {decisions} decisions each, interleaved"
    )
    columns = ("runtime", "cold start ms", "p99", "/ Python", "round trip us", "p99", "/ Python")
    for column in columns:
        table.add_column(column, justify="left" if column == "runtime" else "right")
    base = got.get("Python")
    for name, figures in got.items():
        cold, rt = statistics.median(figures["cold"]), statistics.median(figures["rt"])
        cold_ratio = cold / statistics.median(base["cold"]) if base else float("nan")
        rt_ratio = rt / statistics.median(base["rt"]) if base else float("nan")
        table.add_row(
            name,
            f"{cold:.1f}",
            f"{percentile(figures['cold'], 0.99):.1f}",
            f"{cold_ratio:.2f}",
            f"{rt:.0f}",
            f"{percentile(figures['rt'], 0.99):.0f}",
            f"{rt_ratio:.2f}",
        )
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=3000)
    parser.add_argument("--cycles", type=int, default=300, help="seat start+finish cycles")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--game", default="seas-of-strife-v1", help="for the round trip")
    parser.add_argument("--floor-server", nargs=2, metavar=("SOCKET", "REPLY_SIZE"))
    parser.add_argument("--starts", type=int, default=20, help="cold starts per runtime")
    parser.add_argument(
        "--languages", action="store_true", help="only table 4: each runtime beside Python's"
    )
    args = parser.parse_args()
    if args.floor_server:
        floor_server(args.floor_server[0], int(args.floor_server[1]))
        return

    console = Console()
    if args.languages:
        print_languages(console, args.game, args.decisions, args.starts)
        return
    got = bench_round_trip(args.game, args.decisions)
    f50, f99 = statistics.median(got["floor"]), percentile(got["floor"], 0.99)
    table = Table(
        title=f"Decision round trip, {args.game}, unix socket, {len(got['referee'])} "
        f"decisions, request ~{got['size']} bytes (mean wire size of real requests)"
    )
    for column in ("path", "median us", "p99 us", "median / floor"):
        table.add_column(column, justify="left" if column == "path" else "right")
    rows = [
        ("floor: bare grpc.aio bidi, this thread's loop", got["floor"], f50),
        ("floor's client + SDK runtime (the runtime's part)", got["runtime"], f50),
        ("referee: GrpcSeat.decide + SDK runtime", got["referee"], f50),
    ]
    f2 = statistics.median(got["floor2"])
    rows += [
        ("(second phase) floor again", got["floor2"], f2),
        ("(second phase) old floor: sync client, queue-fed", got["sync"], f2),
    ]
    for name, values, base in rows:
        m50, m99 = statistics.median(values), percentile(values, 0.99)
        table.add_row(name, f"{m50:.0f}", f"{m99:.0f}", f"{m50 / base:.2f}")
    r50 = statistics.median(got["referee"])
    table.add_row("bot work in the runtime (in-process)", f"{got['bot_us']:.0f}", "", "")
    table.add_row("(the same, a bot reading its observation)", f"{got['reader_us']:.0f}", "", "")
    table.add_row(
        "referee - bot work", f"{r50 - got['bot_us']:.0f}", "", f"{(r50 - got['bot_us']) / f50:.2f}"
    )
    console.print(table)
    console.print(f"floor p99 {f99:.0f} us")

    cycle = bench_seat_cycle(args.game, args.cycles)
    table = Table(title=f"A seat's start + finish + close, {args.cycles} matches each, ms")
    for column in ("seat", "median ms", "p99 ms", "median / floor round trip"):
        table.add_column(column, justify="left" if column == "seat" else "right")
    for name, key in (("warm: BotConnection.seat()", "warm"), ("cold: GrpcSeat(target)", "cold")):
        m50 = statistics.median(cycle[key])
        table.add_row(
            name, f"{m50:.3f}", f"{percentile(cycle[key], 0.99):.3f}", f"{m50 * 1000 / f50:.1f}"
        )
    console.print(table)

    table = Table(title="Whole matches per second, house bots, one warm runtime process per seat")
    for column in ("game", "seats", "in-process/s", "gRPC new channel/s", "gRPC warm/s"):
        table.add_column(column, justify="left" if column == "game" else "right")
    for game_id in game_ids():
        local, cold, warm, seats = matches_per_second(game_id, args.seconds)
        table.add_row(game_id, str(seats), f"{local:.1f}", f"{cold:.1f}", f"{warm:.1f}")
    console.print(table)
    print_languages(console, args.game, args.decisions, args.starts)


if __name__ == "__main__":
    main()
