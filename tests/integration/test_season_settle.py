"""A season's state is changed by whoever records or watches, never by a reader (issue 31).

The job that records (or fails) a season's last match settles it: its status reads done,
or failed, straight from the store with no one asking for its progress first. And
``progress()`` is a read: it writes nothing to the store (every statement a SELECT, the
season's row unchanged, even for a season with nothing left to play and not settled yet)
and nothing to Redis (a job a worker popped and never started is left where it is for
the keepers). SQLite and PostgreSQL; a few house-bot matches (~2 s in all).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from saloon.worker.matches.play import play_spec
from saloon.worker.matches.spec import MatchSpec
from saloon.worker.queue.jobs import JobOutcome, run_batch, run_match
from saloon.worker.queue.season_queue import SeasonQueue, connect
from saloon.worker.seasons.run import create, progress, start
from saloon.worker.seasons.schedule import SeasonSpec
from saloon.worker.store import schema as t
from saloon.worker.store.rows import MatchStatus, SeasonStatus
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

from .season_fixtures import queue_name

__all__ = ["queue_name"]

HOUSE = ("house:random", "house:greedy", "house:random#2")


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "settle.db")
        return
    with postgres_schema("settle") as url:
        yield url


def _season(season_id: str, participants: tuple[str, ...] = HOUSE) -> SeasonSpec:
    return SeasonSpec(
        season_id=season_id, game="seas-of-strife-v1", participants=participants, seats=3, seed=3
    )


def _raw(store: Store, season_id: str) -> tuple[str, Any]:
    """The season's row as stored (status, updated_at): a plain SELECT, no progress()."""
    se = t.seasons
    with store.read("test") as conn:
        row = conn.execute(
            sa.select(se.c.status, se.c.updated_at).where(se.c.season_id == season_id)
        ).one()
    return str(row.status), row.updated_at


def _running(store: Store, season_id: str) -> list[MatchSpec]:
    specs = create(store, _season(season_id))
    store.set_season_status(season_id, SeasonStatus.RUNNING)  # as a start or a local run
    return specs


def test_the_job_that_records_the_last_match_settles_its_season(store_url: str) -> None:
    with Store.open(store_url) as store:
        one = f"one-{uuid.uuid4().hex[:6]}"
        specs = _running(store, one)
        for spec in specs[:-1]:
            assert run_match(spec, store, worker="w") is JobOutcome.RECORDED
            assert _raw(store, one)[0] == SeasonStatus.RUNNING.value  # matches left to play
        assert run_match(specs[-1], store, worker="w") is JobOutcome.RECORDED
        assert _raw(store, one)[0] == SeasonStatus.DONE.value
        assert run_match(specs[-1], store) is JobOutcome.DUPLICATE  # settled once, stays
        assert _raw(store, one)[0] == SeasonStatus.DONE.value

        batch = f"batch-{uuid.uuid4().hex[:6]}"
        specs = _running(store, batch)
        assert run_batch(specs[:-1], store) == [JobOutcome.RECORDED] * (len(specs) - 1)
        assert _raw(store, batch)[0] == SeasonStatus.RUNNING.value
        assert run_batch(specs[-1:], store) == [JobOutcome.RECORDED]
        assert _raw(store, batch)[0] == SeasonStatus.DONE.value


def test_a_batch_job_with_a_refused_match_records_the_rest_and_fails_the_season(
    store_url: str,
) -> None:
    """A seat naming a bot the store does not have: the batch job refuses those matches
    (FAILED, never retried), records the others, and, nothing being left to play, the
    season is failed. (Regression: a refused match in a batch raised UnboundLocalError,
    its ``played`` never bound, and the whole batch failed.)"""
    with Store.open(store_url) as store:
        sid = f"ghost-{uuid.uuid4().hex[:6]}"
        ghost = ("house:random", "house:greedy", "house:random#2", "bot:ghost@v1")
        specs = create(store, _season(sid, ghost))
        store.set_season_status(sid, SeasonStatus.RUNNING)
        outcomes = run_batch(specs, store)
        assert JobOutcome.REFUSED in outcomes and JobOutcome.RECORDED in outcomes
        assert _raw(store, sid)[0] == SeasonStatus.FAILED.value


def test_progress_writes_nothing_to_the_store_or_redis(
    store_url: str, redis_url: str, queue_name: str
) -> None:
    """A season whose matches are all recorded but whose status is not settled yet (its
    last result written by the store straight, as a job that lost the store just after
    its write leaves it), and a job popped from the queue by no worker: progress() reads
    them as they are and changes neither."""
    redis = connect(redis_url)
    queue = SeasonQueue(redis, queue_name)
    with Store.open(store_url) as store:
        sid = f"read-{uuid.uuid4().hex[:6]}"
        specs = create(store, _season(sid))
        start(store, queue, sid, store_url, batch=1)
        for spec in specs:
            played = play_spec(spec)
            store.record_results(
                [store.prepare_result(spec.match_id, played.record, played.stderr)]
            )
        popped = redis.lmove(queue.queue.key, queue.queue.intermediate_queue.key)
        assert popped is not None
        before = _raw(store, sid)
        keys = _redis_state(redis, queue_name, sid)

        statements: list[str] = []

        def seen(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
            statements.append(statement)

        sa.event.listen(store.engine, "before_cursor_execute", seen)
        try:
            p = progress(store, sid, queue)
            plain = progress(store, sid)
        finally:
            sa.event.remove(store.engine, "before_cursor_execute", seen)

        assert p.finished and p.done == len(specs) and p.status is SeasonStatus.RUNNING
        assert plain == p
        verbs = {s.split(None, 1)[0].upper() for s in statements}
        assert verbs == {"SELECT"} or verbs == {"BEGIN", "SELECT"}, statements  # SQLite's BEGIN
        assert "BEGIN IMMEDIATE" not in statements  # no write transaction either
        assert _raw(store, sid) == before
        assert _redis_state(redis, queue_name, sid) == keys
        assert {r.status for r in store.scheduled(sid)} == {MatchStatus.DONE}


def _redis_state(redis: Any, queue_name: str, season_id: str) -> dict[bytes, bytes | None]:
    """Every Redis key of the queue and of the season's jobs, with its serialized value."""
    found = {
        key: redis.dump(key)
        for key in redis.scan_iter(match="rq:*", count=1000)
        if queue_name.encode() in key or season_id.encode() in key
    }
    assert found  # the queue's keys and the season's jobs
    return found
