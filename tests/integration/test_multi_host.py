"""Workers on other hosts, rehearsed on this machine (docs/operator-guide.md, "Rehearsing
it on one machine"; ``bash deploy/dev.sh rehearse`` runs this with its output shown).

Two worker containers of the platform image (built offline by deploy/dev.sh), each with a
host name of its own, reach this host's Redis, a PostgreSQL schema of this test's own and
the Docker engine through its socket, as compose.yaml gives them (the differences are in
tests/integration/rehearsal.py). A season of the slow path bot in the Docker sandbox
against house bots; one worker container is ``docker kill``-ed while it plays a match.
Then every scheduled match has exactly one result, the killed match was played again and
the season finished with no one acting, and the dead worker's bot containers are removed
by the survivor's sweep (they carry ``saloon.parent=<the dead worker's container id>``).

Everything it starts is removed by id at the end (containers, the bot image its unique bot
made, its volume), with its schema and its queue's keys.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from rq import Worker
from rq.job import Job

from saloon.worker.queue.season_queue import SeasonQueue, alive_key, connect
from saloon.worker.seasons.run import progress
from saloon.worker.store.rows import MatchStatus, SeasonStatus
from saloon.worker.store.store import Store
from tests import services
from tests.databases import postgres_schema

from .rehearsal import SEASON_MATCHES, Rehearsal

ROOT = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).parent / "bots"
#: Bounds (seconds) of each phase; each takes a few seconds here (see the guide).
FIRST_MATCH_S = 90  # the first match of each worker builds the bot's image
SEASON_S = 120
SWEEP_S = 30

# It asserts that the surviving worker swept the killed one's bot containers: any Docker
# sandbox opened on this engine meanwhile (another test's) would sweep them first.
pytestmark = pytest.mark.exclusive


def say(text: str) -> None:
    """Shown with -s (deploy/dev.sh rehearse), and in the captured output of a failure."""
    print(f"rehearsal: {text}", file=sys.stderr, flush=True)


def docker(argv: Sequence[str], timeout: float = 120, show: bool = True) -> str:
    """Run a docker command, say it, and return its stdout (AssertionError when it fails)."""
    if show:
        say("$ " + " ".join(argv))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"{' '.join(argv)} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def platform_image() -> str:
    """The platform image of this checkout's code (deploy/dev.sh builds it when missing)."""
    services.require("docker")
    tag = subprocess.run(
        ["bash", str(ROOT / "deploy/platform-image/source-hash.sh"), "--tag"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    found = subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False)
    if found.returncode != 0:
        reason = f"the platform image {tag} is not built (bash deploy/dev.sh test builds it)"
        if services.in_ci():
            pytest.fail(f"CI=true and {reason}", pytrace=False)
        pytest.skip(f"SKIPPED, NEEDS THE PLATFORM IMAGE: {reason}")
    return tag


def docker_client() -> Any:
    import docker as docker_sdk

    return docker_sdk.from_env(timeout=60)


class Started:
    """What the rehearsal made in the engine, removed by id (or its own name) at the end."""

    def __init__(self, rehearsal: Rehearsal) -> None:
        self.rehearsal = rehearsal
        self.workers: list[str] = []
        self.volume = False
        #: The versions of the bot images the workers built (its bot is unique to the run).
        self.bot_versions: set[str] = set()

    def logs(self, workers: Sequence[str] | None = None) -> str:
        out = []
        for worker in self.workers if workers is None else workers:
            done = subprocess.run(
                ["docker", "logs", "--tail", "60", worker], capture_output=True, text=True
            )
            out.append(f"--- worker {worker[:12]}:\n{done.stdout}{done.stderr}")
        return "\n".join(out)

    def remove(self) -> None:
        client = docker_client()
        try:
            # The survivor stops as an operator stops it (SIGTERM: it removes its own bot
            # containers and leaves RQ's worker set); then every container by id.
            for worker in self.workers:
                with contextlib.suppress(Exception):  # gone already: fine
                    if client.api.inspect_container(worker)["State"]["Running"]:
                        client.api.stop(worker, timeout=15)
            leftovers = []
            for worker in self.workers:
                found = client.api.containers(
                    all=True, filters={"label": [f"saloon.parent={worker}"]}
                )
                leftovers += [c["Id"] for c in found]
                self.bot_versions |= {c["Labels"].get("saloon.bot.version", "") for c in found} - {
                    ""
                }
            for container in [*leftovers, *self.workers]:
                with contextlib.suppress(Exception):  # gone already: fine
                    client.api.remove_container(container, v=True, force=True)
            if self.volume:
                with contextlib.suppress(Exception):  # gone already: fine
                    client.api.remove_volume(self.rehearsal.volume, force=True)
            for version in self.bot_versions:
                images = client.api.images(
                    all=True, filters={"label": [f"saloon.bot.version={version}"]}
                )
                for image in images:
                    with contextlib.suppress(Exception):  # gone already: fine
                        client.api.remove_image(image["Id"], force=True)
        finally:
            client.close()


def forget_workers(redis: Any, queue: str, hostnames: set[str]) -> None:
    """Drop RQ's and the keeper's keys of the rehearsal's workers (a killed worker's
    registration would stay for minutes, a stopped one's for a minute)."""
    from redis.exceptions import ResponseError

    prefix = Worker.redis_worker_namespace_prefix
    for key in redis.scan_iter(prefix + "*"):
        with contextlib.suppress(ResponseError):  # not a worker's hash
            host = redis.hget(key, "hostname")
            if host is not None and host.decode() in hostnames:
                redis.srem(Worker.redis_workers_keys, key)
                redis.delete(key, alive_key(key.decode().removeprefix(prefix)))
    redis.delete(f"saloon:requeue:{queue}")


@pytest.fixture
def rehearsal(tmp_path: Path, redis_url: str) -> Iterator[tuple[Rehearsal, Started]]:
    services.require("postgres")
    platform = platform_image()
    run = f"rehearsal-{uuid.uuid4().hex[:8]}"
    bots = tmp_path / "bots"
    bots.mkdir()
    # The slow path bot, made unique to this run: its image is this run's to remove.
    slow = (BOTS / "slow_random.py").read_text() + f"\n# {run}\n"
    (bots / "slow.py").write_text(slow)
    bots.chmod(0o755)
    tmp_path.chmod(0o755)
    with postgres_schema("rehearsal") as store:
        r = Rehearsal(platform, run, str(bots), store, redis_url, run, run)
        started = Started(r)
        try:
            yield r, started
        finally:
            try:
                started.remove()
            finally:
                redis = connect(redis_url)
                SeasonQueue(redis, r.queue).purge()
                forget_workers(redis, r.queue, {r.hostname("a"), r.hostname("b")})


def playing_on(redis: Any, queue: SeasonQueue, season: str, hostname: str) -> str | None:
    """The match worker ``hostname`` started less than 0.6 s ago (~1.5 s each here)."""
    for job_id in queue.running(season):
        job = Job.fetch(job_id, connection=redis)
        found = redis.hget(
            Worker.redis_worker_namespace_prefix + (job.worker_name or ""), "hostname"
        )
        age = time.time() - job.started_at.timestamp() if job.started_at else 9.0
        if found is not None and found.decode() == hostname and age < 0.6:
            return job_id
    return None


def test_workers_on_two_hosts_one_killed_mid_match(
    rehearsal: tuple[Rehearsal, Started], redis_url: str
) -> None:
    r, started = rehearsal
    redis = connect(redis_url)
    queue = SeasonQueue(redis, r.queue)
    client = docker_client()
    t0 = time.monotonic()

    # The season, made and enqueued by one-off commands of the platform image.
    docker(r.create_volume())
    started.volume = True
    docker(r.create())
    docker(r.start())
    t_season = time.monotonic()

    # Two workers, each on a host of its own.
    for name in ("a", "b"):
        started.workers.append(docker(r.worker(name)).strip())
    victim, survivor = started.workers
    for worker, name in zip(started.workers, "ab", strict=True):
        assert client.api.inspect_container(worker)["Config"]["Hostname"] == r.hostname(name)

    # Kill worker a (SIGKILL) while its bot container plays a match.
    deadline = time.monotonic() + FIRST_MATCH_S
    killed_match, orphans = None, []
    while killed_match is None:
        assert time.monotonic() < deadline, f"worker a started no match\n{started.logs()}"
        match = playing_on(redis, queue, r.season, r.hostname("a"))
        if match is not None:
            running = client.api.containers(filters={"label": [f"saloon.parent={victim}"]})
            if running:
                docker(r.kill(victim))
                killed_match, orphans = match, running
                break
        time.sleep(0.02)
    t_kill = time.monotonic()
    shown = [c["Id"][:12] for c in orphans]
    say(f"killed worker a mid-match {killed_match}; its bot containers {shown}")
    # Its bot containers name it as their parent, and its host name as theirs.
    for c in orphans:
        assert c["Labels"]["saloon.host"] == r.hostname("a"), c["Labels"]
        started.bot_versions.add(c["Labels"]["saloon.bot.version"])
    orphan_ids = {c["Id"] for c in orphans}

    # The survivor reaps the killed match, plays the rest and sweeps a's bot containers,
    # with no one acting: the store is read here, nothing is reaped or enqueued.
    with Store.open(r.store) as store:
        swept_at = done_at = None
        polls = 0
        deadline = time.monotonic() + SEASON_S
        while swept_at is None or done_at is None:
            assert time.monotonic() < deadline, (
                f"season {progress(store, r.season)}, swept {swept_at}\n{started.logs()}"
            )
            if swept_at is None:
                listed = docker(r.bot_containers(victim), show=polls == 0)
                polls += 1
                left = set(listed.split()) & orphan_ids
                if not left and not client.api.containers(
                    all=True, filters={"label": [f"saloon.parent={victim}"]}
                ):
                    swept_at = time.monotonic()
            p = progress(store, r.season)
            if done_at is None and p.finished and p.status is SeasonStatus.DONE:
                done_at = time.monotonic()
            time.sleep(0.5)
        assert swept_at - t_kill < SWEEP_S
        status = docker(r.status())
        assert f"({SeasonStatus.DONE.value}): {SEASON_MATCHES} done, 0 running, 0 failed" in status

        # Every scheduled match recorded exactly once; the killed one played again.
        scheduled = store.scheduled(r.season)
        assert len(scheduled) == SEASON_MATCHES
        assert {m.status for m in scheduled} == {MatchStatus.DONE}
        results = store.results(season_id=r.season)
        assert sorted(x.match_id for x in results) == sorted(m.match_id for m in scheduled)
        assert rows(store, "results") == rows(store, "match_records") == SEASON_MATCHES
        assert rows(store, "result_seats") == 3 * SEASON_MATCHES
        assert [s.faults for x in results for s in x.seats] == [0] * 3 * SEASON_MATCHES
        killed = store.scheduled_match(killed_match)
        assert killed is not None and killed.attempts >= 2
        season_row = store.season(r.season)
        assert season_row is not None and season_row.status is SeasonStatus.DONE
    # Worker b did it: it re-enqueued the abandoned match and removed a's containers.
    logs = started.logs([survivor])
    assert f"re-enqueued abandoned match {killed_match}" in logs, logs
    assert "bot process(es) or container(s) of dead workers" in logs, logs
    client.close()
    t_end = time.monotonic()
    say(
        f"phases: season created and started {t_season - t0:.1f} s, workers up to the kill "
        f"{t_kill - t_season:.1f} s, kill to all {SEASON_MATCHES} recorded "
        f"{done_at - t_kill:.1f} s, kill to swept {swept_at - t_kill:.1f} s, "
        f"total {t_end - t0:.1f} s"
    )


def rows(store: Store, table: str) -> int:
    """Rows of ``table`` in the test's schema (it holds this season only)."""
    import sqlalchemy as sa

    with store.engine.connect() as conn:
        return int(conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one())
