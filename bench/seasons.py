"""Season throughput: matches per minute with 1 and 2 RQ workers, and the queue + store
overhead per match (not a test; run by hand; needs Redis and, by default, PostgreSQL).

    python bench/seasons.py [--rounds 3] [--repeat 3] [--store URL] [--redis URL]

In one run: the season's matches played in-process with no queue and no store (the
match's own time, the floor), then the same season through Redis with 1 worker process
and with 2, into the store (a throwaway PostgreSQL schema unless --store is given).
Workers are started and idle before the clock starts (their boot is not counted). The game
is CPU-bound: Seas of Strife, 3 seats, house bots in-process. Median of --repeat runs.

* matches/min: matches / wall time from enqueue to the last result recorded;
* overhead/match: (wall x workers / matches) - the mean match time measured inside the
  workers (``timing.match_ms`` of the records): queue, job, store and idle time per match.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # bench/ runs from a checkout: tests.services is the PG URL

from saloon.referee.limits import MatchLimits  # noqa: E402
from saloon.worker.play import play_spec  # noqa: E402
from saloon.worker.queue import ALIVE_PREFIX, SeasonQueue, connect  # noqa: E402
from saloon.worker.queue_defaults import DEFAULT_REDIS_URL  # noqa: E402
from saloon.worker.schedule import SeasonSpec, expand  # noqa: E402
from saloon.worker.seasons import create, progress, start  # noqa: E402
from saloon.worker.store import Store  # noqa: E402

WORKER = [sys.executable, "-m", "saloon.worker.worker_main"]
PLAYERS = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")


def season(season_id: str, rounds: int, game: str = "seas-of-strife-v1") -> SeasonSpec:
    """The benchmark season: 12 matches per round."""
    return SeasonSpec(
        season_id=season_id,
        game=game,
        participants=PLAYERS,
        seats=3,
        rounds=rounds,
        seed=3,
        limits=MatchLimits(),
    )


@contextmanager
def pg_schema() -> Iterator[str]:
    """A throwaway PostgreSQL schema's store URL."""
    import sqlalchemy as sa

    from tests.services import POSTGRES_URL

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(POSTGRES_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def floor_ms(game: str, rounds: int) -> tuple[float, float]:
    """(wall s, mean match ms) of the season played in-process, no queue, no store."""
    specs = expand(season("floor", rounds, game))
    started = time.perf_counter()
    times = [play_spec(s).record.timing["match_ms"] for s in specs]
    return time.perf_counter() - started, statistics.mean(times)


def through_workers(
    redis_url: str, store_url: str, workers: int, game: str, rounds: int
) -> tuple[float, float, int]:
    """(wall s, mean match ms inside the workers, matches) of one season on ``workers``."""
    redis = connect(redis_url)
    qname = f"bench-{uuid.uuid4().hex[:8]}"
    procs = [
        subprocess.Popen(
            [*WORKER, "--redis", redis_url, "--queue", qname],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(workers)
    ]
    try:
        pids = {str(p.pid) for p in procs}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # every worker is up and idle
            alive = {v.decode() for k in redis.scan_iter(ALIVE_PREFIX + "*") if (v := redis.get(k))}
            if pids <= alive:
                break
            time.sleep(0.1)
        sid = f"bench-{uuid.uuid4().hex[:8]}"
        with Store.open(store_url) as store:
            create(store, season(sid, rounds, game))
            store.results(season_id=sid)  # warm the connection
            started = time.perf_counter()
            start(store, SeasonQueue(redis, qname), sid, store_url)
            while not progress(store, sid).finished:
                time.sleep(0.2)  # a light poll: the bench must not load the store itself
            wall = time.perf_counter() - started
            results = store.results(season_id=sid)
            inner = []
            for r in results:
                record = store.match_record(r.match_id)
                inner.append(float(record["timing"]["match_ms"]) if record else 0.0)
        return wall, statistics.mean(inner), len(results)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)
        SeasonQueue(redis, qname).purge()


def main() -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds (12 matches each)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median)")
    parser.add_argument("--store", help="store URL (default: a throwaway PostgreSQL schema)")
    parser.add_argument("--redis", default=DEFAULT_REDIS_URL)
    parser.add_argument("--game", action="append", help=f"only this game (default {GAMES})")
    args = parser.parse_args()

    table = Table(
        title=f"seasons: 3 seats, house bots, 12 matches a round, median of {args.repeat}"
    )
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in ("game", "mode") else "right")
    with pg_schema() if args.store is None else _given(args.store) as store_url:
        for game in args.game or GAMES:
            rounds = args.rounds if game == "seas-of-strife-v1" else 1
            _rows(table, args, store_url, game, rounds)
    Console(width=150).print(table)
    return 0


COLUMNS = (
    "game",
    "mode",
    "workers",
    "matches/min",
    "vs 1 worker",
    "match ms",
    "overhead/match ms",
    "overhead",
)
#: A short CPU-bound match (Seas of Strife ~50 ms) and a long one (Seizure, ~0.5-1.5 s).
GAMES = ("seas-of-strife-v1", "seizure-v1")


def _rows(table: Table, args: argparse.Namespace, store_url: str, game: str, rounds: int) -> None:
    floors = [floor_ms(game, rounds) for _ in range(args.repeat)]
    rows: dict[int, list[tuple[float, float, int]]] = {1: [], 2: []}
    for _ in range(args.repeat):
        for workers in (1, 2):
            rows[workers].append(through_workers(args.redis, store_url, workers, game, rounds))
    n = 12 * rounds
    floor_wall = statistics.median(f[0] for f in floors)
    floor_match = statistics.median(f[1] for f in floors)
    table.add_row(
        game,
        "in-process, no queue/store",
        "-",
        f"{n / floor_wall * 60:.0f}",
        "",
        f"{floor_match:.1f}",
        "",
        "",
    )
    one = statistics.median(r[0] for r in rows[1])
    for workers in (1, 2):
        wall = statistics.median(r[0] for r in rows[workers])
        inner = statistics.median(r[1] for r in rows[workers])
        over = wall * 1000 * workers / n - inner
        table.add_row(
            game,
            "RQ + store",
            str(workers),
            f"{n / wall * 60:.0f}",
            f"{one / wall:.2f}x",
            f"{inner:.1f}",
            f"{over:.1f}",
            f"{over / inner * 100:.0f}%",
        )


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


if __name__ == "__main__":
    raise SystemExit(main())
