"""A continuous ladder for real: graded bots on real Redis, PostgreSQL and worker processes
(not a test; run by hand, minutes).

    python bench/continuous_real.py --store postgresql+psycopg://postgres@127.0.0.1:5432/test \\
        [--redis redis://127.0.0.1:6379/0] [--workers 3] [--batches 40] [--batch 6]

Seas of Strife, 4 seats, six bots of graded strength, strongest first (the true order):
house:search-100, house:search-25, house:greedy, greedy playing a random legal move with
probability 0.4 and 0.8 (submitted bots, run in the process sandbox), house:random. The
ladder's driver (saloon.arena.continuous.tick, as `saloon serve` runs it) makes batch after
batch; after each, the board's order is compared with the true one. Printed: the board
after every few batches, and the matches after which the order is right and stays right
to the end of the run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid

import sqlalchemy as sa

from saloon.arena import continuous
from saloon.arena.matchmaker import Settings
from saloon.arena.registry import Registry
from saloon.arena.submit import submit
from saloon.ratings.incremental import IncrementalBoard
from saloon.ratings.leaderboard import build_leaderboard
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.sandbox import SandboxKind, open_sandbox
from saloon.worker.store.store import Store

GAME = "seas-of-strife-v1"
SLOPPY = """\
import random

from saloon.sdk import Bot
from saloon.sdk.house import make_house_bot

P = {p}


class Sloppy(Bot):
    def on_match_start(self, info):
        self.rng = random.Random(info.seed)
        self.greedy = make_house_bot(info.game, "greedy")
        self.greedy.on_match_start(info)

    def act(self, decision):
        if self.rng.random() < P:
            return decision.legal[self.rng.randrange(len(decision.legal))]
        return self.greedy.act(decision)
"""
TRUE = ["house:search-100", "house:search-25", "house:greedy", "sloppy-40", "sloppy-80",
        "house:random"]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a PostgreSQL URL (a schema is made)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--batch", type=int, default=6, help="tables per batch")
    args = parser.parse_args(argv)
    schema = f"real_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(args.store)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    sep = "&" if "?" in args.store else "?"
    url = f"{args.store}{sep}options=-csearch_path%3D{schema}"
    queue = SeasonQueue(connect(args.redis), f"real-{uuid.uuid4().hex[:8]}")
    procs: list[subprocess.Popen[bytes]] = []
    started = time.monotonic()
    try:
        store = Store.open(url)
        registry = Registry(store)
        with open_sandbox("process") as sandbox:
            for name, p in (("sloppy-40", 0.4), ("sloppy-80", 0.8)):
                done = submit(registry, "grader", name, GAME, SLOPPY.format(p=p).encode(),
                              "bot.py", sandbox)  # fmt: skip
                assert done.accepted, done.message
        request = continuous.ContinuousRequest(
            ladder_id="real", game=GAME, players=4, seed=21,
            house=("search-100", "search-25", "greedy", "random"),
            sandbox=SandboxKind.PROCESS, settings=Settings(batch=args.batch),
            max_batches=args.batches,
        )  # fmt: skip
        argv_w = [sys.executable, "-m", "saloon.worker.queue.worker", "--redis", args.redis,
                  "--queue", queue.queue.name]  # fmt: skip
        procs = [subprocess.Popen(argv_w, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for _ in range(args.workers)]  # fmt: skip
        continuous.start(registry, queue, request, "grader", url)
        board = IncrementalBoard(store, continuous.board_scope(request))
        seen = 0
        right_since: int | None = None
        trace = []
        while True:
            state = continuous.tick(registry, queue, "real", url)
            row = registry.continuous("real")
            assert row is not None
            finished = row.batches - (1 if row.active else 0)
            while seen < finished or (state == "stopped" and seen < row.batches):
                seen += 1
                board.update()
                standings, known, _ = board.standings(details=False)
                order = [r.bot for r in build_leaderboard(standings, "", known).rows]
                right = order == TRUE
                right_since = (right_since or standings.matches) if right else None
                trace.append((seen, standings.matches, right, order))
                if seen % 5 == 0 or seen == 1:
                    verdict = "RIGHT" if right else "wrong"
                    line = f"batch {seen:3d}, {standings.matches:4d} matches: {verdict}"
                    print(f"{line}  {' > '.join(order)}", flush=True)
            if state == "stopped":
                break
            time.sleep(0.2)
        total = trace[-1][1] if trace else 0
        print(f"\nload average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
              f"{args.workers} workers; {args.batches} batches of {args.batch} tables; "
              f"{total} matches in {time.monotonic() - started:.0f} s")  # fmt: skip
        print("true order: " + " > ".join(TRUE))
        if right_since is None:
            print(f"the board's order was not right at the end ({total} matches)")
        else:
            print(f"the board's order is right from {right_since} matches on, to the end "
                  f"({total})")  # fmt: skip
        store.close()
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)
        queue.purge()
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
