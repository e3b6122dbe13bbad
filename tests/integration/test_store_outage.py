"""The platform's own outages heal by themselves and cost no match anything (issue 31).

A private PostgreSQL cluster crashed mid-season with ``pg_ctl stop -m immediate`` and
kept down longer than every retry window, then started again; the same with the private
Redis (without persistence: it comes back empty) down at the same time. Each on a
platform of its own (cluster, redis-server, two real ``saloon worker`` processes, a
60-match Seas of Strife season of slow path bots, one match a job), the two outages at
the same time so that the test command waits out one outage, not two (the seasons then
heal one after the other). The season completes after the restart, every match recorded
once, no fault charged, no retry spent, and each worker logs the outage in a line or
two, not a traceback per job. And the keepers' part alone: a match the store says is
pending whose job RQ failed for good (the store away when its retries were spent) is
enqueued again, and a season with nothing left to play is settled without anyone reading
its progress. Every wait is bounded; every process is started and stopped by pid.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from redis.exceptions import RedisError
from rq.job import Job

from saloon.worker.errors import StoreUnavailable
from saloon.worker.queue.outages import PROBE_MAX_S
from saloon.worker.queue.season_queue import (
    ALIVE_TTL_S,
    JOB_RETRIES,
    RETRY_INTERVALS_S,
    SeasonQueue,
    connect,
)
from saloon.worker.queue.worker import REQUEUE_EVERY_S
from saloon.worker.seasons.run import (
    LOCAL_ATTEMPTS,
    LOCAL_BACKOFF_S,
    create,
    start,
)
from saloon.worker.store.rows import MatchStatus, SeasonStatus
from saloon.worker.store.store import Store
from tests import services

from .season_fixtures import (
    PrivatePostgres,
    PrivateRedis,
    Workers,
    free_port,
    pg_url,
    queue_name,
)
from .test_season_failures import private_slow_bot, recorded_once, season

__all__ = ["pg_url", "queue_name"]

#: Every window within which something retries a failed job or match and then gives up
#: (seconds): RQ's retries of a job, the in-process run's, a dead worker's alive key, the
#: keepers' look for lost matches.
RETRY_WINDOWS = {
    "RQ retries of a job": sum(RETRY_INTERVALS_S),
    "the local run's retries": LOCAL_BACKOFF_S * (2 ** (LOCAL_ATTEMPTS - 1) - 1),
    "a worker's alive key": ALIVE_TTL_S,
    "the keepers' look for lost matches": REQUEUE_EVERY_S,
}
#: The outage: longer than every retry window (the issue's was 40 s).
OUTAGE_S = max(40.0, max(RETRY_WINDOWS.values()) + 2 * PROBE_MAX_S)
#: After the restart the season completes within this long (the workers ask the store
#: again at most PROBE_MAX_S apart; ~55 matches of ~0.3 s on 2 workers; the keepers look
#: for lost jobs every REQUEUE_EVERY_S and settle the season).
HEAL_S = 60.0
MATCHES = 60
#: Before the crash: this many matches recorded.
BEFORE = 5


def _season(store_url: str, redis: PrivateRedis, queue: str, tmp_path: Path) -> str:
    sid = f"o{uuid.uuid4().hex[:6]}"
    # Half the matches seat the slow path bot (~0.3 s a match on a quiet machine).
    slow = str(private_slow_bot(tmp_path))
    players = (
        slow,
        "house:random",
        "house:greedy",
        "house:random#2",
        "house:greedy#2",
        "house:random#3",
    )
    with Store.open(store_url) as store:
        specs = create(store, season(sid, players))
        assert len(specs) == MATCHES
        start(store, SeasonQueue(connect(redis.url), queue), sid, store_url, batch=1)
    return sid


def _wait(what: str, timeout: float, check: Callable[[], bool]) -> float:
    """Wait until ``check()`` is true (every 0.2 s, at most ``timeout``); seconds taken."""
    began = time.monotonic()
    while not check():
        if time.monotonic() - began > timeout:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.2)
    return time.monotonic() - began


def _wait_recorded(store_url: str, sid: str, matches: int) -> None:
    """Wait until ``matches`` of the season are recorded (the store's own count: reading
    it settles nothing), 60 s at most."""
    with Store.open(store_url) as store:
        _wait(f"{matches} matches recorded", 60, lambda: store.progress(sid).done >= matches)


def _season_status(store_url: str, sid: str) -> SeasonStatus | None:
    try:
        with Store.open(store_url) as store:
            row = store.season(sid)
    except Exception:  # the database is still starting: not yet
        return None
    return None if row is None else row.status


def _check_healed(store_url: str, redis: PrivateRedis, queue: str, sid: str) -> None:
    """Every match recorded once, none charged a fault, no retry spent on any job."""
    with Store.open(store_url) as store:
        recorded_once(store, sid)
        results = store.results(season_id=sid)
        assert len(results) == MATCHES
        assert [r.outcome.value for r in results] == ["completed"] * MATCHES
        assert [s.faults for r in results for s in r.seats] == [0] * (3 * MATCHES)
        assert all(store.faults(r.match_id) == [] for r in results)
        rows = store.scheduled(sid)
        assert {r.status for r in rows} == {MatchStatus.DONE}
        # No attempt was ever marked failed or retrying (the callback never ran), and only
        # the matches in flight at the crash were claimed again (a claim counts an attempt;
        # spending RQ's retries claimed a match up to 6 times).
        assert [r.detail for r in rows if "retrying" in r.detail or "Error" in r.detail] == []
        assert sum(r.attempts for r in rows) - MATCHES <= 4, [r.attempts for r in rows]
    q = SeasonQueue(connect(redis.url), queue).queue
    assert q.failed_job_registry.get_job_ids(cleanup=False) == []
    # The jobs still in Redis (finished ones stay a minute) kept every retry.
    there = [r.match_id for r in rows if Job.exists(r.match_id, connection=q.connection)]
    jobs = [Job.fetch(job_id, connection=q.connection) for job_id in there]
    assert [j.id for j in jobs if j.retries_left != JOB_RETRIES] == []


def _check_logs(workers: Workers, *, redis_too: bool) -> None:
    """Each worker wrote a line when an outage began and one when it was over, never a
    traceback nor a failed attempt, and little else besides its matches' lines."""
    for path in sorted(workers.tmp.glob("worker-*.log")):
        text = path.read_text(errors="replace")
        lines = text.splitlines()
        store = [line for line in lines if re.search(r"the store .* is unreachable", line)]
        store_over = [line for line in lines if re.search(r"the store .* answers again", line)]
        redis = [line for line in lines if re.search(r"Redis .* is unreachable", line)]
        redis_over = [line for line in lines if re.search(r"Redis .* answers again", line)]
        if redis_too:  # the store's outage may pass unseen behind Redis's
            assert len(store) <= 2 and len(store_over) == len(store), text
            assert 1 <= len(redis) <= 2 and len(redis_over) == len(redis), text
        else:
            assert 1 <= len(store) <= 2 and len(store_over) == len(store), text
            assert redis == [], text
        assert "Traceback" not in text, text
        assert "attempt failed" not in text, text
        # A keeper's sweep of bot processes other runs of the host left (another test's,
        # beside this one) is no line about this outage, nor is a keeper's count of what it
        # enqueued (one a pass, however many passes the heal took) or the season's end.
        others = [
            line
            for line in lines
            if not line.endswith(": recorded")
            and not line.endswith("of dead workers")
            and not re.search(r": \d+ matches enqueued, \d+ present$", line)
            and not re.search(r"store: season \S+ done$", line)
        ]
        assert len(others) <= 12, f"{len(others)} lines besides the matches':\n{text}"


@dataclass
class Outage:
    """One outage of the two (the database alone, or Redis and the database at once), on
    a platform of its own: a private PostgreSQL cluster and redis-server, two workers, a
    season; what was seen during the outage and how long the season took to heal."""

    redis_too: bool
    pg: PrivatePostgres
    redis: PrivateRedis
    workers: Workers
    queue: str
    sid: str = ""
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    #: Through the outage: each worker's ``poll()``, and (the database alone) RQ's queue.
    alive_during: list[int | None] = field(default_factory=list)
    failed_during: list[str] = field(default_factory=list)
    started_during: list[str] = field(default_factory=list)
    queued_during: int = 0
    finished_during: int = 0
    restarted: float = 0.0
    #: Seconds from the restart to the season done, or None if not within HEAL_S.
    healed_in: float | None = None

    def crash(self) -> None:
        if self.redis_too:
            self.redis.kill()
        self.pg.crash()

    def look(self) -> None:
        """What the outage looks like from outside (the database alone: Redis answers)."""
        self.alive_during = [p.poll() for p in self.procs]
        if self.redis_too:
            return
        q = SeasonQueue(connect(self.redis.url), self.queue).queue
        self.failed_during = q.failed_job_registry.get_job_ids(cleanup=False)
        self.started_during = q.started_job_registry.get_job_ids(cleanup=False)
        self.queued_during = len(set(q.get_job_ids()))
        self.finished_during = len(q.finished_job_registry.get_job_ids(cleanup=False))

    def restart(self) -> None:
        self.pg.start()
        if self.redis_too:
            self.redis.start()  # empty: the store says what is left to play
        self.restarted = time.monotonic()


@pytest.fixture(scope="module")
def outages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outage]]:
    """Both outages, each on its own platform, at the same time: the module waits
    OUTAGE_S once, not twice (the test command's time). Each outage is OUTAGE_S long at
    least; the seasons heal one after the other, each on its own two workers."""
    made: dict[str, Outage] = {}
    try:
        for name, redis_too in (("database", False), ("both", True)):
            tmp = tmp_path_factory.mktemp(f"outage-{name}")
            pg, redis = PrivatePostgres(), PrivateRedis()
            made[name] = outage = Outage(
                redis_too, pg, redis, Workers(tmp), f"outage-{uuid.uuid4().hex[:6]}"
            )
            pg.start()
            redis.start()
            outage.sid = _season(pg.url, redis, outage.queue, tmp)
        for outage in made.values():
            outage.procs = [
                outage.workers.start(outage.redis.url, outage.queue, "--store", outage.pg.url)
                for _ in range(2)
            ]
        for outage in made.values():
            _wait_recorded(outage.pg.url, outage.sid, BEFORE)
            outage.crash()
        time.sleep(OUTAGE_S)
        # One after the other: a season heals with the machine to itself, as if alone
        # (the second outage lasts the first one's heal longer).
        for outage in made.values():
            outage.look()
            outage.restart()
            outage.healed_in = _heal(outage)
        yield made
    finally:
        for outage in made.values():
            outage.workers.stop()
            outage.redis.kill()
            outage.pg.remove()


def _heal(outage: Outage) -> float | None:
    """Seconds from the restart to the season done, or None if not within HEAL_S."""
    while (took := time.monotonic() - outage.restarted) <= HEAL_S:
        if _season_status(outage.pg.url, outage.sid) is SeasonStatus.DONE:
            print(f"healed {took:.1f} s after the restart (Redis too: {outage.redis_too})")
            return took
        time.sleep(0.2)
    return None


def _check_outage(outage: Outage) -> None:
    """Alive through the outage, healed within HEAL_S, alive after; the workers stopped."""
    logs = outage.workers.logs()
    assert outage.alive_during == [None, None], logs
    assert outage.healed_in is not None, f"the season not done within {HEAL_S} s\n{logs}"
    _check_healed(outage.pg.url, outage.redis, outage.queue, outage.sid)
    assert [p.poll() for p in outage.procs] == [None, None], logs
    outage.workers.stop()
    _check_logs(outage.workers, redis_too=outage.redis_too)


def test_a_database_outage_longer_than_every_retry_window_heals(
    outages: dict[str, Outage],
) -> None:
    assert all(window < OUTAGE_S for window in RETRY_WINDOWS.values()), RETRY_WINDOWS
    outage = outages["database"]
    # Through the outage: the workers are alive, nothing failed, the jobs wait in the queue.
    assert outage.failed_during == [], outage.workers.logs()
    assert outage.started_during == []
    assert outage.queued_during + outage.finished_during == MATCHES
    assert outage.finished_during >= BEFORE
    _check_outage(outage)


def test_redis_and_the_database_down_at_once_heal(outages: dict[str, Outage]) -> None:
    _check_outage(outages["both"])


def test_the_keeper_enqueues_again_a_pending_match_whose_job_rq_failed_for_good(
    redis_url: str, pg_url: str, queue_name: str
) -> None:
    """RQ failed a job for good while the store was away (its callback could not mark
    the match FAILED): the store says QUEUED, Redis holds a FAILED job. The keeper's look
    enqueues it again; a RUNNING match whose claimer is alive but plays another job (its
    own job lost) too; not one whose claimer is playing it."""
    from saloon.worker.queue.keepers import lost_matches, requeue_lost
    from saloon.worker.queue.season_queue import alive_key, playing_key

    sid = f"f{uuid.uuid4().hex[:6]}"
    redis = connect(redis_url)
    queue = SeasonQueue(redis, queue_name)
    q = queue.queue
    with Store.open(pg_url) as store:
        specs = create(store, season(sid, ("house:random", "house:greedy", "house:random#2")))
        assert len(specs) >= 3
        start(store, queue, sid, pg_url, batch=1)
        failed, idle_claim, busy_claim = (s.match_id for s in specs[:3])
        # 1. RQ's last retry failed while the store was away: FAILED in Redis only (the
        # store says what the attempt before said).
        store.mark_match(failed, MatchStatus.QUEUED, "retrying after SandboxFailed: ...")
        job = Job.fetch(failed, connection=redis)
        q.remove(failed)
        with redis.pipeline() as pipe:
            job.set_status("failed", pipeline=pipe)
            q.failed_job_registry.add(job, exc_string="StoreUnavailable", pipeline=pipe)
            pipe.execute()
        # 2. Claimed by live workers, the jobs lost by Redis: one worker idle now, the
        # other still playing that match's job.
        for match, worker, playing in (
            (idle_claim, "w-idle", ""),
            (busy_claim, "w-busy", busy_claim),
        ):
            store.claim_match(match, worker)
            q.remove(match)
            Job.fetch(match, connection=redis).delete()
            redis.set(alive_key(worker), 1, ex=60)
            redis.set(playing_key(worker), playing, ex=60)
        row = store.season(sid)
        assert row is not None
        lost = {r.match_id for r in lost_matches(store, queue, row)}
        assert lost == {failed, idle_claim}
        before = store.scheduled_match(failed)
        assert before is not None and before.status is MatchStatus.QUEUED
        assert requeue_lost(store, queue, pg_url) == 2
        assert Job.fetch(failed, connection=redis).get_status() == "queued"
        assert Job.fetch(failed, connection=redis).retries_left == JOB_RETRIES
        assert {failed, idle_claim} <= set(q.get_job_ids())
        assert not Job.exists(busy_claim, connection=redis)
        assert lost_matches(store, queue, row) == []
        assert requeue_lost(store, queue, pg_url) == 0  # enqueued once


def test_the_keeper_settles_a_season_with_nothing_left_to_play(
    redis_url: str, pg_url: str, queue_name: str
) -> None:
    """A season's status does not wait for someone to read its progress: the keeper's
    look marks it done (or failed) once nothing is left to play, when the one that
    recorded or failed its last match did not (here: written to the store straight, not
    by a job, as a job that found the store away just after its write leaves it)."""
    from saloon.worker.matches.play import play_spec
    from saloon.worker.queue.jobs import run_match
    from saloon.worker.queue.keepers import requeue_lost

    queue = SeasonQueue(connect(redis_url), queue_name)
    with Store.open(pg_url) as store:
        for sid, fail in ((f"d{uuid.uuid4().hex[:6]}", False), (f"e{uuid.uuid4().hex[:6]}", True)):
            specs = create(store, season(sid, ("house:random", "house:greedy", "house:random#2")))
            start(store, queue, sid, pg_url, batch=1)
            assert requeue_lost(store, queue, pg_url) == 0
            for spec in specs:
                if fail and spec is specs[-1]:
                    store.mark_match(spec.match_id, MatchStatus.FAILED, "sandbox failed")
                elif spec is specs[-1]:
                    played = play_spec(spec)
                    store.claim_match(spec.match_id)
                    store.record_results(
                        [store.prepare_result(spec.match_id, played.record, played.stderr)]
                    )
                else:
                    run_match(spec, store)
            row = store.season(sid)
            assert row is not None and row.status is SeasonStatus.RUNNING
            requeue_lost(store, queue, pg_url)
            row = store.season(sid)
            expected = SeasonStatus.FAILED if fail else SeasonStatus.DONE
            assert row is not None and row.status is expected


def kill_and_fail(pid: int, store_url: str) -> str:
    """A job (RQ imports it by name): Redis dies under it, then its store fails it."""
    del store_url
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    raise StoreUnavailable("record 1 results: store unavailable (the test's)")


def test_a_job_failed_while_redis_was_away_too_goes_back_unspent_when_redis_returns(
    tmp_path: Path,
) -> None:
    """The store failed a job and Redis was gone too, so the worker could not put it back:
    the job waits in the worker process and goes back to the head of its queue, no retry
    spent, before the keepers would reap it as abandoned (a persistent Redis kept it
    STARTED under the worker's old name)."""
    from rq import Queue, Retry

    from saloon.worker.queue.rq_internals import put_back_unplaced
    from saloon.worker.queue.season_queue import reap_abandoned
    from saloon.worker.queue.worker import MatchWorker

    services.require("redis-server")
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    argv = ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    argv += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(tmp_path)]

    def redis_server() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait("redis-server answers", 10, lambda: _answers(url))
        return proc

    proc = redis_server()
    try:
        redis = connect(url)
        queue = Queue("unplaced", connection=redis)
        job_id = f"u{uuid.uuid4().hex[:6]}"
        retry = Retry(max=JOB_RETRIES, interval=list(RETRY_INTERVALS_S))
        queue.enqueue(kill_and_fail, proc.pid, "sqlite:///unused.db", job_id=job_id, retry=retry)
        worker = MatchWorker([queue], connection=redis, redis_url=url)
        with contextlib.suppress(RedisError):
            worker.work(burst=True, max_jobs=1)
        proc.wait(10)
        proc = redis_server()  # from its append-only file: the job still STARTED
        redis = connect(url)
        queue = Queue("unplaced", connection=redis)
        assert job_id in queue.started_job_registry.get_job_ids(cleanup=False)
        assert put_back_unplaced(redis) == [job_id]
        assert put_back_unplaced(redis) == []  # once
        job = Job.fetch(job_id, connection=redis)
        assert (job.get_status(), job.retries_left) == ("queued", JOB_RETRIES)
        assert queue.get_job_ids() == [job_id]
        assert queue.started_job_registry.get_job_ids(cleanup=False) == []
        assert reap_abandoned(queue, min_age_s=0) == []
        assert queue.failed_job_registry.get_job_ids(cleanup=False) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _answers(url: str) -> bool:
    try:
        connect(url)
    except Exception:
        return False
    return True
