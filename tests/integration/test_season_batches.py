"""Seasons whose jobs carry several matches (batches): every match claimed and recorded by
its own id exactly once, and a batch whose worker is killed with -9 retried, skipping the
matches it recorded already. Real Redis, real workers, real PostgreSQL."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from rq.job import Job

from saloon.referee.record import without_timing
from saloon.worker.matches.batching import (
    MAX_BATCH,
    MIN_JOBS,
    JobLayout,
    batch_size,
    choose_batch,
    measured_match_ms,
)
from saloon.worker.matches.play import play_spec
from saloon.worker.queue.jobs import FLUSH_EVERY, JobOutcome, run_batch
from saloon.worker.queue.season_queue import SeasonQueue, alive_key, connect
from saloon.worker.seasons.run import create, start
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store.rows import MatchStatus
from saloon.worker.store.schema import results
from saloon.worker.store.store import Store

from .season_fixtures import Workers, pg_url, queue_name, workers
from .test_season_failures import private_slow_bot, recorded_once, season, wait_done

__all__ = ["pg_url", "queue_name", "workers"]

BATCH = 4


def test_batch_size_follows_the_match_time_and_keeps_the_season_spread() -> None:
    assert batch_size(None, 500) == 1  # unknown: one match a job
    assert batch_size(500.0, 500) == 1  # long matches: one a job
    assert batch_size(3.0, 2000) == 167  # ~500 ms of play a full job
    assert batch_size(3.0, 64) == 64 // MIN_JOBS  # a short season still splits
    assert batch_size(0.001, 100_000) == MAX_BATCH
    assert batch_size(3.0, 1) == 1


@pytest.mark.parametrize(
    ("size", "total"), [(72, 288), (18, 288), (4, 48), (4, 10), (8, 3), (5, 1), (7, 37), (1, 9)]
)
def test_a_tapered_layout_covers_the_schedule_in_shrinking_jobs(size: int, total: int) -> None:
    layout = JobLayout(size, total, tapered=True)
    starts = layout.starts()
    sizes = [b - a for a, b in zip(starts, [*starts[1:], total], strict=True)]
    # Every match in exactly one job of consecutive matches, none larger than the size.
    assert starts[0] == 0 and sum(sizes) == total and all(1 <= n <= size for n in sizes)
    for index in range(total):
        assert layout.first_of_job(index) == max(s for s in starts if s <= index)
    # The tail shrinks to a short last job: ~a full job in all, the last a 16th of one.
    if total >= 2 * size:
        assert sizes[-4:] == sorted(sizes[-4:], reverse=True)
        assert sizes[-1] == max(1, size >> 4)
        assert sum(sizes[-4:]) <= size + 4  # (each at least 1)
    assert JobLayout(size, total, tapered=True).starts() == starts  # a function of the three
    assert JobLayout(72, 288, tapered=True).starts() == (0, 56, 111, 166, 221, 257, 275, 284)


def test_uniform_layouts_of_seasons_started_before_tapering_stay_as_they_were() -> None:
    layout = JobLayout(4, 10, tapered=False)
    assert layout.starts() == (0, 4, 8)
    assert [layout.first_of_job(i) for i in range(10)] == [0, 0, 0, 0, 4, 4, 4, 4, 8, 8]


def test_a_batched_season_records_each_match_once_and_a_killed_batch_skips_what_it_recorded(
    redis_url: str, pg_url: str, queue_name: str, workers: Workers, tmp_path: Path
) -> None:
    bot = private_slow_bot(tmp_path)
    sid = f"b{uuid.uuid4().hex[:6]}"
    redis = connect(redis_url)
    players = (str(bot), "house:random", "house:greedy", "house:random#2")
    with Store.open(pg_url) as store:
        queue = SeasonQueue(redis, queue_name)
        total = len(create(store, season(sid, players)))
        enq = start(store, queue, sid, pg_url, batch=BATCH)
        assert enq.added == total
        row = store.season(sid)
        assert row is not None and row.batch == BATCH and row.batch_tapered
        # One job per job of the season's layout, named after its first match.
        layout = JobLayout(BATCH, total, tapered=True)
        bounds = [*layout.starts(), total]
        assert sorted(queue.queue.get_job_ids()) == sorted(f"{sid}-{i}" for i in bounds[:-1])
        # A second start enqueues nothing more.
        assert start(store, queue, sid, pg_url).added == 0
        procs = {p.pid: p for p in (workers.start(redis_url, queue_name) for _ in range(2))}
        # Kill -9 a worker inside a batch that has recorded a match and is playing another.
        deadline = time.monotonic() + 60
        victim, batch_ids = None, []
        while time.monotonic() < deadline and victim is None:
            for job_id in queue.running(sid):
                first = int(job_id.rpartition("-")[2])
                end = bounds[bounds.index(first) + 1]
                ids = [f"{sid}-{i}" for i in range(first, end)]
                rows = {r.match_id: r for r in store.scheduled(sid) if r.match_id in ids}
                statuses = [rows[m].status for m in ids]
                if MatchStatus.DONE not in statuses or statuses[-1] is MatchStatus.DONE:
                    continue
                job = Job.fetch(job_id, connection=redis)
                pid = redis.get(alive_key(job.worker_name or ""))
                if pid is not None and int(pid) in procs:
                    victim, batch_ids = procs[int(pid)], ids
                    break
            time.sleep(0.02)
        assert victim is not None, f"no batch caught mid-way\n{workers.logs()}"
        before = {r.match_id: r.status for r in store.scheduled(sid)}
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        wait_done(store, sid, workers, timeout=120)
        recorded_once(store, sid)
        rows = {r.match_id: r for r in store.scheduled(sid)}
        recorded_before = [m for m in batch_ids if before[m] is MatchStatus.DONE]
        replayed = [m for m in batch_ids if before[m] is not MatchStatus.DONE]
        assert recorded_before and replayed
        # The retried batch skipped what was recorded (claimed once), played the rest again.
        assert all(rows[m].attempts == 1 for m in recorded_before), rows
        assert any(rows[m].attempts >= 2 for m in replayed), rows
        # Every other match: claimed once, recorded once.
        others = [m for m in rows if m not in batch_ids]
        assert all(rows[m].attempts == 1 for m in others)
    workers.stop()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_batch_records_each_match_once_in_flushes_and_the_same_as_played_alone(
    backend: str, pg_url: str, tmp_path: Path
) -> None:
    sid = f"f{uuid.uuid4().hex[:6]}"
    url = pg_url if backend == "postgresql" else f"sqlite:///{tmp_path}/store.db"
    players = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")
    with Store.open(url) as store:
        specs = create(store, season(sid, players, rounds=6))  # 72 matches: 3 flushes
        assert len(specs) > 2 * FLUSH_EVERY
        # The first match plays while the claim is out: cancelled, it is not recorded.
        store.mark_match(specs[0].match_id, MatchStatus.CANCELLED)
        outcomes = run_batch(specs, store, "w1")
        assert outcomes[0] is JobOutcome.CANCELLED and store.result(specs[0].match_id) is None
        assert set(outcomes[1:]) == {JobOutcome.RECORDED}
        assert store.progress(sid).done == len(specs) - 1
        rows = store.scheduled(sid)
        assert [(r.attempts, r.detail) for r in rows[1:3]] == [(1, "w1"), (1, "w1")]
        assert rows[0].status is MatchStatus.CANCELLED and rows[0].attempts == 0
        specs = specs[1:]
        # A retried batch plays nothing and writes nothing.
        assert set(run_batch(specs, store, "w2")) == {JobOutcome.DUPLICATE}
        assert len(store.results(season_id=sid)) == len(specs)
        for spec in specs[:: FLUSH_EVERY - 1]:  # same seed, same record, however played
            stored = store.match_record(spec.match_id)
            assert stored is not None
            alone = play_spec(spec).record.to_json()
            assert without_timing(stored) == without_timing(alone)


def test_the_batch_size_is_measured_on_the_games_recorded_matches_or_one_played_here(
    tmp_path: Path,
) -> None:
    players = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")
    with Store.open(f"sqlite:///{tmp_path}/store.db") as store:
        # No match of the game recorded yet, house bots only: one played here, unrecorded.
        first = create(store, season("m1", players, rounds=20))  # 240 matches
        probe = measured_match_ms(store, first)
        assert probe is not None and probe > 0 and store.results() == []
        # Recorded matches of the game: the median of their measured times.
        for i, spec in enumerate(first[:5]):
            record = play_spec(spec).record
            record.timing["match_ms"] = [2.0, 4.0, 1000.0, 3.0, 5.0][i]
            store.record_results([store.prepare_result(spec.match_id, record, {})])[0]
        assert measured_match_ms(store, first) == 4.0
        # Results recorded before the time was kept beside them: read from their records.
        with store.engine.begin() as conn:
            conn.execute(
                sa.update(results).where(results.c.match_id != first[0].match_id),
                {"match_ms": None},
            )
        assert sorted(store.recent_match_ms(first[0].game)) == [2.0, 3.0, 4.0, 5.0, 1000.0]
        assert measured_match_ms(store, first) == 4.0
        assert choose_batch(store, first) == batch_size(4.0, len(first)) == 120
        assert choose_batch(store, first, setting=7) == 7
        # A seat that is not a house bot and nothing recorded of its game: one a job.
        other = SeasonSpec(
            season_id="m2",
            game="seizure-v1",
            participants=(str(private_slow_bot(tmp_path)), "house:random", "house:greedy"),
            seats=3,
            seed=1,
        )
        assert choose_batch(store, create(store, other)) == 1
