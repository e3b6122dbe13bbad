"""Ladder seasons and their repeats on real Redis and a real RQ worker process.

The schedule's next season is an RQ job in RQ's scheduled-job registry, due ``every_s``
later; the test makes it due at once instead of waiting (the registry's own ``schedule``),
then a burst worker (``saloon worker --burst``, a real process) promotes and runs it.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rq.job import Job

from saloon.arena import ladder
from saloon.arena.registry import Registry
from saloon.arena.submit import submit
from saloon.worker.queue.season_queue import SeasonQueue, connect, promote_due
from saloon.worker.sandbox import SandboxKind, open_sandbox
from saloon.worker.store.rows import SeasonStatus
from saloon.worker.store.store import Store

from .arena_fixtures import HONEST_BOT
from .season_fixtures import queue_name

__all__ = ["queue_name"]

GAME = "western-showdown-v1"
REQUEST = ladder.LadderRequest(game=GAME, house=("greedy",), sandbox=SandboxKind.PROCESS)


def _submit(registry: Registry, name: str, source: str) -> str:
    with open_sandbox("process") as sandbox:
        done = submit(registry, "alice", name, GAME, source.encode(), "bot.py", sandbox)
    assert done.accepted, done.message
    return done.version


def _burst(redis_url: str, queue: str) -> None:
    argv = [sys.executable, "-m", "saloon.worker.queue.worker", "--redis", redis_url]
    done = subprocess.run(
        [*argv, "--queue", queue, "--burst"], capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _make_due(queue: SeasonQueue, job_id: str) -> datetime:
    """Move a scheduled job to now; the time it was due."""
    registry = queue.queue.scheduled_job_registry
    assert job_id in registry.get_job_ids()
    due = registry.get_scheduled_time(job_id)
    registry.schedule(Job.fetch(job_id, connection=queue.redis), datetime.now(UTC))
    assert promote_due(queue.queue) == 1
    return due


def test_a_repeating_ladder_season_seats_each_bots_latest_version(
    tmp_path: Path, redis_url: str, queue_name: str
) -> None:
    url = str(tmp_path / "ladder.db")
    queue = SeasonQueue(connect(redis_url), queue_name)
    with Store.open(url) as store:
        registry = Registry(store)
        v1 = _submit(registry, "climber", HONEST_BOT)
        before = datetime.now(UTC)
        row, first = ladder.start_repeating(
            registry, queue, REQUEST, "olga", 3600, url, schedule_id="weekly"
        )
        assert first.season_id == "weekly-1"
        assert first.participants == (f"bot:climber@{v1}", "house:greedy")
        # A new version replaces its predecessor from the next season on.
        v2 = _submit(registry, "climber", HONEST_BOT + "\n# v2\n")
        assert v2 != v1

        _burst(redis_url, queue_name)  # plays season 1
        assert store.season("weekly-1").status is SeasonStatus.DONE  # by its last job
        from saloon.worker.seasons.run import progress

        assert progress(store, "weekly-1").status is SeasonStatus.DONE

        due = _make_due(queue, "schedule-weekly-2")
        assert due >= (before + timedelta(seconds=3590)).replace(microsecond=0)
        _burst(redis_url, queue_name)  # runs the repeat: season 2, and plays it
        second = store.season("weekly-2")
        assert second is not None
        assert second.spec["participants"] == [f"bot:climber@{v2}", "house:greedy"]
        assert progress(store, "weekly-2").status is SeasonStatus.DONE
        assert registry.season_owner("weekly-2") == ("olga", "weekly")
        assert registry.schedule_seasons("weekly") == ["weekly-1", "weekly-2"]
        # Every recorded match of season 2 seated v2.
        for result in store.results(season_id="weekly-2"):
            assert any(s.bot == f"bot:climber@{v2}" for s in result.seats)

        # Redis loses the next repeat's job: re-arming finds it gone and enqueues it again,
        # due an interval after season 2 was made; a second pass finds it there.
        lost = Job.fetch("schedule-weekly-3", connection=queue.redis)
        queue.queue.scheduled_job_registry.remove(lost)
        lost.delete()
        assert ladder.rearm_schedules(registry, queue, url) == ["weekly"]
        assert ladder.rearm_schedules(registry, queue, url) == []
        made = store.season("weekly-2")
        assert made is not None
        due = queue.queue.scheduled_job_registry.get_scheduled_time("schedule-weekly-3")
        expected = made.created_at + timedelta(seconds=3600)
        assert abs((due - expected).total_seconds()) <= 1

        # Stopped: the next repeat runs and makes nothing.
        registry.stop_schedule(row.schedule_id)
        _make_due(queue, "schedule-weekly-3")
        _burst(redis_url, queue_name)
        assert store.season("weekly-3") is None
        assert queue.queue.scheduled_job_registry.get_job_ids() == []
