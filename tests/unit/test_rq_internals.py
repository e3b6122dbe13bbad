"""RQ's internals that saloon.worker.queue.rq_internals relies on are still what it was
written against; every failure names what changed in RQ.

Static checks (the installed version and the pin, signatures, the source of the RQ
methods the overrides stand in for, attributes), then the key layout on the real Redis
(what RQ's own dequeue, execution record and job hash look like there), then the worker
itself on a few trivial jobs. Also: no other module of the project reaches into RQ.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.metadata
import inspect
import logging
import re
import tomllib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.job import Job, JobStatus

from saloon.worker.queue import rq_internals
from saloon.worker.queue.rq_internals import RQ_VERSION, PipelinedWorker

ROOT = Path(__file__).resolve().parents[2]
INSTALLED = importlib.metadata.version("rq")
#: The folders of the project's packages (saloon.<folder>).
PACKAGES = ("kits", "games", "sdk", "referee", "worker", "ratings", "arena")


def changed(thing: str) -> str:
    """The message of every check below."""
    return (
        f"RQ {INSTALLED} changed {thing}; re-check saloon.worker.queue.rq_internals "
        "before upgrading"
    )


#: The BaseWorker / SimpleWorker methods PipelinedWorker overrides, with their parameters
#: in RQ 3.0.0 (annotations left out).
OVERRIDDEN = {
    "work": (
        "(self, burst=False, logging_level=None, date_format='%H:%M:%S', "
        "log_format='%(asctime)s %(message)s', max_jobs=None, max_idle_time=None, "
        "with_scheduler=False, dequeue_strategy=<DequeueStrategy.DEFAULT: 'default'>)"
    ),
    "execute_job": "(self, job, queue)",
    "prepare_execution": "(self, job)",
    "prepare_job_execution": "(self, job, remove_from_intermediate_queue=False)",
    "handle_job_success": "(self, job, queue, started_job_registry, execution)",
    "handle_execution_ended": "(self, job, queue, heartbeat_ttl)",
    "dequeue_job_and_maintain_ttl": "(self, timeout, max_idle_time=None)",
    "check_for_suspension": "(self, burst)",
    "set_state": "(self, state, pipeline=None)",
    "heartbeat": "(self, timeout=None, pipeline=None)",
    "teardown": "(self)",
    "_install_signal_handlers": "(self)",
    "handle_exception": "(self, job, *exc_info)",
    "handle_job_failure": (
        "(self, job, queue, started_job_registry=None, exc_string='', execution=None)"
    ),
}

#: Other RQ callables rq_internals calls outside RQ's documented API, with their parameters
#: in RQ 3.0.0.
CALLED = {
    "rq.worker.SimpleWorker.get_heartbeat_ttl": "(self, job, working_time=0.0)",
    "rq.worker.BaseWorker.get_redis_server_version": "(self)",
    "rq.worker.BaseWorker.increment_successful_job_count": "(self, pipeline=None)",
    "rq.worker.BaseWorker.increment_total_working_time": "(self, job_execution_time, pipeline)",
    "rq.worker.BaseWorker.cleanup_execution": "(self, job, pipeline, execution=None)",
    "rq.worker.BaseWorker.request_stop": "(self, signum, frame)",
    "rq.job.Job._handle_success": (
        "(self, result_ttl, pipeline, worker_name='', execution_id=None, "
        "execution_started_at=None, execution_ended_at=None)"
    ),
    "rq.job.Job.prepare_for_execution": "(self, worker_name, pipeline)",
    "rq.job.Job.cleanup": "(self, ttl=None, pipeline=None, remove_from_queue=True)",
    "rq.job.Job.get_result_ttl": "(self, default_ttl)",
    "rq.job.Job.restore": "(self, raw_data)",
    "rq.job.Job.retry": "(self, queue, pipeline)",
    "rq.job.Job.set_status": "(self, status, pipeline=None)",
    "rq.executions.Execution.create": "(job, ttl, pipeline, worker_name='')",
    "rq.rate_limit.release_slot": "(job)",
    "rq.utils.now": "()",
    "rq.intermediate_queue.IntermediateQueue.get_job_ids": "(self)",
    "rq.intermediate_queue.IntermediateQueue.set_first_seen": "(self, job_id)",
    "rq.intermediate_queue.IntermediateQueue.get_first_seen": "(self, job_id)",
    "rq.intermediate_queue.IntermediateQueue.get_first_seen_key": "(self, job_id)",
    "rq.registry.StartedJobRegistry.get_job_and_execution_ids": (
        "(self, start=0, end=-1, desc=False, cleanup=True)"
    ),
    "rq.registry.ScheduledJobRegistry.get_jobs_to_schedule": (
        "(self, timestamp=None, chunk_size=1000)"
    ),
    "rq.registry.FailedJobRegistry.add": "(self, job, ttl=None, exc_string='', pipeline=None)",
    "rq.registry.BaseRegistry.get_job_ids": "(self, start=0, end=-1, desc=False, cleanup=True)",
}

#: The RQ code that PipelinedWorker's overrides stand in for or depend on the order of
#: (the call order of a job, what a success writes, what a dequeue does), as of RQ 3.0.0:
#: the first 16 hex digits of the SHA-256 of each one's source.
MIRRORED = {
    "rq.worker.BaseWorker.work": "04b5cdf8e554d8a2",
    "rq.worker.SimpleWorker.execute_job": "eae0f23110aeb280",
    "rq.worker.BaseWorker.perform_job": "1f0e40678ae519cf",
    "rq.worker.BaseWorker._finalize_success": "ef21a613e8080195",
    "rq.worker.BaseWorker._finalize_failure": "6d1b8bd1117e9641",
    "rq.worker.BaseWorker.handle_job_failure": "7432afe53b9f84ec",
    "rq.worker.BaseWorker.handle_exception": "fffd9b2925ac1432",
    "rq.worker.BaseWorker._pubsub_exception_handler": "5213e36c3b773343",
    "rq.executions.prepare_execution": "e8d5a964e2a10d0c",
    "rq.worker.BaseWorker.prepare_job_execution": "d08dd32962e3f82a",
    "rq.worker.BaseWorker.handle_job_success": "9dda7c7d3ca18ee6",
    "rq.worker.BaseWorker.handle_execution_ended": "23748b027980a6cd",
    "rq.worker.BaseWorker.dequeue_job_and_maintain_ttl": "2715cf34d9e3af3b",
    "rq.worker.BaseWorker.check_for_suspension": "e8095ae1fcf966bd",
    "rq.worker.BaseWorker.set_state": "bb8d4f1d93ff078b",
    "rq.worker.BaseWorker.heartbeat": "63b1089fd146d19c",
    "rq.worker.BaseWorker.teardown": "bfc2572817e5fbf9",
    "rq.queue.Queue.dequeue_any": "2452e56ad5197396",
    "rq.queue.Queue.lmove": "7aa797ad300b8aec",
    "rq.job.Job.refresh": "818b52b414f3efb2",
    "rq.suspension.is_suspended": "59141c583188a10f",
}

#: What the rest of the project may import from RQ: its documented API.
PUBLIC_IMPORTS = {
    "rq": {"Queue", "Retry", "Callback", "SimpleWorker", "Worker", "get_current_job"},
    "rq.job": {"Job", "JobStatus"},
    "rq.exceptions": {"NoSuchJobError", "DuplicateJobError"},
}


def resolve(dotted: str) -> Any:
    """The object at ``dotted`` (module path, then attributes), or a failed test."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                pytest.fail(changed(f"{dotted}: it is gone"))
            obj = getattr(obj, name)
        return obj
    pytest.fail(changed(f"{dotted}: its module is gone"))


def bare(fn: Callable[..., Any]) -> str:
    """``fn``'s signature without annotations (RQ's own may be strings or types)."""
    sig = inspect.signature(fn)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def test_the_installed_rq_is_the_pinned_one() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [d for d in project["optional-dependencies"]["arena"] if re.match(r"rq\b", d)]
    assert pins == [f"rq=={RQ_VERSION}"], (
        f"pyproject.toml's arena extra must pin rq=={RQ_VERSION} exactly (the release "
        f"saloon.worker.queue.rq_internals was written against), not {pins}"
    )
    lock = (ROOT / "deploy" / "constraints.txt").read_text().splitlines()
    assert f"rq=={RQ_VERSION}" in lock, "deploy/constraints.txt must lock the same rq"
    assert INSTALLED == RQ_VERSION, changed(f"its version ({RQ_VERSION} -> {INSTALLED})")


def test_every_override_is_known_and_keeps_rqs_signature() -> None:
    ours = {
        name
        for name, value in vars(PipelinedWorker).items()
        if callable(value) and not name.startswith("__") and hasattr(SimpleWorker, name)
    }
    assert ours == set(OVERRIDDEN), (
        "PipelinedWorker overrides RQ methods missing from OVERRIDDEN (or no longer "
        f"overrides some): {sorted(ours ^ set(OVERRIDDEN))}"
    )
    for name, expected in OVERRIDDEN.items():
        if not hasattr(SimpleWorker, name):
            pytest.fail(changed(f"SimpleWorker.{name} (PipelinedWorker overrides it): it is gone"))
        found = bare(getattr(SimpleWorker, name))
        assert found == expected, changed(
            f"the signature of SimpleWorker.{name}, which PipelinedWorker overrides: "
            f"{expected} -> {found}"
        )
        if name != "work":  # ours passes every argument through
            assert bare(getattr(PipelinedWorker, name)) == expected, (
                f"PipelinedWorker.{name} must take RQ's parameters {expected}"
            )


@pytest.mark.parametrize("dotted", sorted(CALLED))
def test_the_internals_called_keep_their_signature(dotted: str) -> None:
    found = bare(resolve(dotted))
    assert found == CALLED[dotted], changed(
        f"the signature of {dotted}: {CALLED[dotted]} -> {found}"
    )


def test_the_rq_code_the_overrides_stand_in_for_is_unchanged() -> None:
    moved = []
    for dotted, digest in MIRRORED.items():
        source = inspect.getsource(resolve(dotted))
        if hashlib.sha256(source.encode()).hexdigest()[:16] != digest:
            moved.append(dotted)
    assert moved == [], changed(f"the code of {', '.join(moved)}")


def test_the_private_and_undocumented_attributes_are_there() -> None:
    redis = Redis()  # never connects: nothing below talks to Redis
    queue = Queue("rq-internals", connection=redis)
    worker = SimpleWorker([queue], connection=redis, prepare_for_work=False)
    for name in ("_state", "_stop_requested", "executions", "default_result_ttl"):
        assert hasattr(worker, name), changed(f"the worker attribute {name}: it is gone")
    for name in ("pubsub_thread", "max_connection_wait_time"):
        assert hasattr(worker, name), changed(f"the worker attribute {name}: it is gone")
    for name in ("last_heartbeat", "key", "job_class", "queue_class", "serializer", "log"):
        assert hasattr(worker, name), changed(f"the worker attribute {name}: it is gone")
    assert isinstance(worker.executions, dict), changed("BaseWorker.executions: not a dict")
    job = Job("rq-internals-job", connection=redis)
    for name in ("_status", "key", "repeats_left", "redis_server_version", "ended_at"):
        assert hasattr(job, name), changed(f"the job attribute {name}: it is gone")
    for name in ("last_heartbeat", "retries_left", "worker_name", "started_at", "origin"):
        assert hasattr(job, name), changed(f"the job attribute {name}: it is gone")
    for name in ("key", "intermediate_queue_key", "intermediate_queue"):
        assert hasattr(queue, name), changed(f"the queue attribute {name}: it is gone")
    from rq.worker import WorkerStatus

    assert (WorkerStatus.IDLE, WorkerStatus.BUSY) == ("idle", "busy"), changed("WorkerStatus")


def test_the_key_layout_is_what_the_lua_and_the_keepers_assume() -> None:
    from rq.suspension import WORKERS_SUSPENDED
    from rq.worker_registration import WORKERS_BY_QUEUE_KEY

    redis = Redis()
    queue = Queue("q1", connection=redis)
    layout = {
        "queue key": (queue.key, "rq:queue:q1"),
        "intermediate queue key": (queue.intermediate_queue_key, "rq:queue:q1:intermediate"),
        "IntermediateQueue.key": (queue.intermediate_queue.key, "rq:queue:q1:intermediate"),
        "first-seen key": (
            queue.intermediate_queue.get_first_seen_key("j"),
            "rq:queue:q1:intermediate:first_seen:j",
        ),
        "started registry key": (queue.started_job_registry.key, "rq:wip:q1"),
        "scheduled registry key": (queue.scheduled_job_registry.key, "rq:scheduled:q1"),
        "failed registry key": (queue.failed_job_registry.key, "rq:failed:q1"),
        "job key prefix": (Job.redis_job_namespace_prefix, "rq:job:"),
        "job key": (Job("j", connection=redis).key, "rq:job:j"),
        "suspension flag key": (WORKERS_SUSPENDED, "rq:suspended"),
        "queue's worker set key": (WORKERS_BY_QUEUE_KEY % "q1", "rq:workers:q1"),
    }
    for thing, (found, expected) in layout.items():
        assert found == expected, changed(f"the {thing}: {expected!r} -> {found!r}")


def trivial(tag: str) -> str:
    """A job of this module (RQ imports it by name)."""
    return tag


@pytest.fixture
def queue(redis_url: str) -> Iterator[Queue]:
    redis = Redis.from_url(redis_url)
    q = Queue(f"test-rqi-{uuid.uuid4().hex[:8]}", connection=redis)
    yield q
    from saloon.worker.queue.season_queue import SeasonQueue

    SeasonQueue(redis, q.name).purge()
    redis.close()


def test_rqs_dequeue_parks_a_job_where_the_keepers_look(queue: Queue) -> None:
    job = queue.enqueue(trivial, "a", job_id=f"rqi-{uuid.uuid4().hex[:6]}")
    got = Queue.dequeue_any([queue], None, connection=queue.connection)
    assert got is not None and got[0].id == job.id
    assert queue.get_job_ids() == [], changed("its dequeue: the id stays in the queue")
    assert rq_internals.popped_job_ids(queue) == [job.id], changed(
        "its dequeue: the id is not moved (LMOVE) to the intermediate queue"
    )
    assert rq_internals.take_popped(queue, job.id) and not rq_internals.take_popped(
        queue, job.id
    ), changed("the intermediate queue: a list the keepers LREM from")


def test_a_job_hash_read_whole_restores_the_job(queue: Queue) -> None:
    job = queue.enqueue(trivial, "b", job_id=f"rqi-{uuid.uuid4().hex[:6]}", result_ttl=60)
    flat = queue.connection.hgetall(Job.redis_job_namespace_prefix + job.id)
    restored = Job(job.id, connection=queue.connection)
    restored.restore(flat)
    fetched = Job.fetch(job.id, connection=queue.connection)
    for field in ("func_name", "args", "origin", "timeout", "result_ttl", "retries_left"):
        assert getattr(restored, field) == getattr(fetched, field), changed(
            f"the job hash: HGETALL + Job.restore no longer gives the job's {field}"
        )
    assert restored.get_status(refresh=False) == JobStatus.QUEUED, changed("the job hash")


def test_the_started_registry_holds_job_colon_execution(queue: Queue) -> None:
    job = queue.enqueue(trivial, "c", job_id=f"rqi-{uuid.uuid4().hex[:6]}")
    with queue.connection.pipeline() as pipe:
        execution = Execution.create(job, 60, pipe, "rqi-worker")
        pipe.execute()
    assert re.fullmatch(r"[0-9a-f]{32}", execution.id), changed(
        f"the execution id format (32 hex digits, no ':'): {execution.id!r}"
    )
    members = [m.decode() for m in queue.connection.zrange(queue.started_job_registry.key, 0, -1)]
    assert members == [f"{job.id}:{execution.id}"], changed(
        f"the started registry's members (<job id>:<execution id>): {members}"
    )
    assert rq_internals.drop_started(queue, job.id) == 1, changed("the started registry")
    assert queue.started_job_registry.get_job_ids(cleanup=False) == []


def test_the_worker_plays_jobs_and_leaves_nothing_behind(queue: Queue) -> None:
    ids = [f"rqi-{uuid.uuid4().hex[:6]}-{k}" for k in range(4)]
    for job_id in ids:
        queue.enqueue(trivial, job_id, job_id=job_id, result_ttl=60)
    worker = PipelinedWorker([queue], connection=queue.connection)
    worker.work(burst=True)
    assert worker.jobs_played == 4
    statuses = [Job.fetch(i, connection=queue.connection).get_status() for i in ids]
    assert statuses == [JobStatus.FINISHED] * 4, changed(f"a job's cycle: {statuses}")
    assert [Job.fetch(i, connection=queue.connection).return_value() for i in ids] == ids
    left = (
        queue.get_job_ids(),
        rq_internals.popped_job_ids(queue),
        queue.started_job_registry.get_job_ids(cleanup=False),
    )
    assert left == ([], [], []), changed(f"a job's cycle: left queued/popped/started {left}")


class Away(Exception):
    """What a job below raises: the platform away (for the worker that puts it back)."""


def away(tag: str) -> str:
    """A job of this module that fails as if the platform were away."""
    raise Away(tag)


class PutsBack(PipelinedWorker):
    def puts_back(self, job: Job, exc: BaseException | None) -> bool:
        return isinstance(exc, Away)


def test_a_job_failed_by_the_platform_goes_back_to_the_head_of_its_queue_unspent(
    queue: Queue, caplog: pytest.LogCaptureFixture
) -> None:
    from rq import Retry

    first, second = (f"rqi-{uuid.uuid4().hex[:6]}-{k}" for k in range(2))
    queue.enqueue(away, "a", job_id=first, retry=Retry(max=3, interval=[1, 1, 1]))
    queue.enqueue(trivial, "b", job_id=second, result_ttl=60)
    worker = PutsBack([queue], connection=queue.connection)
    with caplog.at_level(logging.DEBUG, logger="rq.worker"):
        worker.work(burst=True, max_jobs=1)
    job = Job.fetch(first, connection=queue.connection)
    assert job.get_status() == JobStatus.QUEUED, changed(f"a failed job's path: {job}")
    assert job.retries_left == 3, "putting a job back spent one of its retries"
    assert queue.get_job_ids() == [first, second], "the job did not go back to the head"
    left = (
        rq_internals.popped_job_ids(queue),
        queue.started_job_registry.get_job_ids(cleanup=False),
        queue.failed_job_registry.get_job_ids(cleanup=False),
        queue.scheduled_job_registry.get_job_ids(cleanup=False),
    )
    assert left == ([], [], [], []), changed(f"a failed job's path: left {left}")
    assert "Traceback" not in caplog.text and "Away" not in caplog.text, caplog.text
    # A failure the worker does not claim is RQ's: a retry spent, its traceback logged.
    worker = PipelinedWorker([queue], connection=queue.connection)
    with caplog.at_level(logging.DEBUG, logger="rq.worker"):
        worker.work(burst=True, max_jobs=1)
    job = Job.fetch(first, connection=queue.connection)
    assert (job.get_status(), job.retries_left) == (JobStatus.SCHEDULED, 2)
    assert "Traceback" in caplog.text


def test_the_reconnect_line_handed_to_the_worker_is_rqs() -> None:
    from rq.worker import BaseWorker

    source = inspect.getsource(BaseWorker.dequeue_job_and_maintain_ttl)
    lost: list[str] = []

    class Quiet(PipelinedWorker):
        def on_redis_lost(self, reason: str) -> None:
            lost.append(reason)

    redis = Redis()  # never connects
    worker = Quiet([Queue("rq-internals", connection=redis)], connection=redis)
    quiet = rq_internals._ReconnectLines(worker)  # (not installed: a worker's work does)
    line = rq_internals._RQ_RECONNECT_LINE + ": %s retrying in %d seconds..."
    assert line in source, changed("the line of its dequeue loop's reconnect")
    record = logging.LogRecord(
        "rq.worker", logging.ERROR, __file__, 1, line, ("w", "refused", 1), None
    )
    assert not quiet.filter(record) and lost == ["refused"]
    # The work loop's "unhandled exception" is handed over only when it is Redis lost.
    from redis.exceptions import ConnectionError as RedisConnectionError
    from rq.worker import BaseWorker as Base

    line = rq_internals._RQ_UNHANDLED_LINE
    assert repr(line) in inspect.getsource(Base.work), changed("its work loop's last resort")
    for exc, handed in ((RedisConnectionError("gone"), True), (ValueError("bug"), False)):
        info = (type(exc), exc, None)
        record = logging.LogRecord("rq.worker", logging.ERROR, __file__, 1, line, ("w",), info)
        assert quiet.filter(record) is not handed
    assert lost == ["refused", "ConnectionError: gone"]


def test_job_statuses_reads_what_get_status_says(queue: Queue) -> None:
    done, waiting = (f"rqi-{uuid.uuid4().hex[:6]}-{k}" for k in range(2))
    queue.enqueue(trivial, "d", job_id=done, result_ttl=60)
    PipelinedWorker([queue], connection=queue.connection).work(burst=True)
    queue.enqueue(trivial, "w", job_id=waiting)
    found = rq_internals.job_statuses(queue.connection, [done, waiting, "rqi-none"])
    expected = [Job.fetch(i, connection=queue.connection).get_status() for i in (done, waiting)]
    assert found == [*expected, None], changed("where a job's status is kept")
    assert expected == [JobStatus.FINISHED, JobStatus.QUEUED]


def _rq_uses(path: Path) -> list[str]:
    """What ``path`` takes from RQ beyond PUBLIC_IMPORTS, and RQ key names it spells."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "rq" and a.name != "rq"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rq":
            allowed = PUBLIC_IMPORTS.get(node.module or "", set())
            found += [f"{node.module}.{a.name}" for a in node.names if a.name not in allowed]
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value.startswith("rq:")
        ):
            found.append(f"the key name {node.value!r}")
    return found


def test_no_other_module_reaches_into_rq() -> None:
    inside = Path(inspect.getfile(rq_internals)).resolve()
    uses = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.resolve() != inside and (found := _rq_uses(path)):
                uses[str(path.relative_to(ROOT))] = found
    assert uses == {}, (
        f"only saloon.worker.queue.rq_internals may use RQ beyond its documented API: {uses}"
    )
