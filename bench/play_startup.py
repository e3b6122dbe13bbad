"""Wall time of a `saloon play` of house bots only, with and without grpc imported.

Run by hand: ``.venv/bin/python bench/play_startup.py [--runs 15]``. A match of house bots
never needs gRPC; before issue 12 `saloon play` imported it anyway (``resolve_seat``
imported the gRPC seats first thing). The "with grpc" row imports
``saloon.referee.remote`` first, which is what that cost; the floor row is a bare
``python -c pass`` measured in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from rich.console import Console
from rich.table import Table

ARGS = ["play", "seas-of-strife-v1", "--seat", "house:greedy"] + ["--seat", "house:random"] * 2
PLAY = f"import sys; from saloon.arena.cli import main; sys.exit(main({ARGS!r}))"
VARIANTS = {
    "python -c pass (floor)": "pass",
    "saloon play, house bots (grpc not imported)": PLAY,
    "the same with grpc imported (as before)": "import saloon.referee.remote; " + PLAY,
}


def main() -> None:
    """Measure every variant ``--runs`` times, interleaved, and print the medians."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for _ in range(runs):
        for name, code in VARIANTS.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, check=True)
            times[name].append((time.perf_counter() - started) * 1000)
    table = Table(title=f"saloon play start-up, median of {runs} runs")
    table.add_column("variant")
    table.add_column("median ms", justify="right")
    table.add_column("min ms", justify="right")
    for name, values in times.items():
        table.add_row(name, f"{statistics.median(values):.0f}", f"{min(values):.0f}")
    Console().print(table)


if __name__ == "__main__":
    main()
