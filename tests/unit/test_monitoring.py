"""deploy/grafana/saloon.json and deploy/prometheus/: the dashboard loads (a schema check of
what Grafana needs: panels, targets, the Prometheus datasource), and every metric a panel
or an alert rule queries is one the arena or its workers export (PromQL's metric names,
found with a regex, against the families in prometheus_client's registry)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY

from saloon.arena.metrics import ArenaCollector
from saloon.worker.metrics import register_collector, warm_gauge
from saloon.worker.queue.collector import QueueCollector
from saloon.worker.store.store import Store

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "saloon.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
PANEL_TYPES = {"timeseries", "stat", "gauge", "table", "bargauge", "text", "heatmap"}
#: Prometheus's own series a query may name.
PROMETHEUS_SERIES = {"up"}
#: PromQL words that are not metric names: keywords, aggregation modifiers.
KEYWORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
    "offset", "bool", "inf", "nan",
}  # fmt: skip


def exported() -> set[str]:
    """Every sample name the arena and its workers export (families of every collector)."""
    register_collector("queue", QueueCollector("redis://127.0.0.1:1/0", ["saloon"]))
    warm_gauge(lambda: 0)
    names = set()
    with Store.open("sqlite://") as store:
        register_collector("arena", ArenaCollector(store))
        families = list(REGISTRY.collect())
    for family in families:
        if family.type == "counter":
            names |= {f"{family.name}_total", f"{family.name}_created"}
        elif family.type == "histogram":
            names |= {f"{family.name}_{s}" for s in ("bucket", "count", "sum", "created")}
        else:
            names.add(family.name)
    return names


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: its identifiers that are neither a
    function (followed by '('), a keyword, a label in by/without/on/ignoring (...), nor
    inside a selector's {...}, a range's [...] or a string."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        word = match.group()
        if word.lower() in KEYWORDS or text[match.end() :].lstrip().startswith("("):
            continue
        if match.start() > 0 and (
            text[match.start() - 1].isdigit() or text[match.start() - 1] == "."
        ):
            continue  # a number's tail (1e6) or a duration's unit
        names.add(word)
    return names


def alert_exprs() -> dict[str, str]:
    """Each alert rule's expression (alerts.yml is kept to `alert:`, then `expr:` as one
    line or a folded block)."""
    rules: dict[str, str] = {}
    name = ""
    lines = ALERTS.read_text().splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("- alert:"):
            name = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("expr:"):
            value = stripped.split(":", 1)[1].strip()
            if value in (">-", ">", "|", "|-"):
                indent = len(line) - len(line.lstrip()) + 2
                block = []
                for more in lines[i + 1 :]:
                    if more.strip() and len(more) - len(more.lstrip()) < indent:
                        break
                    block.append(more.strip())
                value = " ".join(block)
            rules[name] = value
    return rules


def load_dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def test_metric_names_are_found_in_promql() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (game, le) (rate(saloon_x_bucket{kind="a b"}[5m])))'
        " / on (game) group_left max(up{job='w'}) * 1e6 and saloon_y offset 5m"
    )
    assert metric_names(expr) == {"saloon_x_bucket", "up", "saloon_y"}


def test_the_dashboard_loads_with_panels_targets_and_its_datasource() -> None:
    board = load_dashboard()
    assert isinstance(board["uid"], str) and board["uid"]
    assert isinstance(board["title"], str) and board["title"]
    assert isinstance(board["schemaVersion"], int)
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    panels = board["panels"]
    assert len(panels) >= 10
    ids = [p["id"] for p in panels]
    assert len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids)
    for panel in panels:
        assert panel["type"] in PANEL_TYPES, panel["title"]
        assert isinstance(panel["title"], str) and panel["title"]
        grid = panel["gridPos"]
        assert all(isinstance(grid[k], int) for k in ("h", "w", "x", "y"))
        assert grid["w"] > 0 and grid["x"] + grid["w"] <= 24
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        targets = panel["targets"]
        assert targets, panel["title"]
        refs = [t["refId"] for t in targets]
        assert len(set(refs)) == len(refs)
        for target in targets:
            assert isinstance(target["expr"], str) and target["expr"].strip()
            assert target["datasource"]["type"] == "prometheus"


def test_every_panel_queries_metrics_the_arena_exports() -> None:
    names = exported() | PROMETHEUS_SERIES
    for panel in load_dashboard()["panels"]:
        for target in panel["targets"]:
            used = metric_names(target["expr"])
            assert used, (panel["title"], target["expr"])
            assert used <= names, (panel["title"], sorted(used - names))


def test_the_dashboard_covers_each_part_of_the_arena() -> None:
    used = {
        name
        for panel in load_dashboard()["panels"]
        for target in panel["targets"]
        for name in metric_names(target["expr"])
    }
    for family in (
        "saloon_queue_jobs",
        "saloon_matches_total",
        "saloon_faults_total",
        "saloon_decision_round_trip_seconds_count",
        "saloon_sandbox_starts_total",
        "saloon_sandbox_containers_warm",
        "saloon_store_statement_seconds_bucket",
        "saloon_store_errors_total",
        "saloon_results_recorded_total",
        "saloon_board_lag_seconds",
        "saloon_http_requests_total",
        "saloon_grpc_requests_total",
        "saloon_seasons",
        "saloon_running_season_matches",
    ):
        assert family in used, family


@pytest.mark.parametrize(
    "alert",
    [
        "SaloonQueueOnlyGrows",
        "SaloonWorkerDown",
        "SaloonMatchesFailing",
        "SaloonStoreDown",
        "SaloonRedisDown",
        "SaloonBoardLags",
    ],
)
def test_each_alert_the_issue_asks_for_queries_exported_metrics(alert: str) -> None:
    rules = alert_exprs()
    used = metric_names(rules[alert])
    assert used and used <= exported() | PROMETHEUS_SERIES, (alert, used)
