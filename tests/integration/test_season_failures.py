"""Seasons under failure: real Redis, workers as real processes, real PostgreSQL.

Every test works in its own PostgreSQL schema, its own RQ queue and its own season ids;
workers are started here as ``python -m saloon.worker.queue.worker`` and stopped by pid.
Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rq import Worker
from rq.job import Job

from saloon.referee.limits import MatchLimits
from saloon.referee.record import without_timing
from saloon.worker.queue.season_queue import SeasonQueue, alive_key, connect
from saloon.worker.sandbox import SandboxKind
from saloon.worker.sandbox.packages import load_package
from saloon.worker.seasons.run import create, progress, run_here, start
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store.rows import SeasonStatus
from saloon.worker.store.store import Store
from tests import services

from .docker_fixtures import remove_version_images
from .season_fixtures import Workers, pg_url, queue_name, workers

__all__ = ["pg_url", "queue_name", "workers"]

BOTS = Path(__file__).parent / "bots"
#: Short clocks: the path bot answers in ~10 ms.
LIMITS = MatchLimits(decision_ms=2000, bank_ms=2000, start_ms=10_000)
#: The longest any season below may take (they take a few seconds on a quiet machine).
SEASON_TIMEOUT_S = 40


def private_slow_bot(tmp_path: Path, source: str = "slow_random.py") -> Path:
    """A private copy of the slow path bot (or of ``source``, a slower one in BOTS): its
    path marks one test's bot processes."""
    bot = tmp_path / f"slow_{uuid.uuid4().hex[:6]}.py"
    bot.write_text((BOTS / source).read_text())
    return bot


def season(season_id: str, participants: tuple[str, ...], rounds: int = 1) -> SeasonSpec:
    return SeasonSpec(
        season_id=season_id,
        game="seas-of-strife-v1",
        participants=participants,
        seats=3,
        rounds=rounds,
        seed=11,
        limits=LIMITS,
    )


def wait_done(
    store: Store, season_id: str, workers: Workers, timeout: float = SEASON_TIMEOUT_S
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = progress(store, season_id)
        if p.finished and p.status not in (SeasonStatus.CREATED, SeasonStatus.RUNNING):
            return  # every match played, and the season settled by whoever played the last
        time.sleep(0.2)
    state = progress(store, season_id)
    raise AssertionError(f"{season_id} unfinished after {timeout} s: {state}\n{workers.logs()}")


def recorded_once(store: Store, season_id: str) -> list[dict[str, Any]]:
    """The season's records in schedule order, after checking each match has exactly one."""
    scheduled = store.scheduled(season_id)
    results = store.results(season_id=season_id)
    assert [r.match_id for r in results] == [m.match_id for m in scheduled]
    assert progress(store, season_id).done == len(scheduled)
    records = []
    for r in results:
        record = store.match_record(r.match_id)
        assert record is not None
        records.append(record)
    return records


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without wall times and match ids (the ids name the season)."""
    out = []
    for raw in records:
        rec = without_timing(raw)
        rec.pop("match_id")
        out.append(rec)
    return out


def bot_processes(marker: str, parent: int | None = None) -> list[int]:
    """Pids of live processes whose command line mentions ``marker`` (children of
    ``parent`` only, when given)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            fields = (entry / "stat").read_text().split(") ")[-1].split()
        except OSError:
            continue
        state, ppid = fields[0], int(fields[1])
        if marker in cmdline and state != "Z" and parent in (None, ppid):
            pids.append(int(entry.name))
    return pids


def test_one_worker_two_workers_and_the_local_run_record_the_same(
    redis_url: str, pg_url: str, queue_name: str, workers: Workers
) -> None:
    players = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")
    tag = uuid.uuid4().hex[:6]
    # Boots while the local run plays; re-executes itself as a fresh process every 5 jobs.
    workers.start(redis_url, queue_name, "--max-jobs", "5")
    with Store.open(pg_url) as store:
        queue = SeasonQueue(connect(redis_url), queue_name)
        create(store, season(f"t{tag}-local", players))
        run_here(store, f"t{tag}-local")
        local = comparable(recorded_once(store, f"t{tag}-local"))

        for count in (1, 2):
            sid = f"t{tag}-w{count}"
            create(store, season(sid, players))
            first = start(store, queue, sid, pg_url)
            again = start(store, queue, sid, pg_url)  # enqueueing twice does not double it
            assert (first.added, again.added, again.present) == (12, 0, 12)
            if count == 2:
                workers.start(redis_url, queue_name, "--store", pg_url)  # opened at boot
            wait_done(store, sid, workers)
            assert comparable(recorded_once(store, sid)) == local
            assert store.season(sid).status.value == "done"  # type: ignore[union-attr]
        # RQ's worker state, which the workers write without round trips of their own,
        # still reads idle once the queue is empty (the first worker may be re-executing
        # itself after --max-jobs: it registers again when it is back).
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            states = [w.get_state() for w in Worker.all(queue=queue.queue)]
            if len(states) == 2 and set(states) == {"idle"}:
                break
            time.sleep(0.1)
        assert len(states) == 2 and set(states) == {"idle"}
    assert "restarting as a fresh process" in workers.logs()


def test_a_worker_killed_mid_match_leaves_nothing_behind(
    redis_url: str, pg_url: str, queue_name: str, workers: Workers, tmp_path: Path
) -> None:
    # A private copy of the slow path bot: its path marks this test's bot processes.
    bot = private_slow_bot(tmp_path)
    sid = f"k{uuid.uuid4().hex[:6]}"
    redis = connect(redis_url)
    with Store.open(pg_url) as store:
        queue = SeasonQueue(redis, queue_name)
        create(store, season(sid, (str(bot), "house:random", "house:greedy")))
        start(store, queue, sid, pg_url)
        procs = {p.pid: p for p in (workers.start(redis_url, queue_name) for _ in range(2))}
        # Wait until a worker is inside a match whose bot process runs, then kill -9 it.
        deadline = time.monotonic() + 30
        killed_match, victim = None, None
        while time.monotonic() < deadline and victim is None:
            for job_id in queue.running(sid):
                job = Job.fetch(job_id, connection=redis)
                pid = redis.get(alive_key(job.worker_name or ""))
                # A match takes ~1 s here: one that started 0.6 s ago and whose bot
                # process runs under its worker is surely still on.
                age = time.time() - job.started_at.timestamp() if job.started_at else 9.0
                if pid is None or int(pid) not in procs or age > 0.6:
                    continue
                if bot_processes(bot.name, parent=int(pid)):
                    killed_match, victim = job_id, procs[int(pid)]
                    break
            time.sleep(0.01)
        assert victim is not None, "no worker started a match"
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        wait_done(store, sid, workers)
        recorded_once(store, sid)
        # the path bot played every match cleanly (its process started and answered)
        assert [s.faults for r in store.results(season_id=sid) for s in r.seats] == [0] * 9
        row = store.scheduled_match(killed_match)
        assert row is not None and row.attempts >= 2  # played again after the kill
    workers.stop()
    deadline = time.monotonic() + 10
    while bot_processes(bot.name) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert bot_processes(bot.name) == []


def containers_of(pid: int) -> list[dict[str, Any]]:
    """The saloon containers (running or not) that process ``pid`` of this host created."""
    import docker

    client = docker.from_env()
    try:
        labels = ["saloon=1", f"saloon.pid={pid}", f"saloon.host={socket.gethostname()}"]
        found: list[dict[str, Any]] = client.api.containers(all=True, filters={"label": labels})
        return found
    finally:
        client.close()


def test_a_worker_killed_mid_match_leaves_no_container_behind(
    redis_url: str,
    pg_url: str,
    queue_name: str,
    workers: Workers,
    tmp_path: Path,
    docker_engine: None,
) -> None:
    # The slow bot in the Docker sandbox: a worker killed with -9 leaves its container
    # running; the surviving worker's keeper removes it (its creator is gone).
    bot = private_slow_bot(tmp_path)
    sid = f"d{uuid.uuid4().hex[:6]}"
    redis = connect(redis_url)
    players = (str(bot), "house:random", "house:greedy")
    spec = replace(season(sid, players), sandbox=SandboxKind.DOCKER)
    with Store.open(pg_url) as store:
        queue = SeasonQueue(redis, queue_name)
        create(store, spec)
        start(store, queue, sid, pg_url)
        procs = {p.pid: p for p in (workers.start(redis_url, queue_name) for _ in range(2))}
        deadline = time.monotonic() + 60  # the first match of each worker builds the image
        victim = None
        while time.monotonic() < deadline and victim is None:
            for job_id in queue.running(sid):
                job = Job.fetch(job_id, connection=redis)
                pid = redis.get(alive_key(job.worker_name or ""))
                if pid is None or int(pid) not in procs:
                    continue
                running = [c for c in containers_of(int(pid)) if c.get("State") == "running"]
                if running:  # the worker's bot runtime is up, its match on
                    victim = procs[int(pid)]
                    break
            time.sleep(0.05)
        assert victim is not None, f"no worker started a Docker match\n{workers.logs()}"
        # Seen running just now: the kill leaves it behind (until the survivor's sweep, or
        # the survivor's sandbox opening, removes it).
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(10)
        wait_done(store, sid, workers, timeout=120)
        recorded_once(store, sid)
        assert [s.faults for r in store.results(season_id=sid) for s in r.seats] == [0] * 9
    # The survivor's keeper sweeps every few seconds.
    deadline = time.monotonic() + 30
    while containers_of(victim.pid) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert containers_of(victim.pid) == []
    survivor = next(p for p in procs.values() if p is not victim)
    workers.stop()  # closing its sandbox removes the survivor's own containers
    assert containers_of(survivor.pid) == []
    # The private bot's images are new every run (both workers may have built one).
    import docker

    engine = docker.from_env(timeout=60)
    try:
        remove_version_images(engine, load_package(bot).version)
    finally:
        engine.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start_redis(port: int, data_dir: Path) -> subprocess.Popen[bytes]:
    server = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    proc = subprocess.Popen(
        [*server, "--appendonly", "yes", "--appendfsync", "always", "--dir", str(data_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            connect(f"redis://127.0.0.1:{port}/0")
            return proc
        except Exception:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("redis-server did not answer")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_redis_restarted_mid_season(pg_url: str, queue_name: str, workers: Workers) -> None:
    services.require("redis")
    services.require("redis-server")
    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"
    with tempfile.TemporaryDirectory(prefix="saloon-redis-") as data:
        redis_proc = _start_redis(port, Path(data))
        try:
            sid = f"r{uuid.uuid4().hex[:6]}"
            players = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")
            with Store.open(pg_url) as store:
                create(store, season(sid, players, rounds=2))
                start(store, SeasonQueue(connect(url), queue_name), sid, pg_url)
                workers.start(url, queue_name)
                deadline = time.monotonic() + 30
                while progress(store, sid).done < 3 and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert 3 <= progress(store, sid).done < 24  # mid-season
                _stop(redis_proc)
                time.sleep(1.0)
                redis_proc = _start_redis(port, Path(data))
                wait_done(store, sid, workers)
                recorded_once(store, sid)
            workers.stop()
        finally:
            _stop(redis_proc)


def test_postgres_connections_lost_mid_season(
    redis_url: str, pg_url: str, queue_name: str, workers: Workers
) -> None:
    import sqlalchemy as sa

    app = f"saloon_{uuid.uuid4().hex[:8]}"
    worker_url = f"{pg_url}&application_name={app}"
    sid = f"p{uuid.uuid4().hex[:6]}"
    players = ("house:greedy", "house:random", "house:greedy#2", "house:random#2")
    admin = sa.create_engine(services.POSTGRES_URL)
    killed = 0
    try:
        with Store.open(pg_url) as store:
            create(store, season(sid, players, rounds=2))
            start(store, SeasonQueue(connect(redis_url), queue_name), sid, worker_url)
            workers.start(redis_url, queue_name)
            deadline = time.monotonic() + 30
            while progress(store, sid).done < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert 2 <= progress(store, sid).done < 24  # mid-season
            # For a second and a half, cut every connection the worker opens.
            stop_at = time.monotonic() + 1.5
            while time.monotonic() < stop_at:
                with admin.begin() as conn:
                    killed += len(
                        conn.execute(
                            sa.text(
                                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE application_name = :app"
                            ),
                            {"app": app},
                        ).all()
                    )
                time.sleep(0.01)
            wait_done(store, sid, workers)
            recorded_once(store, sid)
    finally:
        admin.dispose()
    assert killed >= 1
    # Some store call lost its connection: either retried at once on a fresh connection
    # (the store's own retry), or failed as StoreUnavailable and the job was retried.
    logs = workers.logs()
    assert "StoreUnavailable" in logs or "connection dropped" in logs, logs


def test_a_job_popped_but_never_started_is_enqueued_again(redis_url: str, queue_name: str) -> None:
    """Redis went away between a worker's pop and its start: RQ parks the job in its
    intermediate queue; the keepers put it back (the Redis-restart test's rare race)."""
    from saloon.worker.queue.season_queue import rescue_popped
    from saloon.worker.seasons.schedule import expand

    queue = SeasonQueue(connect(redis_url), queue_name)
    spec = expand(season(f"i{uuid.uuid4().hex[:6]}", ("house:a", "house:b", "house:c")))[0]
    assert queue.enqueue([spec], "sqlite:///unused.db").added == 1
    q = queue.queue
    # what a worker's dequeue does first: move the id to the intermediate queue
    queue.redis.lmove(q.key, q.intermediate_queue.key, "LEFT", "RIGHT")
    assert q.get_job_ids() == [] and q.intermediate_queue.get_job_ids() == [spec.match_id]
    assert rescue_popped(q, min_age_s=60) == []  # too recent: a worker may be starting it
    assert rescue_popped(q, min_age_s=0) == [spec.match_id]
    assert q.get_job_ids() == [spec.match_id] and q.intermediate_queue.get_job_ids() == []


def test_a_job_whose_execution_was_recorded_but_never_started_is_enqueued_again(
    redis_url: str, queue_name: str
) -> None:
    """Redis went away while a worker recorded a popped job's execution: the transaction
    was applied but its reply lost, so the job sits in the started registry AND the
    intermediate queue, still QUEUED (seen once in CI's Redis-restart test)."""
    from rq.executions import Execution

    from saloon.worker.queue.season_queue import rescue_popped
    from saloon.worker.seasons.schedule import expand

    queue = SeasonQueue(connect(redis_url), queue_name)
    spec = expand(season(f"x{uuid.uuid4().hex[:6]}", ("house:a", "house:b", "house:c")))[0]
    assert queue.enqueue([spec], "sqlite:///unused.db").added == 1
    q = queue.queue
    queue.redis.lmove(q.key, q.intermediate_queue.key, "LEFT", "RIGHT")
    job = Job.fetch(spec.match_id, connection=queue.redis)
    with queue.redis.pipeline() as pipe:
        Execution.create(job, 60, pipeline=pipe, worker_name="gone-worker")
        pipe.execute()
    assert spec.match_id in q.started_job_registry.get_job_ids(cleanup=False)
    assert rescue_popped(q, min_age_s=60) == []  # too recent: its worker may be starting it
    assert rescue_popped(q, min_age_s=0) == [spec.match_id]
    assert q.get_job_ids() == [spec.match_id] and q.intermediate_queue.get_job_ids() == []
    assert q.started_job_registry.get_job_ids(cleanup=False) == []


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_claim_match_marks_an_attempt_and_leaves_done_matches_alone(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from saloon.worker.store.rows import MatchStatus

    url = str(tmp_path / "c.db") if backend == "sqlite" else request.getfixturevalue("pg_url")
    with Store.open(url) as store:
        specs = create(store, season("c1", ("house:greedy", "house:random", "house:random#2")))
        first = specs[0].match_id
        assert store.claim_match(first, "w1") is MatchStatus.RUNNING
        assert store.claim_match(first, "w2") is MatchStatus.RUNNING  # a retry: attempt 2
        row = store.scheduled_match(first)
        assert row is not None and (row.attempts, row.detail) == (2, "w2")
        assert store.claim_match("c1-999") is None
        store.mark_match(specs[1].match_id, MatchStatus.CANCELLED)
        assert store.claim_match(specs[1].match_id) is MatchStatus.CANCELLED
        run_here(store, "c1")
        assert store.claim_match(first) is MatchStatus.DONE
        row = store.scheduled_match(first)
        assert row is not None and row.status is MatchStatus.DONE and row.attempts == 3
