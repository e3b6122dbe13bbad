"""A real Prometheus (Debian's ``prometheus``, started here on a free port, stopped by pid)
scrapes a running arena (``saloon serve``) and two workers (``--metrics``) while a season
plays: PromQL over its HTTP API gives the queue seen non-empty then empty, the matches
played, the faults by kind and the results recorded, as the store has them, and a board
lag of 0 (and the worker that logs JSON names the season, job and worker in its
job lines); ``promtool`` loads deploy/prometheus/alerts.yml, and a worker killed by pid fires
SaloonWorkerDown. The test's Prometheus scrapes and evaluates every second and its copy
of the rules waits 2 s where deploy/'s waits minutes (``for:``), so all of it takes well
under a minute after the processes are up."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import create, progress, start
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store.store import Store
from tests import services

from .season_fixtures import Workers, free_port, pg_url, workers
from .test_season_failures import LIMITS, private_slow_bot

__all__ = ["pg_url", "workers"]

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
BOTS = Path(__file__).parent / "bots"
GAME = "seas-of-strife-v1"
#: Every wait's bound: processes up, the season played, a query answered, an alert fired.
UP_S = 60.0
SEASON_S = 90.0
QUERY_S = 20.0
ALERT_S = 60.0


class Procs:
    """Processes this test started (ended by pid)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}.log", "wb")  # noqa: SIM115
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
            for p in sorted(self.tmp.glob("*.log"))
        )

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Procs]:
    running = Procs(tmp_path)
    yield running
    running.stop()


def wait_for(what: str, check: Callable[[], Any], bound: float, logs: Callable[[], str]) -> Any:
    deadline = time.monotonic() + bound
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except OSError as exc:
            last = exc
        else:
            if last:
                return last
        time.sleep(0.25)
    raise AssertionError(f"{what}: not within {bound} s (last: {last!r})\n{logs()}")


class Prometheus:
    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path: str, **params: str) -> Any:
        url = f"{self.base}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=5) as answer:
            body = json.loads(answer.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
        """An instant query's result: each series' labels (sorted) and value."""
        data = self.get("/api/v1/query", query=expr)
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in data["result"]}

    def scalar(self, expr: str) -> float | None:
        result = self.query(expr)
        return next(iter(result.values())) if len(result) == 1 else None


def test_prometheus_scrapes_an_arena_and_two_workers_while_a_season_plays(
    pg_url: str, redis_url: str, workers: Workers, procs: Procs, tmp_path: Path
) -> None:
    services.require("prometheus")
    check = subprocess.run(
        ["promtool", "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "SUCCESS" in check.stdout + check.stderr

    queue = f"prom-{uuid.uuid4().hex[:8]}"
    http, grpc_port, prom_port = free_port(), free_port(), free_port()
    metrics = [free_port(), free_port()]

    def logs() -> str:
        return procs.logs() + "\n" + workers.logs()

    procs.start(
        "serve",
        [
            sys.executable, "-m", "saloon.arena.cli", "serve", "--store", pg_url,
            "--redis", redis_url, "--queue", queue, "--listen", f"127.0.0.1:{grpc_port}",
            "--http", f"127.0.0.1:{http}", "--sandbox", "process",
            "--season-sandbox", "process", "--log-format", "json",
        ],
    )  # fmt: skip
    # The second worker logs JSON (--log-format json): its job lines name the season.
    worker_procs = [
        workers.start(redis_url, queue, "--store", pg_url, "--metrics", f"127.0.0.1:{port}", *extra)
        for port, extra in zip(metrics, ([], ["--log-format", "json"]), strict=True)
    ]

    # Its own Prometheus: every second, rules waiting 2 s.
    rules = re.sub(r"for: \S+", "for: 2s", ALERTS.read_text())
    (tmp_path / "alerts.yml").write_text(rules)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "rule_files:\n  - alerts.yml\n"
        "scrape_configs:\n"
        f"  - job_name: saloon-arena\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{http}']\n"
        f"  - job_name: saloon-worker\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{metrics[0]}', '127.0.0.1:{metrics[1]}']\n"
    )
    (tmp_path / "data").mkdir()
    procs.start(
        "prometheus",
        [
            "prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{prom_port}",
        ],
    )  # fmt: skip
    prom = Prometheus(prom_port)

    def all_up() -> bool:
        up = prom.query("up")
        return len(up) == 3 and all(v == 1 for v in up.values())

    wait_for("the arena and both workers scraped", all_up, UP_S, logs)
    wait_for(
        "both workers alive in the arena's view",
        lambda: prom.scalar(f'saloon_workers_alive{{job="saloon-arena",queue="{queue}"}}') == 2,
        QUERY_S,
        logs,
    )

    # A season with a bot that sends illegal actions (INVALID faults) and a slow one.
    sid = f"p{uuid.uuid4().hex[:6]}"
    players = (
        str(private_slow_bot(tmp_path)),
        str(BOTS / "illegal.py"),
        "house:random",
        "house:greedy",
    )
    spec = SeasonSpec(
        season_id=sid, game=GAME, participants=players, seats=3, rounds=2, seed=7, limits=LIMITS
    )
    with Store.open(pg_url) as store:
        total = len(create(store, spec))
        start(store, SeasonQueue(connect(redis_url), queue), sid, pg_url, batch=1)
        wait_for("the season played", lambda: progress(store, sid).finished, SEASON_S, logs)
        assert progress(store, sid).done == total
        faults: Counter[str] = Counter()
        for result in store.results(season_id=sid):
            faults.update(f.kind.value for f in store.faults(result.match_id))
    assert faults["INVALID"] > 0

    # What Prometheus scraped, as the store has it.
    def matches() -> bool:
        return prom.scalar("sum(saloon_matches_total)") == total

    wait_for("matches played", matches, QUERY_S, logs)
    assert prom.scalar("sum(saloon_results_recorded_total)") == total
    assert prom.scalar(f'sum(saloon_matches_total{{game="{GAME}",outcome="completed"}})') == total
    assert {
        dict(labels)["kind"]: value
        for labels, value in prom.query("sum by (kind) (saloon_faults_total)").items()
    } == dict(faults)
    assert (prom.scalar("sum(saloon_decision_round_trip_seconds_count)") or 0) > 0
    # Two workers shared the season: each played some.
    per_worker = prom.query('sum by (instance) (saloon_matches_total{job="saloon-worker"})')
    assert sum(per_worker.values()) == total and len(per_worker) == 2
    # The queue: seen holding the season's jobs while it played, empty now.
    queued = f'max(saloon_queue_jobs{{queue="{queue}",state="queued"}})'
    assert (prom.scalar(f"max_over_time({queued}[5m:1s])") or 0) >= 1
    wait_for("the queue empty", lambda: prom.scalar(queued) == 0, QUERY_S, logs)
    # The board includes every result: no lag.
    wait_for(
        "the board lag read",
        lambda: prom.scalar(f'saloon_board_lag_seconds{{game="{GAME}"}}') == 0,
        QUERY_S,
        logs,
    )
    assert prom.scalar("min(saloon_store_up)") == 1 and prom.scalar("min(saloon_redis_up)") == 1
    # The web side is counted by route template.
    urllib.request.urlopen(f"http://127.0.0.1:{http}/healthz", timeout=5).read()
    wait_for(
        "web requests counted",
        lambda: prom.scalar('sum(saloon_http_requests_total{route="/healthz",status="200"})'),
        QUERY_S,
        logs,
    )
    assert not prom.query("ALERTS{alertname='SaloonWorkerDown'}")
    lines = [json.loads(line) for line in (tmp_path / "worker-1.log").read_text().splitlines()]
    jobs = [line for line in lines if line.get("season") == sid]
    assert jobs, lines
    for line in jobs:
        assert line["job"] and line["worker"] and line["level"] and line["logger"]

    # A forced fault: worker 0 killed by pid; its alert fires.
    killed = worker_procs[0]
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)

    def firing() -> list[dict[str, Any]]:
        alerts = prom.get("/api/v1/alerts")["alerts"]
        return [
            a
            for a in alerts
            if a["labels"]["alertname"] == "SaloonWorkerDown" and a["state"] == "firing"
        ]

    [alert] = wait_for("SaloonWorkerDown firing", firing, ALERT_S, logs)
    assert alert["labels"]["instance"] == f"127.0.0.1:{metrics[0]}"
    assert alert["labels"]["severity"] == "warning"
