"""A match worker with timing spans around each step of a job (bench/seasons.py runs it).

    python bench/season_spans.py OUT.jsonl WORKER-ARGS...

Runs ``saloon.worker.queue.worker`` with wrappers on the steps of a job and appends one JSON
line per job to OUT.jsonl: milliseconds spent in RQ before the job function (``rq start``),
the store claim, seat set-up, the match itself, the store record, the rest of the job
function (spec parsing, record to JSON), ``play``: the whole of playing a match as the
in-process floor does (set-up, the match, its result), RQ after it (``rq finish``) and
the gap since the previous job ended (``rq dequeue``: the worker loop, dequeue,
heartbeats), and how many matches the job played (``matches``: a batch job plays several;
each step is the sum over them). Not a test.
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from rq.worker import SimpleWorker

from saloon.referee.match import Match
from saloon.worker.matches import play
from saloon.worker.queue import jobs
from saloon.worker.queue import worker as worker_main
from saloon.worker.store.store import Store

#: The job being timed: span name -> [first start, last end, seconds in it, calls].
_job: dict[str, list[float]] = {}


def _span(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            ended = time.perf_counter()
            span = _job.setdefault(name, [started, ended, 0.0, 0])
            span[1] = ended
            span[2] += ended - started
            span[3] += 1

    return wrapped


def main() -> int:
    """Patch the spans in, then run the worker."""
    out_path, argv = sys.argv[1], sys.argv[2:]
    out = open(out_path, "a", encoding="utf-8")  # noqa: SIM115 (open for the process)
    last_end = [0.0]
    execute_job = SimpleWorker.execute_job

    def timed_execute(self: SimpleWorker, job: Any, queue: Any) -> None:
        _job.clear()
        started = time.perf_counter()
        try:
            execute_job(self, job, queue)
        finally:
            ended = time.perf_counter()
            ms = {name: span[2] * 1000 for name, span in _job.items()}
            fn = _job.get("job function", [started, ended, 0.0, 0])
            ms["rq start"] = (fn[0] - started) * 1000
            ms["rq finish"] = (ended - fn[1]) * 1000
            ms["matches"] = _job["match"][3] if "match" in _job else 0
            ms["rq dequeue"] = (started - last_end[0]) * 1000 if last_end[0] else -1.0
            ms["total"] = (ended - started) * 1000
            last_end[0] = ended
            out.write(json.dumps(ms) + "\n")
            out.flush()

    SimpleWorker.execute_job = timed_execute  # type: ignore[method-assign]
    jobs.match_job = _span("job function", jobs.match_job)  # RQ imports it by name
    if hasattr(jobs, "batch_job"):
        jobs.batch_job = _span("job function", jobs.batch_job)
        Store.claim_matches = _span("claim", Store.claim_matches)  # type: ignore[method-assign]
        Store.record_results = _span("record", Store.record_results)  # type: ignore[method-assign]
    if hasattr(Store, "send_results"):  # sent, then waited for at the next flush
        from saloon.worker.store.store import PendingResults

        Store.send_results = _span("record", Store.send_results)  # type: ignore[method-assign]
        PendingResults.wait = _span("record", PendingResults.wait)  # type: ignore[method-assign]
    if hasattr(Store, "send_claim"):  # sent, then waited for after the first match
        from saloon.worker.store.store import PendingClaim

        Store.send_claim = _span("claim", Store.send_claim)  # type: ignore[method-assign]
        PendingClaim.wait = _span("claim", PendingClaim.wait)  # type: ignore[method-assign]
    Store.claim_match = _span("claim", Store.claim_match)  # type: ignore[method-assign]
    if hasattr(Store, "record_result"):  # before the one recording path
        Store.record_result = _span("record", Store.record_result)  # type: ignore[attr-defined]
    play.build_match = _span("seats", play.build_match)
    # The match as played in-process too (set-up, the match, its result): what the queue
    # and the store add is the rest.
    jobs.play_spec = _span("play", jobs.play_spec)
    Match.run = _span("match", Match.run)  # type: ignore[method-assign]
    return worker_main.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
