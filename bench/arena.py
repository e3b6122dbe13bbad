"""Arena service speed: submission to accepted version, and leaderboard reads under load.

    .venv/bin/python bench/arena.py [--submissions 8] [--clients 50] [--seconds 10]
                                    [--no-docker] [--sqlite]

Run by hand (not a test). Prints two tables:

1. **Submission to accepted version**, over ``--submissions`` distinct small bots (each a
   new version: its own image build in the Docker sandbox), through the real gRPC API of an
   in-process server: the whole call as the client sees it, the qualification match (as the
   reply reports it: seating, which builds the image in the Docker sandbox, and the match),
   and the rest (upload, validation, ownership checks, storing, transport). Median and p90.
   The process sandbox always; the Docker sandbox when an engine and the bot base image
   answer.
2. **Leaderboard reads under load**: a store holding one finished ladder season (4
   submitted bots and 2 house bots, a round-robin played with ``seasons.run_here`` in the
   process sandbox), ``saloon serve`` in its own process, then ``--clients`` concurrent
   clients (spread over several processes, one channel / connection each) reading for
   ``--seconds``: GetLeaderboard over gRPC, and the HTTP page of the same ladder. One
   client alone first, for comparison. Median / p90 / p99 latency and reads per second.

The store is PostgreSQL (a throwaway schema at ``$SALOON_BENCH_POSTGRES`` or the machine's
default URL) when it answers, else (or with ``--sqlite``) a SQLite file.

Measured on the 2-core machine shared with other agents' jobs (noisy: quote ratios from
one run), 2026-11-30, PostgreSQL 16 on 127.0.0.1, runc, defaults (8 submissions, 50
clients, 10 s; ``saloon serve`` with its default 32 threads)::

    Submission to accepted version (ms)     median    p90
    process  whole call                        391    450
    process  upload + validation + store        37     56
    process  qualification (match)             350    387
    docker   whole call                       1559   1724
    docker   upload + validation + store        33     46
    docker   qualification (build + match)    1518   1710

    Leaderboard reads (60 recorded matches)  clients  median   p90    p99  reads/s
    GetLeaderboard (gRPC)                          1      27    46    137       34
    GetLeaderboard (gRPC)                         50     788  1114   1639       53
    HTML page (HTTP)                               1      16    20     60       59
    HTML page (HTTP)                              50     417  2212   3296       45

Reading: validation and storing are ~10% of a process-sandbox submission and ~2% of a
Docker one; the qualification match (and, in Docker, the image build and a cold container)
is the cost. The reads above recomputed the board from the store on every read (load every
result, fold TrueSkill, ~20 ms of one core): 50 readers saturated the server at ~50
reads/s. Since then boards are kept per ladder until a result arrives
(saloon.arena.boards; one cheap stamp query per read). Same machine, same day,
side by side with the helpers' jobs still running (--no-docker --submissions 3)::

    Leaderboard reads (60 recorded matches)  clients  median   p90    p99  reads/s
    GetLeaderboard (gRPC)                          1     1.0   1.2    5.1      897
    GetLeaderboard (gRPC)                         50    42.9  66.4    130      933
    HTML page (HTTP)                               1     0.9   2.3    5.0      820
    HTML page (HTTP)                              50     8.8  23.0   1060      775

i.e. 17.6x the gRPC reads per second at 50 clients (933 vs 53), median latency 18x lower
(43 vs 788 ms); the HTML page 17x (775 vs 45 reads/s).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from rich.console import Console
from rich.table import Table

from saloon.arena import ladder
from saloon.arena.registry import Registry, Role
from saloon.arena.server import ArenaServer, ServeOptions
from saloon.arena.submit import submit
from saloon.sdk.client import ArenaClient
from saloon.worker.sandbox import SandboxKind
from saloon.worker.sandbox.process import ProcessSandbox
from saloon.worker.seasons import run as seasons
from saloon.worker.store.store import Store

GAME = "western-showdown-v1"
POSTGRES_URL = os.environ.get(
    "SALOON_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
#: Bots of the ladder season (distinct play, so the board has an order).
LADDER_BOTS = {
    "first": "def act(decision):\n    return decision.legal[0]\n",
    "last": "def act(decision):\n    return decision.legal[-1]\n",
    "middle": "def act(decision):\n    return decision.legal[len(decision.legal) // 2]\n",
    "dice": (
        "import random\n\nrng = random.Random(7)\n\n\n"
        "def act(decision):\n    return rng.choice(decision.legal)\n"
    ),
}


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of ``values``, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}" if seconds >= 0.1 else f"{seconds * 1000:.1f}"


@contextmanager
def store_url(sqlite: bool) -> Iterator[tuple[str, str]]:
    """(URL, what it is) of an empty store: a throwaway PostgreSQL schema, else SQLite."""
    if not sqlite:
        admin = sa.create_engine(POSTGRES_URL)
        schema = f"bench_arena_{uuid.uuid4().hex[:8]}"
        try:
            with admin.begin() as conn:
                conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
        except sa.exc.OperationalError:
            admin.dispose()
        else:
            try:
                yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}", "PostgreSQL"
            finally:
                with admin.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
                admin.dispose()
            return
    with tempfile.TemporaryDirectory(prefix="saloon-bench-arena-") as tmp:
        yield str(Path(tmp) / "arena.db"), "SQLite"


def add_users(url: str) -> dict[str, str]:
    with Store.open(url) as store:
        registry = Registry(store)
        return {
            "alice": registry.add_user("alice"),
            "olga": registry.add_user("olga", Role.ORGANISER),
        }


# -- 1. submission to accepted version -------------------------------------------------------


def docker_ready() -> str:
    """'' when the Docker sandbox can run here, else why not."""
    try:
        from saloon.worker.sandbox.docker import DockerSandbox

        DockerSandbox(reap_interval_s=None).close()
    except Exception as exc:
        return str(exc).splitlines()[0][:80]
    return ""


def bench_submissions(sandbox: str, n: int, sqlite: bool) -> dict[str, list[float]]:
    """Seconds per submission: total, qualification, rest."""
    out: dict[str, list[float]] = {"total": [], "qualification": [], "rest": []}
    nonce = uuid.uuid4().hex[:12]  # a fresh image each run, not the engine's cache
    with store_url(sqlite) as (url, _kind):
        tokens = add_users(url)
        server = ArenaServer(
            ServeOptions(
                store_url=url,
                listen="127.0.0.1:0",
                http="",
                sandbox=sandbox,
                season_sandbox="process",
                submit_burst=10_000,
                submit_every_s=0.01,
            )
        )
        server.start()
        try:
            with ArenaClient(server.address, tokens["alice"], timeout_s=600) as client:
                for i in range(n):
                    source = f"# bench {nonce} {i}\n{LADDER_BOTS['first']}".encode()
                    started = time.perf_counter()
                    reply = client.submit_bytes(source, "bot.py", game=GAME, name=f"b{i}")
                    total = time.perf_counter() - started
                    if not reply.accepted:
                        raise SystemExit(f"bench bot refused: {reply.message}")
                    qual = reply.qualification.seconds
                    out["total"].append(total)
                    out["qualification"].append(qual)
                    out["rest"].append(total - qual)
        finally:
            server.stop(0)
    return out


# -- 2. leaderboard reads under load ---------------------------------------------------------


def finished_season(url: str) -> int:
    """Submit the ladder bots, play a season of them and 2 house bots; matches recorded."""
    with Store.open(url) as store:
        registry = Registry(store)
        sandbox = ProcessSandbox()
        try:
            for name, source in LADDER_BOTS.items():
                done = submit(registry, "alice", name, GAME, source.encode(), "bot.py", sandbox)
                assert done.accepted, done.message
        finally:
            sandbox.close()
        request = ladder.LadderRequest(
            game=GAME, house=("greedy", "random"), rounds=2, sandbox=SandboxKind.PROCESS
        )
        spec = ladder.create_season(registry, request, "olga", "bench-ladder")
        return seasons.run_here(store, spec.season_id)


@contextmanager
def serve(url: str) -> Iterator[tuple[str, str]]:
    """``saloon serve`` in its own process: (gRPC address, HTTP base URL)."""
    saloon = Path(sys.executable).with_name("saloon")
    proc = subprocess.Popen(
        [
            str(saloon),
            "serve",
            "--store",
            url,
            "--listen",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--sandbox",
            "process",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        found = re.search(r"arena API on (\S+), boards on (http://\S+?)/?$", line.strip())
        if not found:
            raise SystemExit(f"saloon serve did not start: {line!r}")
        yield found.group(1), found.group(2)
    finally:
        proc.terminate()  # our own child, by its handle
        proc.wait(30)


def _client_process(
    kind: str, target: str, token: str, threads: int, start_at: float, stop_at: float
) -> list[float]:
    """Run ``threads`` readers until ``stop_at``; latencies of the reads begun after
    ``start_at`` (the warm-up is not counted)."""
    lock = threading.Lock()
    latencies: list[float] = []

    def reader() -> None:
        mine: list[float] = []
        read: Callable[[], Any]
        if kind == "grpc":
            client = ArenaClient(target, token, timeout_s=60)
            read = lambda: client.leaderboard(GAME)  # noqa: E731
        else:
            url = f"{target}/leaderboard/{GAME}"

            def read() -> Any:
                with urllib.request.urlopen(url, timeout=60) as page:
                    return page.read()

        while (now := time.perf_counter()) < stop_at:
            read()
            if now >= start_at:
                mine.append(time.perf_counter() - now)
        if kind == "grpc":
            client.close()
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=reader) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return latencies


def load(kind: str, target: str, token: str, clients: int, seconds: float) -> dict[str, float]:
    """``clients`` concurrent readers for ``seconds`` (after 1 s of warm-up)."""
    procs = max(1, min(5, clients // 10))
    split = [clients // procs + (i < clients % procs) for i in range(procs)]
    # perf_counter is system-wide monotonic on Linux: the children share the clock.
    start_at = time.perf_counter() + 1.5
    stop_at = start_at + seconds
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(procs) as pool:
        parts = pool.starmap(
            _client_process, [(kind, target, token, n, start_at, stop_at) for n in split]
        )
    latencies = [x for part in parts for x in part]
    return {
        "median": statistics.median(latencies),
        "p90": pct(latencies, 0.90),
        "p99": pct(latencies, 0.99),
        "rate": len(latencies) / seconds,
        "n": len(latencies),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=8)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--no-docker", action="store_true")
    parser.add_argument("--sqlite", action="store_true", help="SQLite even if PG answers")
    args = parser.parse_args()
    console = Console()

    sandboxes = ["process"]
    why = "--no-docker" if args.no_docker else docker_ready()
    if not why:
        sandboxes.append("docker")
    table = Table(
        title=f"Submission to accepted version ({args.submissions} distinct bots, ms)"
        + ("" if not why else f"; docker skipped: {why}")
    )
    for col in ("sandbox", "part", "median", "p90"):
        table.add_column(col, justify="right" if col in ("median", "p90") else "left")
    for sandbox in sandboxes:
        got = bench_submissions(sandbox, args.submissions, args.sqlite)
        for part, label in (
            ("total", "whole call"),
            ("rest", "upload + validation + store"),
            ("qualification", "qualification (image build + match)"),
        ):
            values = got[part]
            table.add_row(sandbox, label, ms(statistics.median(values)), ms(pct(values, 0.9)))
    console.print(table)

    with store_url(args.sqlite) as (url, kind):
        tokens = add_users(url)
        started = time.perf_counter()
        matches = finished_season(url)
        made = time.perf_counter() - started
        board = Table(
            title=f"Leaderboard reads, saloon serve on {kind} ({matches} matches recorded "
            f"in {made:.0f} s), {args.seconds:.0f} s each"
        )
        for col in ("read", "clients", "median ms", "p90 ms", "p99 ms", "reads/s"):
            board.add_column(col, justify="left" if col == "read" else "right")
        with serve(url) as (address, http):
            for kind_ in ("grpc", "http"):
                for clients in (1, args.clients):
                    target = address if kind_ == "grpc" else http
                    r = load(kind_, target, tokens["alice"], clients, args.seconds)
                    board.add_row(
                        "GetLeaderboard (gRPC)" if kind_ == "grpc" else "HTML page (HTTP)",
                        str(clients),
                        ms(r["median"]),
                        ms(r["p90"]),
                        ms(r["p99"]),
                        f"{r['rate']:.0f}",
                    )
        console.print(board)


if __name__ == "__main__":
    main()
