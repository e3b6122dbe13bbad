"""Incremental boards at scale: a board update per new result and a board read, with a
million results in PostgreSQL (not a test; run by hand, it takes minutes).

    python bench/boards.py --store postgresql+psycopg://postgres@127.0.0.1:5432/test \\
        [--results 1000000] [--bots 200] [--updates 200]

Fills a fresh schema of the given database (dropped at the end) with ``--results``
synthetic 2-seat results of ``--bots`` bots in seasons of 10,000 matches (bulk COPY:
results, seats, the schedule), builds the all-time board's checkpoint once (a full fold,
timed), then, result by result in a running season:

* **update**: record one result, then 10, then 100 (plain INSERTs, not timed) and time
  ``IncrementalBoard.update()`` (one walk statement, the fold, the checkpoint written when
  due), CPU and wall; at the end of each phase what is still unwritten is written, and
  that write's CPU is counted in the phase's mean;
* **raw**: the bare ``rate()`` call each result needs, on the same ratings;
* **read**: ``game_leaderboard(..., details=False)`` with nothing new (a query, not a fold),
  the board stamp the API's cache checks (``board_stamp``: one walk statement) and the
  registry's results stamp (a count of the results, still what pages are kept by).

One result per update: medians and their ratio (CPU; target <= 1.3x), and the mean with
the checkpoint writes; 10 and 100 results per update: the mean CPU per result against
the mean raw ``rate()``. Then the read against its target (<= 50 ms), and the load average.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from saloon.ratings.boards import game_leaderboard
from saloon.ratings.incremental import BoardScope, IncrementalBoard
from saloon.ratings.ladders import default_ladder
from saloon.ratings.params import Scope
from saloon.worker.store.store import Store

GAME = "western-showdown-v1"
SEASON_SIZE = 10_000
#: Results recorded between two updates in the amortised measurement.
AMORTISED = 100


def _schema_url(base: str, schema: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def _copy(conn: Any, table: str, columns: str, rows: io.StringIO) -> None:
    rows.seek(0)
    with conn.cursor() as cur, cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        while chunk := rows.read(1 << 20):
            copy.write(chunk)


def fill(store: Store, results: int, bots: int, seed: int) -> dict[str, float]:
    """Seasons of synthetic results, by COPY; the seasons' ids."""
    rng = random.Random(seed)
    skill = [rng.gauss(0, 4) for _ in range(bots)]
    now = datetime.now(UTC).isoformat()
    options = json.dumps({"best_of": 1})
    raw = store.engine.raw_connection()
    try:
        conn = raw.driver_connection
        with conn.cursor() as cur:  # registered, as the platform's bots are
            cur.executemany(
                "INSERT INTO bots (name, owner, created_at) VALUES (%s, %s, %s)",
                [(f"b{i}", f"owner{i % 20}", now) for i in range(bots)],
            )
        made = 0
        season = 0
        while made < results:
            season += 1
            sid = f"s{season}"
            spec = json.dumps({"game": GAME, "participants": [f"bot:b{i}@v1" for i in range(bots)]})
            with conn.cursor() as cur:
                cur.execute(
                    "INSERT INTO seasons (season_id, game, spec, status, created_at, updated_at)"
                    " VALUES (%s, %s, %s, 'done', %s, %s) RETURNING id",
                    (sid, GAME, spec, now, now),
                )
                pk = cur.fetchone()[0]
            sched, res, seats = io.StringIO(), io.StringIO(), io.StringIO()
            for idx in range(min(SEASON_SIZE, results - made)):
                a, b = rng.sample(range(bots), 2)
                mid = f"{sid}-{idx}"
                bots_json = json.dumps({"seats": [f"bot:b{a}@v1", f"bot:b{b}@v1"],
                                        "options": {"best_of": 1}})  # fmt: skip
                sched.write(f"{mid}\t{pk}\t{idx}\t{bots_json}\tdone\t1\t\t{now}\n")
                res.write(f"{mid}\t{GAME}\t{options}\t{idx}\tcompleted\t\tbench\t{now}\n")
                first = skill[a] + rng.gauss(0, 4) > skill[b] + rng.gauss(0, 4)
                seats.write(f"{mid}\t0\tbot:b{a}@v1\tv1\t{int(first)}\t{1 - int(first)}\tf\t0\n")
                seats.write(f"{mid}\t1\tbot:b{b}@v1\tv1\t{1 - int(first)}\t{int(first)}\tf\t0\n")
                made += 1
            _copy(
                conn,
                "scheduled_matches",
                "match_id, season_pk, idx, spec, status, attempts, detail, updated_at",
                sched,
            )
            _copy(
                conn,
                "results",
                "match_id, game, options, seed, outcome, abort_reason, saloon_version, finished_at",
                res,
            )
            columns = "match_id, seat, bot, version, score, rank, played_out, faults"
            _copy(conn, "result_seats", columns, seats)
            conn.commit()
        return {"seasons": season}
    finally:
        raw.close()


def tail_season(store: Store, n: int, bots: int) -> tuple[int, list[tuple[str, int, int]]]:
    """A running season of ``n`` scheduled 2-seat matches (no results): (key, matches)."""
    rng = random.Random(99)
    now = datetime.now(UTC)
    with store.engine.begin() as conn:
        pk = conn.execute(
            sa.text("INSERT INTO seasons (season_id, game, spec, status, created_at, updated_at)"
                    " VALUES ('tail', :g, '{}', 'running', :t, :t) RETURNING id"),
            {"g": GAME, "t": now},
        ).scalar_one()  # fmt: skip
        matches = []
        for idx in range(n):
            a, b = rng.sample(range(bots), 2)
            seats = [f"bot:b{a}@v1", f"bot:b{b}@v1"]
            spec = json.dumps({"seats": seats, "options": {"best_of": 1}})
            conn.execute(
                sa.text("INSERT INTO scheduled_matches VALUES (:m, :pk, :i, CAST(:s AS JSON),"
                        " 'queued', 1, '', :t)"),
                {"m": f"tail-{idx}", "pk": pk, "i": idx, "s": spec, "t": now},
            )  # fmt: skip
            matches.append((f"tail-{idx}", a, b))
    return pk, matches


def record(store: Store, match_id: str, a: int, b: int, first: bool) -> None:
    """What recording a result writes for a board: the result, its seats, the match DONE."""
    now = datetime.now(UTC)
    with store.engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO results VALUES (:m, :g, CAST(:o AS JSON), '0', 'completed',"
                    " '', 'bench', :t)"),
            {"m": match_id, "g": GAME, "o": json.dumps({"best_of": 1}), "t": now},
        )  # fmt: skip
        for seat, bot, rank in ((0, a, 0 if first else 1), (1, b, 1 if first else 0)):
            conn.execute(
                sa.text("INSERT INTO result_seats VALUES (:m, :s, :b, 'v1', :sc, :r, false, 0)"),
                {"m": match_id, "s": seat, "b": f"bot:b{bot}@v1", "sc": 1 - rank, "r": rank},
            )
        conn.execute(sa.text("UPDATE scheduled_matches SET status = 'done' WHERE match_id = :m"),
                     {"m": match_id})  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True, help="a PostgreSQL URL (a schema is made)")
    parser.add_argument("--results", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--updates", type=int, default=200)
    args = parser.parse_args(argv)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(args.store)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    try:
        store = Store.open(_schema_url(args.store, schema))
        start = time.perf_counter()
        fill(store, args.results, args.bots, 1)
        with store.engine.connect() as conn:  # fresh planner statistics after the bulk load
            conn.execution_options(isolation_level="AUTOCOMMIT").execute(sa.text("ANALYZE"))
        filled = time.perf_counter() - start
        ladder = default_ladder(GAME)
        board = IncrementalBoard(store, BoardScope.all_time(ladder))
        start, cpu = time.perf_counter(), time.process_time()
        board.update()
        built = (time.perf_counter() - start, time.process_time() - cpu)
        phases = [(1, args.updates), (10, max(1, args.updates // 4)), (AMORTISED, 10)]
        total = sum(k * n for k, n in phases)
        _pk, matches = tail_season(store, total + 10, args.bots)  # then 10 never played
        board.update()
        env = ladder.params.environment(Scope.ALL_TIME, 2)
        rng = random.Random(5)
        measured: dict[int, dict[str, Any]] = {}
        at = 0
        for k, updates in phases:
            up_cpu, up_wall, raw_cpu = [], [], []
            for _ in range(updates):
                batch, at = matches[at : at + k], at + k
                state = board._held[board.scope.key]  # the ratings these results meet
                calls = []
                for match_id, a, b in batch:
                    first = rng.random() < 0.5
                    record(store, match_id, a, b, first)
                    ra, rb = state.live[(f"b{a}", "v1")], state.live[(f"b{b}", "v1")]
                    calls.append(([(ra,), (rb,)], [0, 1] if first else [1, 0]))
                c = time.process_time()  # the batch's rate() calls back to back, as folded
                for groups, ranks in calls:
                    env.rate(groups, ranks)
                raw_cpu.append(time.process_time() - c)
                w, c = time.perf_counter(), time.process_time()
                board.update()
                up_cpu.append(time.process_time() - c)
                up_wall.append(time.perf_counter() - w)
            c = time.process_time()
            board.write()  # what the phase took in and has not written yet: counted too
            written = time.process_time() - c
            measured[k] = {
                "median": statistics.median(up_cpu) / k,
                "mean": (sum(up_cpu) + written) / (k * updates),
                "raw_median": statistics.median(raw_cpu) / k,
                "raw_mean": sum(raw_cpu) / (k * updates),
                "wall": statistics.median(up_wall),
            }
        reads, stamps, board_stamps = [], [], []
        from saloon.arena.registry import Registry
        from saloon.ratings.boards import board_stamp, game_scope

        registry = Registry(store)
        for _ in range(50):
            w = time.perf_counter()
            game_leaderboard(store, GAME, details=False)
            reads.append(time.perf_counter() - w)
            w = time.perf_counter()
            board_stamp(store, game_scope(GAME))
            board_stamps.append(time.perf_counter() - w)
            w = time.perf_counter()
            registry.results_stamp()
            stamps.append(time.perf_counter() - w)
        med = statistics.median
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
              f"{args.results:,} results of {args.bots} bots (2 seats) in PostgreSQL; "
              f"filled in {filled:.0f} s; checkpoint built in {built[0]:.0f} s "
              f"({built[1]:.0f} s CPU)")  # fmt: skip
        one = measured[1]
        rows = [
            ("1 result per update: CPU, median", f"{one['median'] * 1e3:.3f} ms"),
            ("  its raw rate(), CPU, median", f"{one['raw_median'] * 1e3:.3f} ms"),
            ("  ratio (target <= 1.3)", f"{one['median'] / one['raw_median']:.2f}x"),
            (
                "  mean per result, checkpoint writes included",
                f"{one['mean'] * 1e3:.3f} ms ({one['mean'] / one['raw_mean']:.2f}x raw)",
            ),
            ("  wall per update, median", f"{one['wall'] * 1e3:.2f} ms"),
        ]
        for k, _n in phases[1:]:
            got = measured[k]
            rows.append(
                (
                    f"{k} results per update: CPU per result, mean, writes included",
                    f"{got['mean'] * 1e3:.3f} ms ({got['mean'] / got['raw_mean']:.2f}x raw)",
                )
            )
        rows += [
            ("board read, nothing new (wall, target <= 50 ms)", f"{med(reads) * 1e3:.1f} ms"),
            ("  the API cache's board stamp (wall)", f"{med(board_stamps) * 1e3:.2f} ms"),
            ("  the registry's results stamp, pages' (wall)", f"{med(stamps) * 1e3:.1f} ms"),
        ]
        width = max(len(r[0]) for r in rows)
        for name, value in rows:
            print(f"{name.ljust(width)}  {value}")
        store.close()
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
