"""A tournament on a real arena: PostgreSQL, Redis, the server's driver thread and a real
worker process (the process sandbox). Three house bots of graded strength (random <
greedy < search-25 at Seas of Strife) go through every phase: open (a non-organiser may
not create one), the deadline (a submission for it after the deadline is refused, nothing
stored), the qualifying season, the finals batch by batch, done; the report orders them
truly, the seed is published, and the report is the same when computed again from the
seed and the records."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from saloon.arena import tournament
from saloon.arena.cli import main
from saloon.arena.registry import Registry
from saloon.arena.tournaments import Tournaments
from saloon.sdk.client import ArenaClientError
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

from .arena_fixtures import Arena, start_arena, write_bot
from .season_fixtures import Workers

GAME = "seas-of-strife-v1"
#: Weakest first: the order the report must find, reversed.
GRADED = ("random", "greedy", "search-25")


ORDER = ["open", "frozen", "finals", "reporting", "done"]


def in_order(seen: list[str]) -> bool:
    """The phases seen, each once and in order; frozen (one driver tick without
    qualifying) and reporting (a few results' report) may be too short to be seen."""
    return seen == [p for p in ORDER if p in seen] and {"open", "finals", "done"} <= set(seen)


def _watch(arena: Arena, seen: list[str]) -> None:
    """Follow the tournament as another user would (WatchTournament) until it is over."""
    with arena.client("bob") as bob:
        seen.extend(info.phase for info in bob.watch_tournament("cup"))


@pytest.fixture
def queue(redis_url: str) -> Iterator[SeasonQueue]:
    q = SeasonQueue(connect(redis_url), f"test-cup-{uuid.uuid4().hex[:8]}")
    yield q
    q.purge()


def test_a_tournament_of_graded_bots_goes_through_every_phase_and_orders_them_truly(
    redis_url: str, queue: SeasonQueue, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with postgres_schema("cup") as url:
        arena = start_arena(url, redis_url, queue_name=queue.queue.name)
        workers = Workers(tmp_path)
        try:
            workers.start(redis_url, queue.queue.name)
            with arena.client("olga") as olga, arena.client("alice") as alice:
                deadline = (datetime.now(UTC) + timedelta(seconds=3)).isoformat()
                settings = {
                    "players": 3, "house": list(GRADED), "top_k": 3, "confidence": 0.95, "seed": 1,
                    "budget": 120, "batch_matches": 12, "resamples": 200,
                    "qualifying_rounds": 0,  # straight to the finals (qualifying: test_tournament)
                }  # fmt: skip
                with pytest.raises(ArenaClientError) as refused:
                    alice.create_tournament("cup", GAME, deadline, **settings)
                assert refused.value.code == "PERMISSION_DENIED"
                info = olga.create_tournament("cup", GAME, deadline, **settings)
                watched: list[str] = []
                watcher = threading.Thread(target=_watch, args=(arena, watched), daemon=True)
                watcher.start()
                assert info.phase == "open" and not info.field
                assert json.loads(alice.tournament("cup").settings_json)["seed"] is None
                # The driver thread freezes the field once the deadline has passed.
                phases = [info.phase]
                late = write_bot(tmp_path / "late")
                refusal = None
                live_page = ""
                hidden: object = "never read"
                bound = time.monotonic() + 120
                while phases[-1] not in ("done", "cancelled"):
                    assert time.monotonic() < bound, (phases, workers.logs()[-3000:])
                    now = alice.tournament("cup")
                    if now.phase != phases[-1]:
                        phases.append(now.phase)
                    if now.phase == "finals" and now.batches and not live_page:
                        with urllib.request.urlopen(f"{arena.http}/tournament/cup") as r:
                            live_page = r.read().decode()
                        with urllib.request.urlopen(f"{arena.http}/api/seasons/cup-f1") as r:
                            hidden = json.loads(r.read())["spec"]["seed"]
                    if now.phase != "open" and refusal is None:
                        with pytest.raises(ArenaClientError) as refusal:
                            alice.submit(late, game=GAME, name="late", tournament="cup")
                    time.sleep(0.2)
                # Every phase in order (frozen lasts one driver tick here: no qualifying).
                assert in_order(phases), phases
                watcher.join(60)
                assert not watcher.is_alive() and watched[-1] == "done"
                assert in_order(list(dict.fromkeys(watched))), watched
                assert "Standing so far" in live_page and "cup-f1" in live_page
                assert refusal is not None and refusal.value.code == "FAILED_PRECONDITION"
                assert "deadline" in refusal.value.message and "frozen" in refusal.value.message
                assert alice.bots(game=GAME) == []  # the late submission stored nothing
                done = alice.tournament("cup")
                report = json.loads(done.report_json)
                order = [s["entrant"] for s in report["standings"]]
                assert order == [f"house:{b}" for b in reversed(GRADED)], report["standings"]
                assert report["settled"] and json.loads(done.state_json)["stop"] == "confident"
                assert all(s["p_next"] >= 0.95 for s in report["standings"][:-1])
                seed = json.loads(done.settings_json)["seed"]
                assert isinstance(seed, int)  # published once it is over
                assert hidden is None  # a finals batch's spec hid it while the finals ran
                with urllib.request.urlopen(f"{arena.http}/api/seasons/cup-f1") as r:
                    assert json.loads(r.read())["spec"]["seed"] == seed
                token = arena.tokens["alice"]
                argv = ["tournament", "report", "cup", "--server", arena.address, "--token", token]
                assert main(argv) == 0
                text = capsys.readouterr().out
                assert "final standings after" in text and "house:search-25" in text
                assert main(["tournament", "status", "cup", "--follow", *argv[3:]]) == 0
                assert "stopped: confident" in capsys.readouterr().out
                print(
                    f"\ntournament of {len(GRADED)} graded bots: ordered truly after "
                    f"{done.finals_matches} finals matches in {done.batches} batch(es) "
                    f"({done.matches} ranked, qualifying included)"
                )
                with urllib.request.urlopen(f"{arena.http}/tournament/cup", timeout=30) as r:
                    page = r.read().decode()
                assert "Final standings" in page and "Crosstable" in page
                with urllib.request.urlopen(
                    f"{arena.http}/api/tournaments/cup/report.csv", timeout=30
                ) as r:
                    assert r.read().decode() == done.report_csv
            with Store.open(url) as store:
                row = Tournaments(store).get("cup")
                again = tournament.recompute_report(store, row, seed)
                assert again.to_json() == row.report["json"]  # type: ignore[index]
                owner = Registry(store).season_owner("cup-f1")
                assert owner == ("olga", "tournament:cup")
        finally:
            workers.stop()
            arena.server.stop(0)
