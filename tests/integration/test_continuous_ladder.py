"""Continuous ladders on real Redis, real PostgreSQL and real worker processes: the
batches, results and board are the same with 1 worker and with 3; the arena server
drives one over its gRPC API, live."""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.arena import continuous
from saloon.arena.cli import main
from saloon.arena.matchmaker import Settings
from saloon.arena.registry import Registry
from saloon.ratings.incremental import IncrementalBoard
from saloon.ratings.leaderboard import build_leaderboard
from saloon.sdk.client import ArenaClientError
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.sandbox import SandboxKind
from saloon.worker.store.rows import SeasonStatus
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

from .arena_fixtures import start_arena
from .season_fixtures import Workers

GAME = "seas-of-strife-v1"
HOUSE = ("random", "greedy", "search-25", "search-50")
REQUEST = continuous.ContinuousRequest(
    ladder_id="cl",
    game=GAME,
    players=3,
    seed=11,
    house=HOUSE,
    sandbox=SandboxKind.PROCESS,
    settings=Settings(batch=3),
    max_batches=4,
)


@pytest.fixture
def queue(redis_url: str) -> Iterator[SeasonQueue]:
    q = SeasonQueue(connect(redis_url), f"test-ladder-{uuid.uuid4().hex[:8]}")
    yield q
    q.purge()


def _play(store_url: str, queue: SeasonQueue, workers: Workers, redis_url: str, n: int) -> Any:
    """Run REQUEST to its end with ``n`` workers: (schedule, board records, ratings)."""
    procs = [workers.start(redis_url, queue.queue.name) for _ in range(n)]
    try:
        with Store.open(store_url) as store:
            registry = Registry(store)
            continuous.start(registry, queue, REQUEST, "olga", store_url)
            deadline = time.monotonic() + 240
            while continuous.tick(registry, queue, REQUEST.ladder_id, store_url) != "stopped":
                assert time.monotonic() < deadline, workers.logs()[-3000:]
                time.sleep(0.2)
            row = registry.continuous(REQUEST.ladder_id)
            assert row is not None and row.batches == 4 and not row.active
            schedule = []
            for k in range(1, 5):
                season_id = continuous.batch_season_id("cl", k)
                season = store.season(season_id)
                assert season is not None and season.status is SeasonStatus.DONE
                matches = store.scheduled(season_id)
                seated = {bot for m in matches for bot in m.spec["seats"]}
                assert seated == {f"house:{h}" for h in HOUSE}  # none starves, anchors play
                schedule.append([(m.match_id, m.spec["seats"], m.spec["seed"]) for m in matches])
            board = IncrementalBoard(store, continuous.board_scope(REQUEST))
            board.update()
            standings, known, _ = board.standings()
            records = build_leaderboard(standings, "", known).records()
            return schedule, records, standings.ratings, standings.history
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)


def test_one_worker_and_three_workers_give_identical_boards(
    redis_url: str, queue: SeasonQueue, tmp_path: Path
) -> None:
    outcomes = []
    for n in (1, 3):
        with postgres_schema("ladder") as url:
            workers = Workers(tmp_path / f"w{n}")
            (tmp_path / f"w{n}").mkdir()
            try:
                outcomes.append(_play(url, queue, workers, redis_url, n))
            finally:
                workers.stop()
    (s1, r1, ratings1, h1), (s3, r3, ratings3, h3) = outcomes
    assert s1 == s3  # the same batches, chosen from the same ratings
    assert r1 == r3 and ratings1 == ratings3 and h1 == h3
    assert sum(len(batch) for batch in s1) == 12
    assert all(r["rank"] is not None for r in r1)


def test_the_arena_runs_a_continuous_ladder_live_over_its_api(
    redis_url: str, queue: SeasonQueue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with postgres_schema("ladderapi") as url:
        arena = start_arena(url, redis_url, queue_name=queue.queue.name)
        workers = Workers(tmp_path)
        try:
            workers.start(redis_url, queue.queue.name)
            with arena.client("olga") as olga, arena.client("alice") as alice:
                info = olga.start_ladder(
                    "live", GAME, players=3, seed=5, house=["random", "greedy", "search-25"],
                    batch=2, max_batches=3,
                )  # fmt: skip
                assert info.active and info.batches == 1 and info.batch_season == "live-b1"
                with pytest.raises(ArenaClientError) as refused:
                    alice.stop_ladder("live")
                assert refused.value.code == "PERMISSION_DENIED"
                seen = list(olga.watch_ladder("live"))
                assert [i.matches for i in seen] == sorted(i.matches for i in seen)
                assert len({i.matches for i in seen}) >= 3  # it showed results as they came
                last = seen[-1]
                assert not last.active and last.batches == 3 and last.matches == 6
                assert [r.bot for r in last.board.rows if r.rank] and last.board.rows[0].rank == 1
                board = olga.leaderboard(ladder_id="live")
                assert [r.bot for r in board.rows] == [r.bot for r in last.board.rows]
                token = arena.tokens["olga"]
                argv = ["ladder", "continuous", "status", "live", "--board"]
                code = main([*argv, "--server", arena.address, "--token", token])
                text = capsys.readouterr().out
                assert code == 0 and "ladder live (seas-of-strife-v1, stopped): 3 batch(es)" in text
                assert "house:search-25" in text and "6 rated match(es)" in text
                with urllib.request.urlopen(f"{arena.http}/api/ladders/live", timeout=30) as r:
                    page = json.loads(r.read())
                assert page["batches"] == 3 and not page["active"]
                assert [row["bot"] for row in page["board"]["rows"]] == [
                    row.bot for row in last.board.rows
                ]
                with urllib.request.urlopen(f"{arena.http}/ladder/live", timeout=30) as r:
                    html = r.read().decode()
                assert "Continuous ladder live" in html and "house:search-25" in html
                house = ["random", "greedy", "search-25"]
                olga.start_ladder("again", GAME, players=3, house=house, batch=2)
                stopped = olga.stop_ladder("again")
                assert not stopped.active and stopped.batches == 1
        finally:
            workers.stop()
            arena.server.stop(0)


def test_a_duplicate_batch_replays_each_deal_with_rotated_seats_and_twins_enter_once(
    tmp_path: Path,
) -> None:
    with Store.open(tmp_path / "dup.db") as store:
        registry = Registry(store)
        for name, owner, version in (("orig", "ann", "sha256:aa"), ("twin", "bo", "sha256:aa"),
                                     ("other", "cy", "sha256:bb")):  # fmt: skip
            store.add_bot(name, owner)
            store.add_version(name, version, {"game": GAME})
        request = continuous.ContinuousRequest(
            ladder_id="dup", game=GAME, players=3, seed=3, house=("greedy", "random"),
            sandbox=SandboxKind.PROCESS, duplicate=True, settings=Settings(batch=2),
        )  # fmt: skip
        refs = [ref for ref, _owner, _house in continuous.entries(registry, request)]
        assert refs == ["bot:orig@sha256:aa", "bot:other@sha256:bb", "house:greedy",
                        "house:random"]  # fmt: skip
        continuous.start(registry, None, request, "olga", str(tmp_path / "dup.db"))
        matches = store.scheduled(continuous.batch_season_id("dup", 1))
    assert len(matches) == 2 * 3
    for deal in range(2):
        group = [m.spec for m in matches if m.spec["deal"] == deal]
        seats = [tuple(g["seats"]) for g in group]
        assert len({g["seed"] for g in group}) == 1
        assert seats[1] == seats[0][1:] + seats[0][:1] and seats[2] == seats[1][1:] + seats[1][:1]
