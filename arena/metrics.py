"""``saloon serve``'s Prometheus metrics: ``GET /metrics`` on its HTTP side.

Beside the worker's families (saloon.worker.metrics: the queue's state read from Redis,
the store's statements), the arena exports

* the web side and its JSON API: ``saloon_http_requests_total{route,method,status}`` and
  ``saloon_http_request_duration_seconds{route,method}``, ``route`` the matched route's
  *template* (``/match/{match_id}``; ``other`` for a path no route matches), never the path;
* the gRPC API: ``saloon_grpc_requests_total{method,code}`` and
  ``saloon_grpc_request_duration_seconds{method}``;
* read when Prometheus scrapes, from the store (:class:`ArenaCollector`): seasons by status,
  the matches of the running seasons by status (their progress), continuous ladders and
  repeating schedules running, whether the store answers, and each game's board lag:
  ``saloon_board_lag_seconds{game}``, how long the oldest result its all-time board does
  not include yet has waited (0 when it has every result). The board is brought up to
  date first (as a reader of it would), so the lag is what a reader would see: results
  that wait for an earlier scheduled match (docs/ratings.md, the contiguous prefix).

Decision: ``/metrics`` is served on the web port without a token, as every Prometheus
target is; it holds counts and timings only (no bot, user or season names). An operator
who publishes the web port restricts ``/metrics`` at the proxy (docs/operator-guide.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from saloon.worker.metrics import (
    DURATION_BUCKETS,
    instrument_store,
    register_collector,
)

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from saloon.worker.store.store import Store

log = logging.getLogger(__name__)

#: A web request: 1 ms to 10 s.
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10)

HTTP_REQUESTS = Counter(
    "saloon_http_requests",
    "Web and JSON API requests answered, by route template, method and status.",
    ["route", "method", "status"],
)
HTTP_SECONDS = Histogram(
    "saloon_http_request_duration_seconds",
    "Web and JSON API requests' time to their last byte, by route template and method.",
    ["route", "method"],
    buckets=REQUEST_BUCKETS,
)
GRPC_REQUESTS = Counter(
    "saloon_grpc_requests", "gRPC API calls, by method and status code.", ["method", "code"]
)
GRPC_SECONDS = Histogram(
    "saloon_grpc_request_duration_seconds",
    "gRPC API calls' time, by method.",
    ["method"],
    buckets=DURATION_BUCKETS,
)
#: The methods a request's label takes (anything else: OTHER).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})


class RequestMetrics:
    """ASGI middleware: each HTTP request counted by route template, method and status."""

    def __init__(self, app: ASGIApp | Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = scope.get("route")
            template = str(getattr(route, "path", "") or "other")
            method = scope.get("method", "GET")
            method = method if method in METHODS else "OTHER"
            HTTP_REQUESTS.labels(template, method, str(status)).inc()
            HTTP_SECONDS.labels(template, method).observe(time.perf_counter() - started)


async def metrics_endpoint(request: Request) -> Response:
    """``GET /metrics``: every family, Prometheus's text format (the collectors that read
    Redis and the store run on a worker thread)."""
    import anyio.to_thread
    from starlette.responses import Response

    body = await anyio.to_thread.run_sync(generate_latest, REGISTRY)
    return Response(body, media_type=CONTENT_TYPE_LATEST)


def observe_grpc(method: str, code: str, seconds: float) -> None:
    """One gRPC call answered."""
    GRPC_REQUESTS.labels(method, code).inc()
    GRPC_SECONDS.labels(method).observe(seconds)


class ArenaCollector(Collector):
    """The arena's state read from the store when Prometheus scrapes (see the module)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("saloon_store_up", "1 when the store answered the scrape.")
        seasons = GaugeMetricFamily("saloon_seasons", "Seasons by status.", labels=["status"])
        matches = GaugeMetricFamily(
            "saloon_running_season_matches",
            "Scheduled matches of the running seasons, by status (their progress).",
            labels=["status"],
        )
        ladders = GaugeMetricFamily(
            "saloon_continuous_ladders_running", "Continuous ladders running."
        )
        schedules = GaugeMetricFamily(
            "saloon_schedules_active", "Repeating season schedules (tournaments) active."
        )
        tournaments = GaugeMetricFamily(
            "saloon_tournaments", "Tournaments, by phase.", labels=["phase"]
        )
        lag = GaugeMetricFamily(
            "saloon_board_lag_seconds",
            "Age of the oldest result a game's all-time board does not include yet.",
            labels=["game"],
        )
        try:
            state = self.read()
            up.add_metric([], 1)
        except Exception as exc:  # the store away: say so, do not fail the scrape
            log.debug("metrics: store: %s", exc)
            up.add_metric([], 0)
            yield up
            return
        for status, n in sorted(state["seasons"].items()):
            seasons.add_metric([status], n)
        for status, n in sorted(state["matches"].items()):
            matches.add_metric([status], n)
        ladders.add_metric([], state["ladders"])
        schedules.add_metric([], state["schedules"])
        for phase, n in sorted(state["tournaments"].items()):
            tournaments.add_metric([phase], n)
        for game, seconds in sorted(state["lag"].items()):
            lag.add_metric([game], seconds)
        yield from (up, seasons, matches, ladders, schedules, tournaments, lag)

    def read(self) -> dict[str, Any]:
        """The counts, and each game's board lag (after bringing its board up to date)."""
        import sqlalchemy as sa

        from saloon.arena.tournaments import Phase
        from saloon.worker.store import schema as t
        from saloon.worker.store.rows import MatchStatus, SeasonStatus

        se, sm = t.seasons, t.scheduled_matches
        with self.store.read("metrics") as conn:
            by_status: dict[str, int] = dict(
                conn.execute(sa.select(se.c.status, sa.func.count()).group_by(se.c.status)).all()
            )
            running: dict[str, int] = dict(
                conn.execute(
                    sa.select(sm.c.status, sa.func.count())
                    .join(se, se.c.id == sm.c.season_pk)
                    .where(se.c.status == SeasonStatus.RUNNING.value)
                    .group_by(sm.c.status)
                ).all()
            )
            ladders = conn.execute(
                sa.select(sa.func.count()).where(t.continuous_ladders.c.active.is_(True))
            ).scalar_one()
            schedules = conn.execute(
                sa.select(sa.func.count()).where(t.schedules.c.active.is_(True))
            ).scalar_one()
            phases: dict[str, int] = dict(
                conn.execute(
                    sa.select(t.tournaments.c.phase, sa.func.count()).group_by(
                        t.tournaments.c.phase
                    )
                ).all()
            )
            games = conn.execute(sa.select(t.results.c.game).distinct()).scalars().all()
        return {
            "seasons": {s.value: int(by_status.get(s.value, 0)) for s in SeasonStatus},
            "matches": {s.value: int(running.get(s.value, 0)) for s in MatchStatus},
            "ladders": int(ladders),
            "schedules": int(schedules),
            "tournaments": {p.value: int(phases.get(p.value, 0)) for p in Phase},
            "lag": {game: self.board_lag(game) for game in sorted(games)},
        }

    def board_lag(self, game: str) -> float:
        """Seconds the oldest result ``game``'s all-time board lacks has waited (0: none)."""
        from saloon.ratings.boards import game_scope
        from saloon.ratings.incremental import IncrementalBoard

        try:
            board = IncrementalBoard(self.store, game_scope(game))
        except Exception:  # a game no longer installed: its board cannot be built
            return 0.0
        board.update()
        since = board.waiting_since()
        if since is None:
            return 0.0
        return max(0.0, (datetime.now(UTC) - since).total_seconds())

    def describe(self) -> Iterator[Metric]:
        return iter(())


def register_arena_metrics(store: Store, redis_url: str | None, queue_name: str) -> None:
    """The collectors of ``saloon serve``: the store's state and statements, the queue's."""
    instrument_store(store)
    register_collector("arena", ArenaCollector(store))
    if redis_url:
        from saloon.worker.queue.collector import QueueCollector  # rq and redis: serve only

        register_collector("queue", QueueCollector(redis_url, [queue_name]))
