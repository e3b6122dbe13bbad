"""``saloon status``: a real worker playing a real season (Redis, PostgreSQL) on one screen:
the worker alive and what it plays, the queue, the running season's progress, the store
and Redis up; a Redis that does not answer is shown DOWN, not a traceback."""

from __future__ import annotations

import io
import time
import uuid
from pathlib import Path

from saloon.arena.cli import main
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import create, progress, start
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.status import gather
from saloon.worker.store.store import Store

from .season_fixtures import Workers, pg_url, queue_name, workers
from .test_season_failures import LIMITS, private_slow_bot

__all__ = ["pg_url", "queue_name", "workers"]


def test_status_shows_a_worker_playing_its_season_the_queue_and_the_services(
    pg_url: str, redis_url: str, queue_name: str, workers: Workers, tmp_path: Path
) -> None:
    sid = f"st{uuid.uuid4().hex[:6]}"
    slow = str(private_slow_bot(tmp_path))
    spec = SeasonSpec(
        season_id=sid,
        game="seas-of-strife-v1",
        participants=(slow, "house:random", "house:greedy", "house:random#2"),
        seats=3,
        rounds=2,
        seed=3,
        limits=LIMITS,
    )
    with Store.open(pg_url) as store:
        total = len(create(store, spec))
        start(store, SeasonQueue(connect(redis_url), queue_name), sid, pg_url, batch=1)
        workers.start(redis_url, queue_name, "--store", pg_url)
        deadline = time.monotonic() + 60
        seen = None
        # A status is several reads (the workers, then the queues): one taken as a match
        # ends shows the worker on it and the queue with nothing running. Wait for a
        # reading taken within one match (the season has 8).
        while time.monotonic() < deadline and not progress(store, sid).finished:
            status = gather(pg_url, redis_url, [queue_name])
            if any(w.playing.startswith(f"{sid}: ") for w in status.workers) and any(
                q.counts["running"] for q in status.queues
            ):
                seen = status
                break
            time.sleep(0.1)
        assert seen is not None, workers.logs()
        [worker] = seen.workers
        assert worker.alive and worker.state == "busy" and "[seas-of-strife-v1]" in worker.playing
        assert worker.pid > 0 and worker.busy_s is not None
        [queue] = seen.queues
        assert queue.name == queue_name and queue.counts["running"] == 1
        assert queue.counts["queued"] + queue.counts["running"] <= total
        [season] = seen.seasons
        assert (season.season_id, season.queue, season.total) == (sid, queue_name, total)
        assert seen.store_error == "" and seen.redis_error == ""
        assert seen.store_ms is not None and seen.redis_ms is not None

        out = io.StringIO()
        from argparse import Namespace

        from saloon.worker.seasons.cli import cmd_overview

        cmd_overview(Namespace(store=pg_url, redis=redis_url, queue=[queue_name], watch=0), out)
        text = out.getvalue()
        for part in ("services", "workers (1 alive)", queue_name, sid, "up ("):
            assert part in text, text


def test_status_says_redis_is_down_and_still_shows_the_store(tmp_path: Path) -> None:
    out = io.StringIO()
    import contextlib

    db = tmp_path / "s.db"
    Store.open(str(db)).close()
    with contextlib.redirect_stdout(out):
        code = main(["status", "--store", str(db), "--redis", "redis://:secret@127.0.0.1:1/0"])
    assert code == 0
    text = out.getvalue()
    assert "DOWN" in text and "secret" not in text and "***" in text
    assert "up (" in text  # the store


def test_status_lists_the_tournaments_not_over_with_phase_deadline_field_and_finals(
    tmp_path: Path,
) -> None:
    import contextlib
    from datetime import UTC, datetime, timedelta

    from saloon.arena import tournament
    from saloon.arena.registry import Registry
    from saloon.arena.tournaments import Phase, Tournaments
    from saloon.worker.sandbox import SandboxKind

    db = tmp_path / "t.db"
    t0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
    with Store.open(str(db)) as store:
        registry = Registry(store)
        for cup, hours in (("open-cup", 48), ("final-cup", 1), ("old-cup", 2)):
            request = tournament.TournamentRequest(
                tournament_id=cup, game="western-showdown-v1",
                deadline=t0 + timedelta(hours=hours), house=("random", "greedy"),
                sandbox=SandboxKind.PROCESS,
            )  # fmt: skip
            tournament.create(registry, request, "olga", t0)
        book = Tournaments(store)
        field = ["house:random", "house:greedy", "house:search"]
        assert book.advance("final-cup", Phase.OPEN, phase=Phase.FINALS, field=field, batches=3)
        assert book.advance("final-cup", Phase.FINALS, state={"finals_matches": 17})
        assert book.advance("old-cup", Phase.OPEN, phase=Phase.DONE, field=field)
    status = gather(str(db), "redis://127.0.0.1:1/0", ["saloon"])
    assert [(c.tournament_id, c.phase, c.field_size, c.batches, c.finals_matches)
            for c in status.tournaments] == [
        ("final-cup", "finals", 3, 3, 17), ("open-cup", "open", None, 0, 0),
    ]  # fmt: skip
    assert status.tournaments[0].deadline == t0 + timedelta(hours=1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["status", "--store", str(db), "--redis", "redis://127.0.0.1:1/0"]) == 0
    text = out.getvalue()
    assert "tournaments" in text and "old-cup" not in text, text
    for part in ("final-cup", "finals", "2030-01-01 13:00:00 UTC", "17 (3 batches)", "open-cup"):
        assert part in text, text
