"""Results store speed: recording a match and reading results, on SQLite and PostgreSQL.

    .venv/bin/python bench/store.py [--matches 200] [--reads 5]

One real record (a 4-player Seas of Strife match of house bots, ~240 log entries, two
faults, two seats' stderr) is recorded under ``--matches`` match ids of one season on each
backend, then read back. Per backend, in the same run:

* the floor: one single-row INSERT + COMMIT (the backend's own commit cost, fsync included);
* ``create_season`` of the whole schedule (one transaction);
* recording one match (``record_results`` of one prepared result) per match (median,
  p90), the first write of each match id;
* recording a duplicate (the retried job's path: nothing written);
* ``results(season_id=...)`` of all the matches (median of ``--reads``), per result;
* ``match_record`` (decompress + parse), median.

PostgreSQL: ``$SALOON_BENCH_POSTGRES`` or the machine's default URL; the bench works in a
schema of its own and drops it. Skipped (said so in the table) when it does not answer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import sqlalchemy as sa
from rich.console import Console
from rich.table import Table

from saloon.referee.faults import Fault, FaultKind
from saloon.referee.match import play_local
from saloon.worker.store.config import StoreConfig
from saloon.worker.store.store import ScheduledMatch, Store

POSTGRES_URL = os.environ.get(
    "SALOON_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def sample_record() -> dict[str, Any]:
    """A real record: 4 house bots at Seas of Strife, with two faults added."""
    bots = ["house:greedy", "house:random", "house:greedy", "house:random"]
    record = play_local("seas-of-strife-v1", bots, seed=11)
    record.faults = [
        Fault(1, FaultKind.TIMEOUT, 5, "no answer to decision 5 in time"),
        Fault(3, FaultKind.INVALID, 9, "answer 14 is not one of 0..6"),
    ]
    return record.to_json()


@contextmanager
def postgres_schema() -> Iterator[str | None]:
    """A throwaway schema's URL, or None when PostgreSQL does not answer."""
    admin = sa.create_engine(POSTGRES_URL)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    except sa.exc.OperationalError:
        admin.dispose()
        yield None
        return
    try:
        yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def timed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def commit_floor(store: Store, n: int) -> list[float]:
    """One single-row INSERT + COMMIT, as the store's writes begin them."""
    table = sa.table("bench_floor", sa.column("id", sa.Integer))
    with store.engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE bench_floor (id INTEGER PRIMARY KEY)"))
    times = []
    for i in range(n):
        start = time.perf_counter()
        with store.engine.connect() as conn:
            conn.execution_options(saloon_store_write=True)
            with conn.begin():
                conn.execute(table.insert().values(id=i))
        times.append(time.perf_counter() - start)
    with store.engine.begin() as conn:
        conn.execute(sa.text("DROP TABLE bench_floor"))
    return times


def measure(
    url: str, config: StoreConfig, record: dict[str, Any], n: int, reads: int
) -> dict[str, float]:
    """Every figure of one backend, in seconds."""
    stderr = {0: "thinking...\n" * 40, 2: "Traceback (most recent call last):\n  ...\n"}
    with Store.open(url, config=config) as store:
        floor = commit_floor(store, min(n, 100))
        ids = [f"bench-{i:05d}" for i in range(n)]
        seats = ["house:random"] * 4
        schedule = [ScheduledMatch(m, i, {"seed": i, "seats": seats}) for i, m in enumerate(ids)]
        create = timed(lambda: store.create_season("bench", {"game": record["game"]}, schedule))
        writes = []
        for match_id in ids:
            copy = dict(record, match_id=match_id)
            writes.append(
                timed(
                    lambda c=copy, m=match_id: store.record_results(
                        [store.prepare_result(m, c, stderr)]
                    )[0]
                )
            )
        dup = dict(record, match_id=ids[0])
        dups = [
            timed(lambda: store.record_results([store.prepare_result(ids[0], dup, stderr)])[0])
            for _ in range(min(n, 50))
        ]
        read_all = [timed(lambda: store.results(season_id="bench")) for _ in range(reads)]
        got = store.results(season_id="bench")
        if [r.match_id for r in got] != ids:
            raise SystemExit("results() did not come back in schedule order")
        records = [timed(lambda m=m: store.match_record(m)) for m in ids[: min(n, 50)]]
        with store.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT sum(length(data)) FROM match_records")).scalar()
    return {
        "floor": statistics.median(floor),
        "create": create,
        "write": statistics.median(writes),
        "write_p90": statistics.quantiles(writes, n=10)[-1],
        "dup": statistics.median(dups),
        "read_all": statistics.median(read_all),
        "read_each": statistics.median(read_all) / n,
        "record": statistics.median(records),
        "stored_bytes": float(stored or 0) / n,
    }


def main() -> None:
    """Run every backend and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--reads", type=int, default=5)
    args = parser.parse_args()
    record = sample_record()
    raw = len(orjson.dumps(record))
    rows: list[tuple[str, dict[str, float] | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for sync in ("FULL", "NORMAL"):
            url = f"sqlite:///{tmp}/bench-{sync}.db"
            rows.append(
                (
                    f"SQLite, synchronous={sync}",
                    measure(
                        url, StoreConfig(sqlite_synchronous=sync), record, args.matches, args.reads
                    ),
                )
            )
    with postgres_schema() as pg_url:
        if pg_url is None:
            rows.append(("PostgreSQL (not answering: skipped)", None))
        else:
            rows.append(
                ("PostgreSQL", measure(pg_url, StoreConfig(), record, args.matches, args.reads))
            )

    table = Table(
        title=f"results store: {args.matches} matches; the record: "
        f"{len(record['log'])} log entries, {raw} bytes of JSON"
    )
    for column in (
        "backend",
        "commit floor",
        "create_season",
        "record median",
        "p90",
        "x floor",
        "duplicate",
        f"results() of {args.matches}",
        "per result",
        "match_record",
        "stored bytes/record",
    ):
        table.add_column(column, justify="left" if column == "backend" else "right")
    for name, m in rows:
        if m is None:
            table.add_row(name, *["-"] * 10)
            continue
        table.add_row(
            name,
            f"{m['floor'] * 1e3:.2f} ms",
            f"{m['create'] * 1e3:.0f} ms",
            f"{m['write'] * 1e3:.2f} ms",
            f"{m['write_p90'] * 1e3:.2f} ms",
            f"{m['write'] / m['floor']:.1f}x",
            f"{m['dup'] * 1e3:.2f} ms",
            f"{m['read_all'] * 1e3:.1f} ms",
            f"{m['read_each'] * 1e6:.0f} us",
            f"{m['record'] * 1e3:.2f} ms",
            f"{m['stored_bytes']:.0f}",
        )
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
