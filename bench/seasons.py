"""Season throughput: matches per minute with 1 and 2 RQ workers, and the queue + store
overhead per match (not a test; run by hand; needs Redis and, by default, PostgreSQL).

    python bench/seasons.py [--rounds 24] [--seizure-rounds 4] [--repeat 3] [--store URL]
                            [--redis URL] [--game GAME]

In one run: the season's matches played in-process with no queue and no store (the
match's own time, the floor), the same matches played by 2 processes at once, each taking
the next match when it is free (no queue, no store: what this machine's two cores give two
CPU-bound processes, the ceiling of "2 workers vs 1"), then the same season through Redis
with 1 worker process and with 2, into the store (a throwaway PostgreSQL schema unless
--store is given).
Workers are started (with ``--store``, so they open it at boot, as a deployment would)
and idle before the clock starts: their boot and warm-up are not counted; the store holds
some recorded matches of the game first, as a store in use does. The game
is CPU-bound: Seas of Strife, 3 seats, house bots in-process. Median of --repeat runs.

* matches/min: matches / wall time from enqueue to the last result recorded (in-process:
  from the first match to the last);
* overhead/match: (wall x workers / matches) - the mean match time measured inside the
  workers (``timing.match_ms`` of the records): everything but the match itself, per match
  (queue, job, store, idle time, and the match's own set-up of its seats);
* queue+store/match: (wall x workers / matches) - the mean time the workers spent playing
  each match as the in-process floor plays it (``play_spec``: set-up, match, result; from
  the workers' spans): what the queue and the store add to playing the matches.
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
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
from saloon.worker.matches.play import play_spec  # noqa: E402
from saloon.worker.queue.defaults import DEFAULT_REDIS_URL  # noqa: E402
from saloon.worker.queue.season_queue import ALIVE_PREFIX, SeasonQueue, connect  # noqa: E402
from saloon.worker.seasons.run import create, progress, start  # noqa: E402
from saloon.worker.seasons.schedule import SeasonSpec, expand  # noqa: E402
from saloon.worker.store.store import Store  # noqa: E402

#: The worker, with timing spans around each step of a job (bench/season_spans.py).
WORKER = [sys.executable, str(ROOT / "bench" / "season_spans.py")]
#: Seconds the workers idle in their loop before the clock starts.
SETTLE_S = 1.0
#: Steps of a job, in order, as bench/season_spans.py names them; "match" is the match.
STEPS = ("rq dequeue", "rq start", "claim", "seats", "match", "record", "job function", "rq finish")
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
    play_spec(specs[0])  # imports and warms up, outside the clock (as a worker's warm-up)
    started = time.perf_counter()
    times = [play_spec(s).record.timing["match_ms"] for s in specs]
    return time.perf_counter() - started, statistics.mean(times)


def _floor_child(game: str, rounds: int, counter: str) -> int:
    """A child of :func:`floor_parallel`: once told to go (a line on stdin), play the
    season's matches the shared counter hands out, one at a time, as workers take jobs."""
    specs = expand(season("floor", rounds, game))
    play_spec(specs[0])  # imports and warms up, as the 1-process floor's first run did
    fd = os.open(counter, os.O_RDWR)
    print("ready", flush=True)
    sys.stdin.readline()
    while (k := _take(fd)) < len(specs):
        play_spec(specs[k])
    print("done", flush=True)
    return 0


def _take(fd: int) -> int:
    """The next match index of a counter file shared by the floor's processes."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        k = int(os.pread(fd, 20, 0) or b"0")
        os.pwrite(fd, b"%20d" % (k + 1), 0)
        return k
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


def floor_parallel(game: str, rounds: int, parts: int = 2) -> float:
    """Wall seconds of the season's matches played by ``parts`` processes at once, each
    taking the next match when it is free (no queue, no store), from the go to the last
    one done: what this machine gives two CPU-bound processes."""
    with tempfile.NamedTemporaryFile(prefix="saloon-floor-") as counter:
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--floor-child", game, str(rounds), counter.name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(parts)
        ]
        try:
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == "ready"
            started = time.perf_counter()
            for p in procs:
                assert p.stdin is not None
                p.stdin.write("go\n")
                p.stdin.flush()
            for p in procs:
                assert p.stdout is not None and p.stdout.readline().strip() == "done"
            return time.perf_counter() - started
        finally:
            for p in procs:
                p.wait(60)


def through_workers(
    redis_url: str,
    store_url: str,
    workers: int,
    game: str,
    rounds: int,
    spans_dir: Path,
    batch: int | None = None,
) -> tuple[float, float, int, list[dict[str, float]]]:
    """(wall s, mean match ms inside the workers, matches, per-job spans) of one season on
    ``workers``."""
    redis = connect(redis_url)
    qname = f"bench-{uuid.uuid4().hex[:8]}"
    spans = spans_dir / f"{qname}.jsonl"
    procs = [
        subprocess.Popen(
            [*WORKER, str(spans), "--redis", redis_url, "--queue", qname, "--store", store_url],
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
        # A worker's first moments in its loop (RQ's registration and upkeep, its keeper's
        # first rounds) are start-up, not the season's: a deployment's workers are running.
        time.sleep(SETTLE_S)
        sid = f"bench-{uuid.uuid4().hex[:8]}"
        with Store.open(store_url) as store:
            create(store, season(sid, rounds, game))
            store.results(season_id=sid)  # warm the connection
            # This process's own heap (rich, every layer imported, the history played) is
            # no part of a season's start: collected now, a full collection does not land
            # inside the clock (one did, ~90 ms, where ``saloon season start`` has a small heap).
            gc.collect()
            started = time.time()
            start(store, SeasonQueue(redis, qname), sid, store_url, batch=batch)
            while not progress(store, sid).finished:
                time.sleep(0.2)  # a light poll: the bench must not load the store itself
            results = store.results(season_id=sid)
            # The last result's own time, not the poll's: the poll would add ~0.1 s.
            wall = max(r.finished_at.timestamp() for r in results) - started
            inner = []
            for r in results:
                record = store.match_record(r.match_id)
                inner.append(float(record["timing"]["match_ms"]) if record else 0.0)
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(10)
        SeasonQueue(redis, qname).purge()
    lines = spans.read_text(encoding="utf-8").splitlines() if spans.exists() else []
    jobs = [json.loads(line) for line in lines]
    return wall, statistics.mean(inner), len(results), jobs


def _history(store_url: str, game: str) -> None:
    """Record a few matches of ``game`` in the store first, not timed: a store in use has
    its game's recent match times, which a season's first start measures its batch size on
    (a store with none plays one match at that start: once per game and store)."""
    from saloon.worker.matches.batching import HISTORY
    from saloon.worker.queue.jobs import run_batch

    with Store.open(store_url) as store:
        specs = create(store, season(f"history-{uuid.uuid4().hex[:8]}", 2, game))
        run_batch(specs[:HISTORY], store)


def _played_ms(jobs: list[dict[str, float]]) -> float:
    """Mean ms per match the workers spent in play_spec (0.0 without spans)."""
    matches = sum(j.get("matches", 0.0) for j in jobs)
    return sum(j.get("play", 0.0) for j in jobs) / matches if matches else 0.0


def main() -> int:
    """Run the benchmark and print the tables."""
    if sys.argv[1:2] == ["--floor-child"]:
        game, rounds, counter = sys.argv[2:5]
        return _floor_child(game, int(rounds), counter)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=24, help="Seas of Strife rounds (12 matches each)"
    )
    parser.add_argument(
        "--seizure-rounds",
        type=int,
        default=4,
        help="Seizure rounds (12 matches each; its matches take 0.05-0.5 s)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (median)")
    parser.add_argument("--store", help="store URL (default: a throwaway PostgreSQL schema)")
    parser.add_argument("--redis", default=DEFAULT_REDIS_URL)
    parser.add_argument("--batch", type=int, help="matches per job (default: measured)")
    parser.add_argument("--game", action="append", help=f"only this game (default {GAMES})")
    args = parser.parse_args()

    table = Table(
        title=f"seasons: 3 seats, house bots, 12 matches a round, median of {args.repeat}"
    )
    for col in COLUMNS:
        table.add_column(col, justify="left" if col in ("game", "mode") else "right")
    steps: dict[str, list[str]] = {}
    with (
        pg_schema() if args.store is None else _given(args.store) as store_url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        for game in args.game or GAMES:
            rounds = args.rounds if game == "seas-of-strife-v1" else args.seizure_rounds
            _history(store_url, game)
            jobs = _rows(table, args, store_url, game, rounds, Path(tmp))
            steps[game] = _step_cells(jobs)
    console = Console(width=200)
    console.print(table)
    console.print(_steps_table(steps))
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
    "queue+store/match ms",
    "queue+store",
)
#: A short CPU-bound match (Seas of Strife ~3-10 ms) and a long one (Seizure, ~0.05-0.5 s).
GAMES = ("seas-of-strife-v1", "seizure-v1")
#: Rows of the step table: (label, how a job's spans give it).
STEP_ROWS = (
    ("rq: loop, dequeue, heartbeats", lambda j: j["rq dequeue"]),
    ("rq: start the job", lambda j: j["rq start"]),
    ("store: claim the match", lambda j: j["claim"]),
    ("seats: set-up", lambda j: j["seats"]),
    ("match (the floor)", lambda j: j["match"]),
    ("the match's result (besides set-up)", lambda j: j["play"] - j["match"] - j["seats"]),
    ("store: record the result", lambda j: j["record"]),
    (
        "job: specs, results prepared (JSON, zstd), the rest",
        lambda j: j["job function"] - j["claim"] - j["play"] - j["record"],
    ),
    ("rq: finish the job", lambda j: j["rq finish"]),
)


def _step_cells(jobs: list[dict[str, float]]) -> list[str]:
    """Each step's median ms per match, then the overhead per match and its share of the
    match (a batch job's steps are divided by the matches it played)."""
    # The first job of a run waited for the season to be enqueued: its gap is idle time.
    timed = [j for j in jobs if j["rq dequeue"] >= 0 and "match" in j]
    if not timed:
        return ["-"] * (len(STEP_ROWS) + 2)
    for j in timed:
        j.setdefault("claim", 0.0)
        j.setdefault("record", 0.0)
        j.setdefault("seats", 0.0)
        j.setdefault("play", j["match"] + j["seats"])

    def per(j: dict[str, float], value: float) -> float:
        return value / max(1.0, j.get("matches", 1.0))

    cells = [f"{statistics.median(per(j, get(j)) for j in timed):.2f}" for _, get in STEP_ROWS]
    over = [per(j, j["rq dequeue"] + j["total"] - j["match"]) for j in timed]
    cells.append(f"{statistics.median(over):.2f}")
    # Total overhead over total match time: what throughput sees (long matches weigh more).
    matches = sum(per(j, j["match"]) for j in timed)
    cells.append(f"{sum(over) / matches * 100:.1f}%")
    return cells


def _steps_table(columns: dict[str, list[str]]) -> Table:
    table = Table(title="where the time goes, 1 worker: median ms per match (every run)")
    table.add_column("step")
    for game in columns:
        table.add_column(game, justify="right")
    labels = [label for label, _ in STEP_ROWS] + [
        "overhead per match (all but the match)",
        "overhead / match time (sums)",
    ]
    for k, label in enumerate(labels):
        table.add_row(label, *(cells[k] for cells in columns.values()))
    return table


def _rows(
    table: Table,
    args: argparse.Namespace,
    store_url: str,
    game: str,
    rounds: int,
    spans_dir: Path,
) -> list[dict[str, float]]:
    """The throughput rows of ``game``; the spans of every job played by 1 worker."""
    floors = []
    parallel = []
    rows: dict[int, list[tuple[float, float, int, list[dict[str, float]]]]] = {1: [], 2: []}
    for _ in range(args.repeat):  # every kind of run once a round: the machine's load drifts
        floors.append(floor_ms(game, rounds))
        parallel.append(floor_parallel(game, rounds))
        for workers in (1, 2):  # alternated: the machine's load drifts
            rows[workers].append(
                through_workers(args.redis, store_url, workers, game, rounds, spans_dir, args.batch)
            )
    n = 12 * rounds
    floor_wall = statistics.median(f[0] for f in floors)
    floor_match = statistics.median(f[1] for f in floors)
    table.add_row(
        game,
        "in-process, no queue/store",
        "1",
        f"{n / floor_wall * 60:.0f}",
        "1.00x",
        f"{floor_match:.1f}",
        "",
        "",
        "",
        "",
    )
    both = statistics.median(parallel)
    table.add_row(
        game,
        "in-process, 2 processes",
        "2",
        f"{n / both * 60:.0f}",
        f"{floor_wall / both:.2f}x",
        "",
        "",
        "",
        "",
        "",
    )
    one = statistics.median(r[0] for r in rows[1])
    for workers in (1, 2):
        wall = statistics.median(r[0] for r in rows[workers])
        inner = statistics.median(r[1] for r in rows[workers])
        over = wall * 1000 * workers / n - inner
        # Each run's own: a run's wall against the play time of the same run.
        added = statistics.median(
            r[0] * 1000 * workers / r[2] - _played_ms(r[3]) for r in rows[workers]
        )
        played = statistics.median(_played_ms(r[3]) for r in rows[workers])
        table.add_row(
            game,
            "RQ + store",
            str(workers),
            f"{n / wall * 60:.0f}",
            f"{one / wall:.2f}x",
            f"{inner:.1f}",
            f"{over:.1f}",
            f"{over / inner * 100:.0f}%",
            f"{added:.2f}",
            f"{added / played * 100:.0f}%" if played else "-",
        )
    return [job for r in rows[1] for job in r[3]]


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url


if __name__ == "__main__":
    raise SystemExit(main())
