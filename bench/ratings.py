"""Ratings speed: rebuild a ladder's leaderboard from recorded results (not a test).

    python bench/ratings.py [--results 100000] [--seats 2 4 6] [--bots 24] [--runs 3]

Synthetic results (seeded): each match seats distinct bots drawn from ``--bots``, ranked by
hidden skill plus noise, with ties at about the Seas of Strife rate. For each seat count,
in the same run and on the same inputs, alternately:

* raw: the bare trueskill ``rate()`` calls a fold must make, ratings carried in a dict;
* rebuild: :func:`saloon.ratings.fold.fold` plus :func:`build_leaderboard` (sorting into
  schedule order, statistics, head-to-head, rating history, the ranked rows).

Median of ``--runs`` (each run swaps which of raw and rebuild goes first); one process
pinned to one core. Wall and CPU seconds are both shown; the ratio is taken on CPU
time, which a machine shared with other work disturbs less. Target: rebuild <= 1.3x raw.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from typing import Any

from saloon.ratings.fold import fold
from saloon.ratings.ladders import Ladder
from saloon.ratings.leaderboard import build_leaderboard
from saloon.ratings.params import Scope
from saloon.ratings.results import Result, SeatResult

LADDER = Ladder("seas-of-strife-v1")
TARGET = 1.3


def synthetic(n: int, seats: int, bots: int, seed: int) -> list[Result]:
    """``n`` results of ``seats`` distinct bots, in shuffled completion order."""
    rng = random.Random(seed)
    skill = [rng.gauss(0, 1) for _ in range(bots)]
    out = []
    for i in range(n):
        chosen = rng.sample(range(bots), seats)
        perf = [round(skill[b] + rng.gauss(0, 1.5), 1) for b in chosen]  # ties ~ 5-10%
        ranks = [sum(1 for q in perf if q > p) for p in perf]
        out.append(
            Result(
                LADDER,
                f"m{i}",
                (0, i),
                tuple(
                    SeatResult(f"bot{b:03d}", "v1", r, float(r))
                    for b, r in zip(chosen, ranks, strict=True)
                ),
            )
        )
    rng.shuffle(out)  # recorded in completion order, not schedule order
    return out


def raw(results: list[Result]) -> tuple[float, float]:
    """(wall, CPU) seconds of the bare rate() calls, in schedule order, ratings in a dict."""
    ordered = sorted(results, key=lambda r: r.order)
    calls = [([(s.bot, s.version) for s in r.seats], [s.rank for s in r.seats]) for r in ordered]
    env = LADDER.params.environment(Scope.SEASON, len(calls[0][0]))
    ratings: dict[Any, Any] = {}
    create = env.create_rating
    start, cpu = time.perf_counter(), time.process_time()
    for keys, ranks in calls:
        groups = [(ratings.get(k) or create(),) for k in keys]
        for k, (new,) in zip(keys, env.rate(groups, ranks), strict=True):
            ratings[k] = new
    return time.perf_counter() - start, time.process_time() - cpu


def rebuild(results: list[Result]) -> tuple[float, float]:
    """(wall, CPU) seconds of fold + build_leaderboard."""
    start, cpu = time.perf_counter(), time.process_time()
    board = build_leaderboard(fold(results, LADDER, Scope.SEASON))
    elapsed = time.perf_counter() - start, time.process_time() - cpu
    if not board.rows:
        raise SystemExit("bench: empty leaderboard")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else "")
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--seats", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--bots", type=int, default=24)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    from rich.table import Table

    from saloon.ratings.terminal import print_rich

    table = Table(title=f"ratings: rebuild a leaderboard from {args.results:,} results "
                  f"(median of {args.runs})", title_justify="left")  # fmt: skip
    for col in ("seats", "raw wall s", "raw CPU s", "rebuild wall s", "rebuild CPU s",
                "raw CPU us/result", "rebuild CPU us/result", "rebuild / raw (CPU)",
                f"<= {TARGET}x"):  # fmt: skip
        table.add_column(col, justify="right")
    for seats in args.seats:
        results = synthetic(args.results, seats, args.bots, seed=seats)
        raws, builds = [], []
        for run in range(args.runs):
            # alternate which goes first: on a shared machine the load drifts within a run
            if run % 2:
                builds.append(rebuild(results))
                raws.append(raw(results))
            else:
                raws.append(raw(results))
                builds.append(rebuild(results))
            print(f"  {seats} seats: raw {raws[-1][0]:.2f} s wall {raws[-1][1]:.2f} s CPU, "
                  f"rebuild {builds[-1][0]:.2f} s wall {builds[-1][1]:.2f} s CPU",
                  file=sys.stderr)  # fmt: skip
        rw, rc = (statistics.median(x[k] for x in raws) for k in (0, 1))
        bw, bc = (statistics.median(x[k] for x in builds) for k in (0, 1))
        n = args.results
        verdict = "yes" if bc / rc <= TARGET else "NO"
        table.add_row(str(seats), f"{rw:.2f}", f"{rc:.2f}", f"{bw:.2f}", f"{bc:.2f}",
                      f"{rc / n * 1e6:.1f}", f"{bc / n * 1e6:.1f}", f"{bc / rc:.2f}",
                      verdict)  # fmt: skip
    print_rich(sys.stdout, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
