"""The platform's Prometheus metrics: what a worker exposes (``saloon worker --metrics
HOST:PORT``) and what ``saloon serve`` exposes beside its own (saloon.arena.metrics).

Every family is listed in docs/operator-guide.md ("Metrics"). Conventions (Prometheus's):
names start ``saloon_``, a unit in the name in base units (``_seconds``), counters end
``_total``; labels take a bounded set of values only: a game id, a queue name, an outcome
or fault kind, a sandbox kind, a statement's verb, a route *template*; never a bot, a
match, a season or a path, so their number never grows with the arena's.

Cost on the hot path (a match played by a worker): a few counter increments and one
histogram observation per match, and the match's decisions' round trips counted into a
histogram in one pass at its end (:class:`BulkHistogram`: a bisect and an increment each,
no lock per decision) from the times the referee measured anyway (the record's
``timing.decisions_us``). Queue depths, workers alive and the store's state are read when
Prometheus scrapes, not kept up to date by the work itself.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: A match's duration, a job's: 5 ms (a house-bot match) to 10 min (a wall-clock cap).
DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
#: A decision's round trip: 20 us (in-process) to 10 s (a bank spent).
ROUND_TRIP_BUCKETS = (
    0.00002,
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    10.0,
)
#: A store statement: 50 us to 10 s.
STATEMENT_BUCKETS = (
    0.00005,
    0.0001,
    0.00025,
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    1.0,
    10.0,
)
#: A sandbox seat made ready (a warm runtime: ~us; a container started: ~s).
SANDBOX_BUCKETS = (0.0001, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)

# -- the queue (counted by the worker that runs the jobs) ---------------------------------
JOBS_STARTED = Counter("saloon_queue_jobs_started", "Jobs a worker started.", ["queue"])
JOBS_FINISHED = Counter(
    "saloon_queue_jobs_finished", "Jobs a worker finished (every match recorded).", ["queue"]
)
JOBS_FAILED = Counter(
    "saloon_queue_jobs_failed", "Job attempts that failed with no retry left.", ["queue"]
)
JOBS_RETRIED = Counter(
    "saloon_queue_jobs_retried", "Job attempts that failed and will be retried.", ["queue"]
)
JOB_SECONDS = Histogram(
    "saloon_queue_job_duration_seconds",
    "Wall time of a job (one match or a batch).",
    ["queue"],
    buckets=DURATION_BUCKETS,
)

# -- matches -----------------------------------------------------------------------------
MATCHES = Counter("saloon_matches", "Matches played to their end, by outcome.", ["game", "outcome"])
MATCH_SECONDS = Histogram(
    "saloon_match_duration_seconds",
    "Wall time of a match (the record's timing.match_ms).",
    ["game"],
    buckets=DURATION_BUCKETS,
)
FAULTS = Counter("saloon_faults", "Bot faults in played matches, by kind.", ["game", "kind"])
RESULTS_RECORDED = Counter(
    "saloon_results_recorded",
    "Results this process wrote to the store (duplicates of a retried job not counted).",
    ["game"],
)

# -- sandboxes ---------------------------------------------------------------------------
SANDBOX_SEATS = Counter(
    "saloon_sandbox_seats", "Bot seats made ready in a sandbox (warm or started).", ["kind"]
)
SANDBOX_SEAT_SECONDS = Histogram(
    "saloon_sandbox_seat_seconds",
    "Time to make a bot seat ready in a sandbox (a warm runtime or a new one).",
    ["kind"],
    buckets=SANDBOX_BUCKETS,
)
SANDBOX_STARTS = Counter(
    "saloon_sandbox_starts", "Bot runtimes started (Docker: containers created).", ["kind"]
)
SANDBOX_START_SECONDS = Histogram(
    "saloon_sandbox_start_seconds",
    "Time to start a bot runtime (Docker: create and start a container).",
    ["kind"],
    buckets=SANDBOX_BUCKETS,
)

# -- the store ---------------------------------------------------------------------------
STORE_SECONDS = Histogram(
    "saloon_store_statement_seconds",
    "Store statements' time through SQLAlchemy, by backend and verb.",
    ["backend", "statement"],
    buckets=STATEMENT_BUCKETS,
)
STORE_ERRORS = Counter(
    "saloon_store_errors",
    "Store statements that failed: unavailable (connection lost, database away) or other.",
    ["backend", "kind"],
)

#: The verbs a statement's label takes (anything else: OTHER).
VERBS = frozenset(
    {"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "BEGIN", "COMMIT", "ROLLBACK", "PRAGMA"}
)


class BulkHistogram(Collector):
    """A histogram with one label (a game) filled a whole list at a time: a match's
    decisions at its end, one bisect and one increment each, one lock per match."""

    def __init__(self, name: str, documentation: str, label: str, buckets: Sequence[float]) -> None:
        self.name = name
        self.documentation = documentation
        self.label = label
        self.bounds = list(buckets)
        self._lock = threading.Lock()
        #: label value -> [bucket counts (not cumulative; the last is +Inf), sum]
        self._series: dict[str, tuple[list[int], list[float]]] = {}

    def observe_us(self, value: str, micros: Iterable[int]) -> None:
        """Count each of ``micros`` (microseconds) under ``value``."""
        bounds = [b * 1e6 for b in self.bounds]
        found = [0] * (len(bounds) + 1)
        total = 0
        left = bisect.bisect_left
        for us in micros:
            found[left(bounds, us)] += 1
            total += us
        with self._lock:
            series = self._series.get(value)
            if series is None:
                series = self._series[value] = ([0] * (len(bounds) + 1), [0.0])
            counts = series[0]
            for i, n in enumerate(found):
                if n:
                    counts[i] += n
            series[1][0] += total / 1e6

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=[self.label])
        with self._lock:
            snapshot = [(k, list(c), s[0]) for k, (c, s) in self._series.items()]
        for value, counts, total in sorted(snapshot):
            cumulative, running = [], 0
            for bound, n in zip([*self.bounds, float("inf")], counts, strict=True):
                running += n
                cumulative.append((_bound(bound), running))
            family.add_metric([value], cumulative, total)
        yield family

    def describe(self) -> Iterator[Metric]:
        yield HistogramMetricFamily(self.name, self.documentation, labels=[self.label])


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(float(value))


DECISION_SECONDS = BulkHistogram(
    "saloon_decision_round_trip_seconds",
    "A bot decision's round trip as the referee timed it (its _count: decisions asked).",
    "game",
    ROUND_TRIP_BUCKETS,
)
REGISTRY.register(DECISION_SECONDS)


def observe_match(game: str, record: Any) -> None:
    """Count a played match (a MatchRecord): its outcome, time, faults and decisions."""
    outcome = getattr(record.outcome, "value", str(record.outcome))
    MATCHES.labels(game, outcome).inc()
    timing = record.timing
    match_ms = timing.get("match_ms")
    if match_ms is not None:
        MATCH_SECONDS.labels(game).observe(match_ms / 1000)
    for fault in record.faults:
        FAULTS.labels(game, getattr(fault.kind, "value", str(fault.kind))).inc()
    decisions = timing.get("decisions_us")
    if decisions:
        DECISION_SECONDS.observe_us(game, (d[2] for d in decisions))


def instrument_store(store: Store) -> None:
    """Time every statement ``store`` runs through SQLAlchemy and count its errors
    (listeners on the store's public ``engine``; once per store)."""
    import sqlalchemy as sa

    engine = store.engine
    if engine in _instrumented:
        return
    _instrumented.add(engine)
    backend = store.backend
    #: statement text -> its histogram child (the texts are few: compiled once, cached).
    series: dict[str, Any] = {}
    clock = time.perf_counter

    def before(
        conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: Any
    ) -> None:
        context.saloon_started = clock()

    def after(conn: Any, cursor: Any, statement: str, params: Any, context: Any, many: Any) -> None:
        elapsed = clock() - context.saloon_started
        child = series.get(statement)
        if child is None:
            verb = statement.lstrip()[:8].split(None, 1)[0].upper() if statement else ""
            child = STORE_SECONDS.labels(backend, verb if verb in VERBS else "OTHER")
            if len(series) < 10_000:
                series[statement] = child
        child.observe(elapsed)

    def error(context: Any) -> None:
        lost = context.is_disconnect or isinstance(context.original_exception, _operational())
        STORE_ERRORS.labels(backend, "unavailable" if lost else "other").inc()

    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "after_cursor_execute", after)
    sa.event.listen(engine, "handle_error", error)


_instrumented: set[Any] = set()


def _operational() -> tuple[type[BaseException], ...]:
    import sqlalchemy.exc

    kinds: list[type[BaseException]] = [sqlalchemy.exc.OperationalError]
    try:
        import psycopg

        kinds.append(psycopg.OperationalError)
    except ImportError:  # pragma: no cover - psycopg is an arena dependency
        pass
    import sqlite3

    kinds.append(sqlite3.OperationalError)
    return tuple(kinds)


def register_collector(key: str, collector: Collector) -> None:
    """Register ``collector`` under ``key``, in place of the one registered under it before
    (a process that opens a second arena or worker reports on the newest)."""
    with _registered_lock:
        before = _registered.pop(key, None)
        if before is not None:
            REGISTRY.unregister(before)
        REGISTRY.register(collector)
        _registered[key] = collector


_registered: dict[str, Collector] = {}
_registered_lock = threading.Lock()


def warm_gauge(read: Callable[[], float]) -> None:
    """``saloon_sandbox_containers_warm``: idle bot runtimes kept warm, read at scrape."""
    with _registered_lock:
        if "warm" in _registered:
            return
        gauge = Gauge(
            "saloon_sandbox_containers_warm", "Idle bot containers kept warm by this process."
        )
        gauge.set_function(read)
        _registered["warm"] = gauge


def serve_metrics(address: str) -> tuple[str, int]:
    """Serve ``/metrics`` on ``address`` (HOST:PORT; port 0: a free one) in a thread of
    this process; the address bound."""
    from prometheus_client import start_http_server

    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"metrics address {address!r}: give HOST:PORT")
    host = host.strip("[]")
    server, _thread = start_http_server(int(port), addr=host)
    bound = server.server_address
    return str(bound[0]), int(bound[1])
