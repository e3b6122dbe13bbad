"""What the Prometheus metrics cost on the hot paths, measured in one process, with and
without them alternated (run by hand; a table, medians):

1. a worker's match: a Seas of Strife match of house bots (3 seats, in-process, the
   cheapest match there is, so the largest share) against the metrics a job adds to it
   (saloon.worker.metrics.observe_match: outcome, time, faults, every decision's round
   trip; a result recorded; a job started and finished);
2. a store statement: ``claim_match`` on a SQLite store with the statement listeners
   (saloon.worker.metrics.instrument_store) and on one without, alternated call by call;
3. a web request: the same Starlette app with and without the request middleware
   (saloon.arena.metrics.RequestMetrics), called straight through ASGI (no sockets),
   alternated request by request.

    .venv/bin/python bench/metrics.py [--matches 300] [--calls 3000]

Whole-system figures (bench/seasons.py, bench/web.py --before-rev) move by more than the
metrics cost between two runs of the same code on a loaded machine: these isolate it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from typing import Any


def _match_cost(n: int) -> tuple[float, float, int]:
    from saloon.referee.match import play_match
    from saloon.referee.seats import InProcessSeat
    from saloon.sdk.house import make_house_bot
    from saloon.worker.metrics import (
        JOB_SECONDS,
        JOBS_FINISHED,
        JOBS_STARTED,
        RESULTS_RECORDED,
        observe_match,
    )

    game = "seas-of-strife-v1"
    match_us, metrics_us, decisions = [], [], 0
    for i in range(n):
        seats = [
            InProcessSeat(make_house_bot(game, "random"), f"house:r{j}", "t") for j in range(3)
        ]
        t0 = time.perf_counter()
        record = play_match(game, seats, i, match_id=f"bench-{i}")
        t1 = time.perf_counter()
        JOBS_STARTED.labels("bench").inc()
        observe_match(game, record)
        RESULTS_RECORDED.labels(game).inc()
        JOBS_FINISHED.labels("bench").inc()
        JOB_SECONDS.labels("bench").observe(t1 - t0)
        t2 = time.perf_counter()
        match_us.append((t1 - t0) * 1e6)
        metrics_us.append((t2 - t1) * 1e6)
        decisions += len(record.timing["decisions_us"])
    return statistics.median(match_us), statistics.median(metrics_us), decisions // n


def _store_cost(n: int) -> tuple[float, float]:
    from saloon.worker.metrics import instrument_store
    from saloon.worker.store.rows import ScheduledMatch
    from saloon.worker.store.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        plain = Store.open(os.path.join(tmp, "plain.db"))
        measured = Store.open(os.path.join(tmp, "measured.db"))
        instrument_store(measured)
        for store in (plain, measured):
            store.create_season("s", {"game": "g"}, [ScheduledMatch("s-0", 0, {})])
        times: dict[str, list[float]] = {"plain": [], "measured": []}
        for _ in range(n):
            for name, store in (("plain", plain), ("measured", measured)):
                t0 = time.perf_counter()
                store.claim_match("s-0", "bench")
                times[name].append((time.perf_counter() - t0) * 1e6)
        plain.close()
        measured.close()
    return statistics.median(times["plain"]), statistics.median(times["measured"])


def _web_cost(n: int) -> tuple[float, float]:
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from saloon.arena.metrics import RequestMetrics

    async def page(request: Any) -> PlainTextResponse:
        return PlainTextResponse("ok\n")

    routes = [Route("/match/{match_id}", page)]
    plain = Starlette(routes=routes)
    measured = Starlette(routes=routes, middleware=[Middleware(RequestMetrics)])

    async def call(app: Any) -> float:
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "GET", "scheme": "http", "path": "/match/m-1", "raw_path": b"/match/m-1",
            "query_string": b"", "root_path": "", "headers": [(b"host", b"x")],
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
        }  # fmt: skip

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            return None

        t0 = time.perf_counter()
        await app(scope, receive, send)
        return (time.perf_counter() - t0) * 1e6

    async def run() -> tuple[float, float]:
        times: dict[str, list[float]] = {"plain": [], "measured": []}
        for _ in range(n):
            times["plain"].append(await call(plain))
            times["measured"].append(await call(measured))
        return statistics.median(times["plain"]), statistics.median(times["measured"])

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300)
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args()
    print(f"load average (1 min) before: {os.getloadavg()[0]:.2f}")
    match_us, metrics_us, decisions = _match_cost(args.matches)
    plain_claim, measured_claim = _store_cost(args.calls)
    plain_req, measured_req = _web_cost(args.calls)
    print(f"\nmedians, {args.matches} matches / {args.calls} calls each, alternated")
    print(f"{'what':58} {'without':>10} {'with':>10} {'cost':>9}")
    print(
        f"{'a house-bot match (' + str(decisions) + ' decisions), us':58} {match_us:10.1f} "
        f"{match_us + metrics_us:10.1f} {metrics_us / match_us:9.2%}"
    )
    print(
        f"{'store claim_match (SQLite), us':58} {plain_claim:10.1f} {measured_claim:10.1f} "
        f"{measured_claim / plain_claim - 1:9.2%}"
    )
    print(
        f"{'web request through ASGI (trivial page), us':58} {plain_req:10.1f} "
        f"{measured_req:10.1f} {'+' + format(measured_req - plain_req, '.1f') + ' us':>9}"
    )
    print(f"\nload average (1 min) after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
