"""Sandbox speed: cold container start, warm-pool match throughput, gVisor against runc.

    .venv/bin/python bench/sandbox.py [--matches 10] [--cold 5] [--no-gvisor]

Needs a Docker engine and the bot base image (bash deploy/dev.sh test builds both). Every
bot seat is the same small bot package (first legal action), so the figures are the
sandbox's cost, not a bot's thinking. Prints three tables, each figure beside what it is
compared with, measured in the same run:

1. Cold start: from a seat's launch (``docker create`` + start of a new container of an
   image already built) to its first decision answered; medians of ``--cold`` starts.
2. Matches per minute per game: process bots (a new runtime process per seat and match,
   the local process sandbox) against the Docker sandbox with its warm pool (each seat's
   container and channel kept across matches), and the ratio (target >= 0.8x).
3. gVisor (runsc) against runc: the median warm match time per game and the ratio
   (target <= 1.3x).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_match
from saloon.referee.seats import DecisionRequest, EndInfo, Seat, StartInfo
from saloon.worker.sandbox.base import ProcessSandbox, Sandbox
from saloon.worker.sandbox.docker import DockerSandbox
from saloon.worker.sandbox.packages import load_package

LIMITS = MatchLimits(decision_ms=10_000, bank_ms=60_000, start_ms=60_000)
#: Seats per game (the smallest table each game takes).
GAMES = {"seizure-v1": 2, "western-showdown-v1": 2, "seas-of-strife-v1": 3}
BOT = "def act(decision):\n    return decision.legal[0]\n"


class FirstDecision(Seat):
    """A seat that notes when it was launched and when its first decision was answered."""

    def __init__(self, inner: Seat) -> None:
        self.inner = inner
        self.bot_id = inner.bot_id
        self.bot_version = inner.bot_version
        self.timed = inner.timed
        self.sandbox = inner.sandbox
        self.launched = 0.0
        self.first = 0.0

    def launch(self) -> None:
        self.launched = time.perf_counter()
        self.inner.launch()

    def start(self, info: StartInfo) -> None:
        self.inner.start(info)

    def decide(self, request: DecisionRequest) -> int:
        answer = self.inner.decide(request)
        if not self.first:
            self.first = time.perf_counter()
        return answer

    def finish(self, info: EndInfo) -> None:
        self.inner.finish(info)

    def close(self) -> None:
        self.inner.close()


def match_seconds(sandbox: Sandbox, bot: str, game: str, seats: int, seed: int) -> float:
    """Wall time of one match of ``seats`` copies of the bot in ``sandbox``."""
    started = time.perf_counter()
    record = play_match(
        game, [sandbox.seat(bot, f"bot{i}") for i in range(seats)], seed=seed, limits=LIMITS
    )
    if record.faults:
        raise SystemExit(f"bench bot faulted: {record.faults}")
    return time.perf_counter() - started


def cold_starts(bot: str, count: int) -> list[float]:
    """Seconds from launch to the first decision answered, each on a new container."""
    out = []
    sandbox = DockerSandbox(warm=False)
    try:
        sandbox.image(load_package(bot))  # built before the clock starts
        for seed in range(count):
            seat = FirstDecision(sandbox.seat(bot, "cold"))
            other = sandbox.seat(bot, "other")
            play_match("seizure-v1", [seat, other], seed=seed, limits=LIMITS)
            out.append(seat.first - seat.launched)
    finally:
        sandbox.close()
    return out


def main() -> None:
    """Run the three measurements and print their tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=10, help="matches per game and sandbox")
    parser.add_argument("--cold", type=int, default=5, help="cold starts to time")
    parser.add_argument("--no-gvisor", action="store_true", help="skip the runsc runtime")
    args = parser.parse_args()
    console = Console()

    with tempfile.TemporaryDirectory() as tmp:
        bot = str(Path(tmp) / "bot")
        Path(bot).mkdir()
        (Path(bot) / "bot.py").write_text(BOT)
        # A process bot run as root gets a uid of its own: it must be able to read its files.
        Path(tmp).chmod(0o755)

        cold = cold_starts(bot, args.cold)
        table = Table(title=f"Cold container start to first decision ({args.cold} starts)")
        table.add_column("runtime")
        table.add_column("median ms", justify="right")
        table.add_column("min ms", justify="right")
        table.add_column("max ms", justify="right")
        table.add_row(
            "runc",
            f"{statistics.median(cold) * 1000:.0f}",
            f"{min(cold) * 1000:.0f}",
            f"{max(cold) * 1000:.0f}",
        )
        console.print(table)

        runtimes = ["runc"] if args.no_gvisor else ["runc", "runsc"]
        times: dict[tuple[str, str], list[float]] = {}
        process = ProcessSandbox()
        dockers = {rt: DockerSandbox(runtime=rt) for rt in runtimes}
        try:
            for game, seats in GAMES.items():
                for sandbox in dockers.values():
                    match_seconds(sandbox, bot, game, seats, seed=0)  # warm the pool
                # Interleaved, so a noisy neighbour hits every kind alike.
                for seed in range(1, args.matches + 1):
                    times.setdefault((game, "process"), []).append(
                        match_seconds(process, bot, game, seats, seed)
                    )
                    for rt, sandbox in dockers.items():
                        times.setdefault((game, rt), []).append(
                            match_seconds(sandbox, bot, game, seats, seed)
                        )
        finally:
            process.close()
            for sandbox in dockers.values():
                sandbox.close()

    table = Table(title=f"Matches per minute, {args.matches} matches per game and sandbox")
    table.add_column("game (seats)")
    table.add_column("process bots", justify="right")
    table.add_column("docker, warm pool", justify="right")
    table.add_column("docker / process", justify="right")
    for game, seats in GAMES.items():
        proc = 60 / statistics.median(times[(game, "process")])
        dock = 60 / statistics.median(times[(game, "runc")])
        table.add_row(f"{game} ({seats})", f"{proc:.0f}", f"{dock:.0f}", f"{dock / proc:.2f}x")
    console.print(table)

    if "runsc" in runtimes:
        table = Table(title="gVisor (runsc) against runc: median warm match, ms")
        table.add_column("game (seats)")
        table.add_column("runc", justify="right")
        table.add_column("runsc", justify="right")
        table.add_column("runsc / runc", justify="right")
        for game, seats in GAMES.items():
            runc = statistics.median(times[(game, "runc")])
            runsc = statistics.median(times[(game, "runsc")])
            table.add_row(
                f"{game} ({seats})",
                f"{runc * 1000:.0f}",
                f"{runsc * 1000:.0f}",
                f"{runsc / runc:.2f}x",
            )
        console.print(table)


if __name__ == "__main__":
    main()
