"""Web side speed: board page reads under 50 concurrent clients, against the http.server
it replaced, measured in the same run; and a long match's replay data.

    .venv/bin/python bench/web.py [--clients 50] [--seconds 5] [--rounds 2]
                                  [--baseline-rev REV] [--before-rev REV [--pairs 300]]

Run by hand (not a test). Prints two tables:

1. **Board page reads**: the HTML page of a ``western-showdown-v1`` ladder with 60
   recorded matches (as bench/arena.py measured it: 775 reads/s at 50 clients on
   2026-11-30), served by the web side (Starlette on uvicorn) and by the old
   ``http.server`` one (``saloon.arena.web.BoardServer`` of ``--baseline-rev``, by default
   the commit before the web side replaced it, checked out in a temporary git worktree).
   Each server runs in its own process over its own SQLite store, filled by its own code
   with the same matches; ``--clients`` readers (5 processes of threads) read for
   ``--seconds`` after a warm-up, one new connection per read (what urllib does, and what
   the 775 figure measured) and then on kept-alive connections. The servers are measured
   in turn, alternated ``--rounds`` times (the machine is shared and noisy); the table
   gives each figure's median over the rounds, p99 latency, and the ratio of the new to
   the old server and to the 775 reads/s floor.
   The server's CPU time per read (``/proc``: user + system over the whole load,
   warm-up reads counted) is printed too: on a shared machine the rate says how much of
   the CPU a server got, the CPU time what each read cost it.
2. **A 500-decision match's replay data** (``/api/matches/ID/replay``: the record
   replayed through the engine with the public table at every position): the time to
   make it in-process (median of 20), and over HTTP the first (cold) read and the
   kept ones.

With ``--before-rev REV`` (a change's before and after in the same run) the web side of
``REV`` is measured too, from its own temporary worktree: a third board server, alternated
with the others in every round, and the replay data made by ``REV``'s code (in a process
of its own) beside this tree's. A third table then gives **every page before and after**
(the index, a board, a season, a bot, a match page, the viewer's data): ``--pairs`` reads
of each from ``REV``'s server and from this tree's, one after the other in interleaved
pairs on kept-alive connections (a load that comes and goes weighs on both alike), the
median time of each, each server's own CPU time per read and their ratios.

The load average (1 min) is printed before and after: quote it with the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAME = "western-showdown-v1"
MATCHES = 60
FLOOR = 775.0
#: The folders of the import names (setup.py's PACKAGE_DIR).
PACKAGES = ("kits", "games", "sdk", "referee", "worker", "ratings", "arena")

#: Fills a store with the same matches through whichever tree's code imports first, then
#: serves it with that tree's web server; prints the port, serves until stdin closes.
RUNNER = textwrap.dedent(
    """
    import sys
    from saloon.referee.match import play_match
    from saloon.referee.seats import InProcessSeat
    from saloon.sdk.house import make_house_bot
    from saloon.worker.store.rows import ScheduledMatch
    from saloon.worker.store.store import Store

    kind, url, game, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = Store.open(url)
    bots = ["bot:first@v1", "bot:second@v1", "house:greedy", "house:random"]
    for name in ("first", "second"):
        store.add_bot(name, "alice")
        store.add_version(name, "v1")
    pairs = [(a, b) for a in bots for b in bots if a != b]
    specs, records = [], []
    for i in range(n):
        seats = list(pairs[i % len(pairs)])
        mid = f"bench-{i}"
        specs.append(ScheduledMatch(mid, i, {"seats": seats, "seed": i}))
        made = [InProcessSeat(make_house_bot(game, "greedy" if b != "house:random" else "random"),
                              b, "v1") for b in seats]
        records.append(play_match(game, made, i, match_id=mid).to_json())
    store.create_season("bench", {"game": game}, specs)
    for record in records:
        if hasattr(store, "prepare_result"):
            store.record_results([store.prepare_result(record["match_id"], record, {})])
        else:  # a tree from before the store's one recording path
            store.record_result(record["match_id"], record, {})
    if kind == "old":
        from saloon.arena.web import BoardServer
        server = BoardServer(("127.0.0.1", 0), store)
        server.start()
        port = server.port
    else:
        from saloon.arena.web.app import build_app
        from saloon.arena.web.serve import WebServer
        server = WebServer(("127.0.0.1", 0), build_app(store))
        server.start()
        port = server.port
    print(port, flush=True)
    sys.stdin.read()
    server.stop()
    """
)


@contextmanager
def baseline_tree(rev: str) -> Iterator[Path]:
    """A folder whose ``saloon`` package is ``rev``'s tree (a temporary git worktree)."""
    with tempfile.TemporaryDirectory(prefix="saloon-web-bench-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree),
                        rev], check=True)  # fmt: skip
        try:
            pkg = Path(tmp) / "path" / "saloon"
            pkg.mkdir(parents=True)
            for name in PACKAGES:
                (pkg / name).symlink_to(tree / name)
            yield pkg.parent
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           check=False)  # fmt: skip


@contextmanager
def serving(kind: str, path: Path | None, folder: Path, db: str = "") -> Iterator[tuple[int, int]]:
    """The ``kind`` server ("old" or "new") in its own process (its store ``db``.db, by
    default ``kind``.db): its port and pid."""
    env = dict(os.environ)
    if path is not None:  # the old tree first on the path, ahead of the installed package
        env["PYTHONPATH"] = str(path)
    url = str(folder / f"{db or kind}.db")
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, kind, url, GAME, str(MATCHES)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.strip().isdigit():
            raise SystemExit(f"the {kind} server did not start ({line!r})")
        yield int(line), proc.pid
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # it stops on end of input; our own child, by its handle
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _readers(
    port: str, path: str, keep: bool, threads: int, start_at: float, stop_at: float
) -> tuple[list[float], int]:
    """The latencies of the reads after ``start_at``, and how many reads there were."""
    lock = threading.Lock()
    latencies: list[float] = []
    reads = 0

    def reader() -> None:
        nonlocal reads
        mine = []
        count = 0
        conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=60)
        while (now := time.perf_counter()) < stop_at:
            if not keep:
                conn.close()
            conn.request("GET", path, headers={} if keep else {"Connection": "close"})
            reply = conn.getresponse()
            reply.read()
            count += 1
            if reply.status != 200:
                raise SystemExit(f"GET {path}: {reply.status}")
            if now >= start_at:
                mine.append(time.perf_counter() - now)
        conn.close()
        with lock:
            latencies.extend(mine)
            reads += count

    workers = [threading.Thread(target=reader) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return latencies, reads


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` has used (user + system, /proc; 0 without it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(
    server: tuple[int, int], path: str, keep: bool, clients: int, seconds: float
) -> dict[str, float]:
    """``clients`` readers of ``path`` for ``seconds`` after 1.5 s of warm-up, from the
    server (port, pid): reads/s, latency, and the server's CPU time per read (what a read
    costs the server, which a machine shared with other work changes far less than the
    rate: the rate is what the server got of the CPU, this is what it spent)."""
    port, pid = server
    procs = max(1, min(5, clients // 10))
    split = [clients // procs + (i < clients % procs) for i in range(procs)]
    start_at = time.perf_counter() + 1.5  # perf_counter is system-wide on Linux
    stop_at = start_at + seconds
    with multiprocessing.get_context("spawn").Pool(procs) as pool:
        cpu = cpu_seconds(pid)
        parts = pool.starmap(
            _readers, [(str(port), path, keep, n, start_at, stop_at) for n in split]
        )
        cpu = cpu_seconds(pid) - cpu
    lat = sorted(x for part, _ in parts for x in part)
    reads = sum(count for _, count in parts)
    return {
        "rate": len(lat) / seconds,
        "median": statistics.median(lat) * 1000,
        "p99": lat[int(len(lat) * 0.99) - 1] * 1000,
        "cpu_us": cpu / max(1, reads) * 1e6,
    }


def baseline_rev() -> str:
    """The commit before the web side replaced http.server (arena/web.py's last one)."""
    last = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%H", "--", "arena/web.py"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    return f"{last}^"


def bench_boards(args: argparse.Namespace) -> list[tuple[str, ...]]:
    path = f"/leaderboard/{GAME}"
    results: dict[tuple[str, bool], list[dict[str, float]]] = {}
    labels = [("old", "http.server (before)"), ("new", "Starlette + uvicorn")]
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        old_path = stack.enter_context(baseline_tree(args.baseline_rev))
        ports = {
            "old": stack.enter_context(serving("old", old_path, folder)),
            "new": stack.enter_context(serving("new", None, folder)),
        }
        if args.before_rev:
            before_path = stack.enter_context(baseline_tree(args.before_rev))
            ports["before"] = stack.enter_context(serving("new", before_path, folder, db="before"))
            labels.insert(1, ("before", f"Starlette + uvicorn at {args.before_rev[:12]}"))
        for _ in range(args.rounds):
            for kind, port in ports.items():
                for keep in (False, True):
                    figures = load(port, path, keep, args.clients, args.seconds)
                    results.setdefault((kind, keep), []).append(figures)
    rows = []
    for keep in (False, True):
        med = {
            kind: {k: statistics.median(r[k] for r in results[(kind, keep)])
                   for k in ("rate", "median", "p99", "cpu_us")}
            for kind, _ in labels
        }  # fmt: skip
        for kind, label in labels:
            m = med[kind]
            ratio = m["rate"] / med["old"]["rate"]
            rows.append((label, "keep-alive" if keep else "new conn", f"{m['rate']:.0f}",
                         f"{m['median']:.1f}", f"{m['p99']:.1f}", f"{m['cpu_us']:.0f}",
                         f"{ratio:.2f}", f"{m['rate'] / FLOOR:.2f}"))  # fmt: skip
    return rows


def bench_replay() -> list[tuple[str, ...]]:
    from saloon.arena.web.app import build_app
    from saloon.arena.web.matchview import match_replay
    from saloon.arena.web.serve import WebServer
    from saloon.referee.match import play_match
    from saloon.referee.seats import InProcessSeat
    from saloon.sdk.house import make_house_bot
    from saloon.worker.store.store import Store

    game = "seizure-v1"
    for seed in range(50):  # the first seed whose 4-seat match has >= 500 decisions
        seats = [
            InProcessSeat(make_house_bot(game, "random"), f"house:r{i}", "v") for i in range(4)
        ]
        record = play_match(game, seats, seed, match_id="long")
        decisions = sum(1 for e in record.log if not e.is_chance)
        if decisions >= 500:
            break
    times = []
    for _ in range(20):
        started = time.perf_counter()
        match_replay(record)
        times.append((time.perf_counter() - started) * 1000)
    rows = [("replay data, in-process", str(decisions), f"{statistics.median(times):.1f}",
             f"{max(times):.1f}")]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(str(Path(tmp) / "r.db"))
        for copy in ("warm", "long"):  # the same match twice: one to warm the server up
            raw = {**record.to_json(), "match_id": copy}
            if hasattr(store, "prepare_result"):
                store.record_results([store.prepare_result(copy, raw, {})])
            else:  # a tree from before the store's one recording path (--before-rev)
                store.record_result(copy, raw, {})
        server = WebServer(("127.0.0.1", 0), build_app(store))
        server.start()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            http_times = []
            for match_id in ["warm"] + ["long"] * 21:
                started = time.perf_counter()
                conn.request("GET", f"/api/matches/{match_id}/replay")
                reply = conn.getresponse()
                body = reply.read()
                http_times.append((time.perf_counter() - started) * 1000)
            conn.close()
        finally:
            server.stop()
            store.close()
    http_times = http_times[1:]  # the warm-up read left out
    rows.append(("GET /api/matches/ID/replay, first", str(decisions), f"{http_times[0]:.1f}",
                 f"{len(body) // 1024} KiB"))  # fmt: skip
    kept = http_times[1:]
    rows.append(("GET /api/matches/ID/replay, kept", str(decisions),
                 f"{statistics.median(kept):.1f}", f"{max(kept):.1f}"))  # fmt: skip
    return rows


#: The pages the before/after table reads; each exists before and after.
PAGES = (
    "/",
    f"/leaderboard/{GAME}",
    "/season/bench",
    "/bot/first",
    "/match/bench-0",
    "/api/matches/bench-0/replay",
)


def _timed_get(conn: http.client.HTTPConnection, path: str) -> float:
    started = time.perf_counter()
    conn.request("GET", path)
    reply = conn.getresponse()
    reply.read()
    if reply.status != 200:
        raise SystemExit(f"GET {path}: {reply.status}")
    return (time.perf_counter() - started) * 1000


def bench_pages(args: argparse.Namespace) -> list[tuple[str, ...]]:
    """Each of PAGES on ``--before-rev``'s web side and on this tree's: ``--pairs`` reads
    of each, in pairs one after the other (before then after, after then before, in turn)
    on kept-alive connections, and each server's CPU time over its reads."""
    times: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], float] = {}
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        before_path = stack.enter_context(baseline_tree(args.before_rev))
        servers = {
            "before": stack.enter_context(serving("new", before_path, folder, "before")),
            "after": stack.enter_context(serving("new", None, folder, "after")),
        }
        conns = {
            kind: http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for kind, (port, _pid) in servers.items()
        }
        for path in PAGES:
            for conn in conns.values():
                for _ in range(5):  # warm up (kept pages and replays made once)
                    _timed_get(conn, path)
            used = {kind: cpu_seconds(pid) for kind, (_port, pid) in servers.items()}
            for i in range(args.pairs):
                for kind in ("before", "after") if i % 2 == 0 else ("after", "before"):
                    times.setdefault((kind, path), []).append(_timed_get(conns[kind], path))
            for kind, (_port, pid) in servers.items():
                cpu[(kind, path)] = (cpu_seconds(pid) - used[kind]) * 1000 / args.pairs
        for conn in conns.values():
            conn.close()
    rows = []
    for path in PAGES:
        b, a = (statistics.median(times[(k, path)]) for k in ("before", "after"))
        cb, ca = cpu[("before", path)], cpu[("after", path)]
        rows.append((path, f"{b:.2f}", f"{a:.2f}", f"{a / b:.2f}", f"{cb:.2f}", f"{ca:.2f}",
                     f"{ca / cb:.2f}" if cb else "-"))  # fmt: skip
    return rows


def table(title: str, head: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    print(title)
    for r in [head, *rows]:
        cells = zip(r, widths, strict=True)
        print("  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(cells)))
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline-rev", default="")
    parser.add_argument("--before-rev", default="", help="also measure this commit's web side")
    parser.add_argument("--pairs", type=int, default=300, help="reads of each page, before/after")
    parser.add_argument("--replay-rows", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replay_rows:  # the replay figures alone, as JSON (for --before-rev's process)
        print(json.dumps(bench_replay()))
        return
    args.baseline_rev = args.baseline_rev or baseline_rev()
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores: {os.cpu_count()})\n")
    head = ("server", "connection", "reads/s", "median ms", "p99 ms", "server CPU us/read",
            "x old", "x 775")  # fmt: skip
    table(
        f"Board page reads ({GAME}, {MATCHES} matches, {args.clients} clients, "
        f"medians of {args.rounds} alternated rounds of {args.seconds:g} s)",
        head,
        bench_boards(args),
    )
    rows = bench_replay()
    if args.before_rev:
        with baseline_tree(args.before_rev) as before_path:
            before = subprocess.run(
                [sys.executable, __file__, "--replay-rows"],
                env={**os.environ, "PYTHONPATH": str(before_path)},
                capture_output=True, text=True, check=True, timeout=600,
            ).stdout  # fmt: skip
        rows += [(f"{r[0]}, at {args.before_rev[:12]}", *r[1:]) for r in json.loads(before)]
    table("A long match's replay data (ms)", ("what", "decisions", "median", "max / size"), rows)
    if args.before_rev:
        table(
            f"Every page at {args.before_rev[:12]} (before) and this tree (after): median ms "
            f"of {args.pairs} reads each in interleaved pairs, server CPU ms per read",
            ("page", "before ms", "after ms", "x", "before CPU", "after CPU", "x CPU"),
            bench_pages(args),
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
