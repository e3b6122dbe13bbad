"""Prometheus metrics: names and labels by Prometheus's conventions, a played match counted,
web requests by route template, the queue's state read from a real Redis, a worker's own
``/metrics`` port. (A real Prometheus scraping an arena and workers: test_prometheus.py.)"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from saloon.arena.metrics import ArenaCollector
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.worker.metrics import DECISION_SECONDS, instrument_store, observe_match
from saloon.worker.queue.collector import QueueCollector
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.store.store import Store
from tests.integration.season_fixtures import free_port
from tests.integration.web_fixtures import Web, start_web

GAME = "seas-of-strife-v1"
NOW = datetime.now(UTC)
#: Label names that would grow with the arena (one series per bot, match, season, path).
UNBOUNDED = {"bot", "match", "match_id", "season", "season_id", "user", "path", "url", "job"}


def sample(name: str, **labels: str) -> float:
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_every_family_follows_prometheus_naming_and_bounded_labels(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        from saloon.worker.metrics import register_collector

        register_collector("arena", ArenaCollector(store))
        families = [f for f in REGISTRY.collect() if f.name.startswith("saloon_")]
    names = {f.name for f in families}
    assert {"saloon_matches", "saloon_faults", "saloon_store_statement_seconds"} <= names
    assert "saloon_board_lag_seconds" in names and "saloon_http_requests" in names
    for family in families:
        assert family.name == family.name.lower(), family.name
        if family.type == "counter":
            assert all(s.name.endswith(("_total", "_created")) for s in family.samples)
        if family.type == "histogram":
            assert family.name.endswith("_seconds"), family.name
        for s in family.samples:
            assert not (set(s.labels) & UNBOUNDED), (family.name, s.labels)


def test_a_played_match_is_counted_by_game_outcome_faults_and_decisions() -> None:
    seats = [InProcessSeat(make_house_bot(GAME, "random"), f"house:r{i}", "t") for i in range(3)]
    record = play_match(GAME, seats, 5, match_id="metrics-m")
    before = sample("saloon_matches_total", game=GAME, outcome="completed")
    decisions = sample("saloon_decision_round_trip_seconds_count", game=GAME)
    observe_match(GAME, record)
    assert sample("saloon_matches_total", game=GAME, outcome="completed") == before + 1
    assert sample("saloon_decision_round_trip_seconds_count", game=GAME) == decisions + len(
        record.timing["decisions_us"]
    )
    assert sample("saloon_match_duration_seconds_count", game=GAME) >= 1
    # The bulk histogram's buckets are cumulative and end with every decision.
    [family] = list(DECISION_SECONDS.collect())
    buckets = [  # this game's: other tests in the process may have counted other games
        s.value for s in family.samples if s.name.endswith("_bucket") and s.labels["game"] == GAME
    ]
    assert buckets == sorted(buckets)


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Web]:
    site = start_web(str(tmp_path / "web.db"))
    try:
        yield site
    finally:
        site.server.stop()
        site.store.close()


def test_web_requests_are_counted_by_route_template_and_status(web: Web) -> None:
    base = f"http://127.0.0.1:{web.server.port}"
    instrument_store(web.store)
    for path in ("/healthz", "/match/nope-1", "/match/nope-2", "/no/such/page"):
        with contextlib.suppress(urllib.error.HTTPError):
            urllib.request.urlopen(base + path, timeout=10).read()
    got = scrape(base + "/metrics")
    by_route = {
        dict(labels)["route"]: value
        for (name, labels), value in got.items()
        if name == "saloon_http_requests_total" and dict(labels)["status"] == "404"
    }
    assert by_route.get("/match/{match_id}", 0) >= 2  # the template, never the ids
    assert by_route.get("other", 0) >= 1
    assert not any("nope" in str(labels) for (_n, labels) in got)
    assert (
        got[
            (
                "saloon_http_requests_total",
                (("method", "GET"), ("route", "/healthz"), ("status", "200")),
            )
        ]
        >= 1
    )
    statements = [v for (n, _l), v in got.items() if n == "saloon_store_statement_seconds_count"]
    assert sum(statements) > 0


def test_the_queue_state_is_read_from_redis_and_redis_away_is_a_zero(redis_url: str) -> None:
    name = f"metrics-{uuid.uuid4().hex[:8]}"
    queue = SeasonQueue(connect(redis_url), name)
    try:
        from rq import Queue

        rq_queue = Queue(name, connection=connect(redis_url))
        for i in range(3):
            rq_queue.enqueue("builtins.print", i, job_id=f"{name}-{i}")
        [(queue_name, counts, workers)] = QueueCollector(redis_url, [name]).read()
        assert (queue_name, counts["queued"], counts["started"], workers) == (name, 3, 0, 0)
        families = {f.name: f for f in QueueCollector(redis_url, [name]).collect()}
        assert families["saloon_redis_up"].samples[0].value == 1
        away = {f.name: f for f in QueueCollector("redis://127.0.0.1:1/0", [name]).collect()}
        assert away["saloon_redis_up"].samples[0].value == 0
        assert away["saloon_queue_jobs"].samples == []
    finally:
        queue.purge()


def test_a_worker_serves_its_metrics_on_its_own_port(redis_url: str, tmp_path: Path) -> None:
    port = free_port()
    name = f"metrics-{uuid.uuid4().hex[:8]}"
    log = open(tmp_path / "worker.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "saloon.worker.queue.worker",
            "--redis",
            redis_url,
            "--queue",
            name,
            "--metrics",
            f"127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    try:
        deadline = time.monotonic() + 30
        got = None
        while time.monotonic() < deadline:
            try:
                got = scrape(f"http://127.0.0.1:{port}/metrics")
                if got.get(("saloon_workers_alive", (("queue", name),))) == 1:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        assert got is not None, (tmp_path / "worker.log").read_text()
        assert got[("saloon_redis_up", ())] == 1
        assert got[("saloon_workers_alive", (("queue", name),))] == 1
        assert got[("saloon_queue_jobs", (("queue", name), ("state", "queued")))] == 0
        assert ("saloon_sandbox_containers_warm", ()) in got
    finally:
        proc.terminate()
        proc.wait(15)
        SeasonQueue(connect(redis_url), name).purge()


def test_store_statements_are_timed_by_verb_and_their_errors_counted(tmp_path: Path) -> None:
    import sqlalchemy as sa

    from saloon.worker.errors import StoreUnavailable
    from saloon.worker.store import schema as t

    def errors(kind: str) -> float:
        return sample("saloon_store_errors_total", backend="sqlite", kind=kind)

    with Store.open(str(tmp_path / "e.db")) as store:
        instrument_store(store)
        instrument_store(store)  # once per store: a second call adds nothing
        selects = sample(
            "saloon_store_statement_seconds_count", backend="sqlite", statement="SELECT"
        )
        lost, other = errors("unavailable"), errors("other")
        with store.read("bench") as conn:
            conn.execute(sa.text("SELECT 1")).scalar()
        after = sample("saloon_store_statement_seconds_count", backend="sqlite", statement="SELECT")
        assert after == selects + 1
        # What the store maps to StoreUnavailable (a driver OperationalError) is counted
        # as unavailable; a constraint as other.
        with pytest.raises(StoreUnavailable), store.read("bad") as conn:
            conn.execute(sa.text("SELECT FROM WHERE"))
        assert (errors("unavailable"), errors("other")) == (lost + 1, other)
        store.add_bot("a", "ann")
        with pytest.raises(sa.exc.IntegrityError), store.write("dup") as conn:
            conn.execute(t.bots.insert(), [{"name": "a", "owner": "x", "created_at": NOW}])
        assert (errors("unavailable"), errors("other")) == (lost + 1, other + 1)
