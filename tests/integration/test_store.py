"""The results store, one conformance suite run on both backends (SQLite and PostgreSQL).

PostgreSQL tests work in a schema of their own (tests/databases.py), dropped after the
module; every test starts from empty tables.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import zstandard
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from saloon.referee.faults import Fault, FaultKind
from saloon.referee.limits import MatchLimits
from saloon.referee.record import MatchRecord, SeatInfo
from saloon.worker.errors import (
    BotNameTaken,
    InvalidRecord,
    InvalidSchedule,
    SeasonConflict,
    StoreError,
    StoreUnavailable,
    UnknownBot,
    UnknownMatch,
    UnknownSeason,
)
from saloon.worker.store.config import StoreConfig
from saloon.worker.store.engine import create_engine, current_revision, head_revision
from saloon.worker.store.schema import (
    SCHEMA_REVISION,
    bots,
    match_records,
    metadata,
    result_seats,
)
from saloon.worker.store.schema import results as result_rows
from saloon.worker.store.store import (
    HeldConnection,
    MatchStatus,
    Outcome,
    ScheduledMatch,
    SeasonStatus,
    Store,
)
from tests.databases import postgres_schema

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """One database per backend for the module."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('store')}/saloon.db"
    else:
        with postgres_schema("store") as url:
            yield url


@pytest.fixture(scope="module")
def module_store(store_url: str) -> Iterator[Store]:
    store = Store.open(store_url)
    yield store
    store.close()


@pytest.fixture
def store(module_store: Store) -> Iterator[Store]:
    """The module's store, emptied after each test."""
    yield module_store
    with module_store.engine.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())


def record(
    match_id: str,
    *,
    game: str = "seas-of-strife-v1",
    bots: tuple[str, ...] = ("bot:alpha@v1", "house:random"),
    faults: tuple[Fault, ...] = (),
    played_out: tuple[int, ...] = (),
    scores: tuple[float, ...] | None = None,
    ranks: tuple[int, ...] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid match record of ``match_id`` (extra keys such as outcome added as given)."""
    n = len(bots)
    raw = MatchRecord(
        match_id=match_id,
        game=game,
        options={"target": 50},
        seed=7,
        seats=[SeatInfo(i, b, "sha256:0123456789abcdef") for i, b in enumerate(bots)],
        limits=MatchLimits(),
        faults=list(faults),
        played_out=list(played_out),
        scores=list(scores if scores is not None else [float(10 * i) for i in range(n)]),
        ranks=list(ranks if ranks is not None else list(reversed(range(n)))),
    ).to_json()
    raw.update(extra)
    return raw


def schedule(season: str, n: int) -> list[ScheduledMatch]:
    return [ScheduledMatch(f"{season}-{i}", i, {"seed": 100 + i}) for i in range(n)]


# -- opening and migrations -----------------------------------------------------------


def test_open_migrates_to_head_and_the_tables_match_the_schema_module(store: Store) -> None:
    assert head_revision() == SCHEMA_REVISION
    with store.engine.connect() as conn:
        assert current_revision(conn) == SCHEMA_REVISION
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []


def test_a_second_open_of_a_migrated_store_sees_the_same_data(store: Store, store_url: str) -> None:
    store.add_bot("alpha", "alice")
    with Store.open(store_url) as again:
        assert [b.name for b in again.bots()] == ["alpha"]


# -- bots and versions ----------------------------------------------------------------


def test_add_bot_is_idempotent_for_its_owner_and_refuses_another(store: Store) -> None:
    first = store.add_bot("alpha", "alice")
    assert store.add_bot("alpha", "alice") == first
    with pytest.raises(BotNameTaken, match="alpha"):
        store.add_bot("alpha", "mallory")
    assert store.bot("alpha") == first
    assert store.bot("nobody") is None


def test_bots_are_listed_by_name_bytewise_on_both_backends(store: Store) -> None:
    for name in ("beta", "Zed", "alpha", "a-b", "a_b"):
        store.add_bot(name, "owner")
    assert [b.name for b in store.bots()] == ["Zed", "a-b", "a_b", "alpha", "beta"]


def test_versions_are_idempotent_numbered_and_oldest_first(store: Store) -> None:
    store.add_bot("alpha", "alice")
    v1 = store.add_version("alpha", "sha256:aa", {"files": 3})
    v2 = store.add_version("alpha", "sha256:bb")
    again = store.add_version("alpha", "sha256:aa", {"files": 99})
    assert (v1.seq, v2.seq) == (1, 2)
    assert again == v1  # the first meta is kept
    assert [v.version for v in store.versions("alpha")] == ["sha256:aa", "sha256:bb"]
    assert store.versions("alpha")[0].meta == {"files": 3}
    assert v1.created_at <= v2.created_at
    assert store.versions("nobody") == []
    with pytest.raises(UnknownBot):
        store.add_version("nobody", "v1")


# -- seasons and schedules ------------------------------------------------------------


def test_create_season_is_idempotent_and_refuses_a_different_spec(store: Store) -> None:
    spec = {"game": "seizure-v1", "rounds": 2, "seats": (4,)}
    assert store.create_season("s1", spec, schedule("s1", 3)) is True
    assert store.create_season("s1", {"game": "seizure-v1", "rounds": 2, "seats": [4]}, []) is False
    with pytest.raises(SeasonConflict, match="different spec"):
        store.create_season("s1", {"game": "seizure-v1", "rounds": 3}, schedule("s1", 3))
    row = store.season("s1")
    assert row is not None
    assert (row.game, row.status, row.spec["seats"]) == ("seizure-v1", SeasonStatus.CREATED, [4])
    assert len(store.scheduled("s1")) == 3


def test_a_season_whose_match_id_clashes_is_not_written_at_all(store: Store) -> None:
    store.create_season("s1", {"game": "g"}, schedule("s1", 2))
    clash = [ScheduledMatch("s2-0", 0, {}), ScheduledMatch("s1-1", 1, {})]
    with pytest.raises(SeasonConflict, match="another season"):
        store.create_season("s2", {"game": "g"}, clash)
    assert store.season("s2") is None  # one transaction: no half-made season


@pytest.mark.parametrize(
    ("spec", "matches", "message"),
    [
        ({"rounds": 1}, [], "game"),
        ({"game": "g"}, [ScheduledMatch("m", 0, {}), ScheduledMatch("m", 1, {})], "twice"),
        ({"game": "g"}, [ScheduledMatch("a", 0, {}), ScheduledMatch("b", 0, {})], "index 0 twice"),
        ({"game": "g", "x": object()}, [], "not plain JSON"),
    ],
)
def test_a_malformed_schedule_is_refused_with_its_reason(
    store: Store, spec: dict[str, Any], matches: list[ScheduledMatch], message: str
) -> None:
    with pytest.raises(InvalidSchedule, match=message):
        store.create_season("bad", spec, matches)
    assert store.season("bad") is None


def test_seasons_in_creation_order_filtered_by_game_with_their_status(store: Store) -> None:
    store.create_season("zz", {"game": "a"}, [])
    store.create_season("aa", {"game": "b"}, [])
    store.create_season("mm", {"game": "a"}, [])
    assert [s.season_id for s in store.seasons()] == ["zz", "aa", "mm"]
    assert [s.season_id for s in store.seasons("a")] == ["zz", "mm"]
    store.set_season_status("aa", SeasonStatus.RUNNING)
    season = store.season("aa")
    assert season is not None and season.status is SeasonStatus.RUNNING
    with pytest.raises(UnknownSeason):
        store.set_season_status("nope", SeasonStatus.DONE)
    with pytest.raises(UnknownSeason):
        store.scheduled("nope")
    with pytest.raises(UnknownSeason):
        store.progress("nope")


def test_mark_match_counts_attempts_and_never_moves_a_done_match_back(store: Store) -> None:
    store.create_season("s", {"game": "g"}, schedule("s", 3))
    store.mark_match("s-1", MatchStatus.QUEUED)
    store.mark_match("s-1", MatchStatus.RUNNING)
    store.mark_match("s-1", MatchStatus.FAILED, "worker lost")
    store.mark_match("s-1", MatchStatus.RUNNING)
    store.record_results([store.prepare_result("s-1", record("s-1"), {})])[0]
    store.mark_match("s-1", MatchStatus.FAILED, "a late duplicate")
    rows = store.scheduled("s")
    assert [r.index for r in rows] == [0, 1, 2]
    assert (rows[1].status, rows[1].attempts) == (MatchStatus.DONE, 2)
    assert rows[0].status is MatchStatus.PENDING
    progress = store.progress("s")
    assert (progress.total, progress.done, progress.remaining) == (3, 1, 2)
    assert progress.count(MatchStatus.PENDING) == 2
    with pytest.raises(UnknownMatch):
        store.mark_match("nope", MatchStatus.RUNNING)


# -- results --------------------------------------------------------------------------


def test_record_result_writes_once_and_keeps_everything(store: Store) -> None:
    store.create_season("s", {"game": "seas-of-strife-v1"}, schedule("s", 1))
    faults = (
        Fault(1, FaultKind.TIMEOUT, 4, "no answer to decision 4 in time"),
        Fault(1, FaultKind.CRASH, 9, "bot process exited with code 1"),
    )
    raw = record("s-0", faults=faults, played_out=(1,), scores=(20.0, 5.0), ranks=(0, 1))
    cap = StoreConfig().stderr_cap_bytes
    assert (
        store.record_results(
            [store.prepare_result("s-0", raw, {0: "thinking\n", 1: "x" * (cap + 10)})]
        )[0]
        is True
    )
    # A retried job with other content: nothing changes.
    assert (
        store.record_results(
            [store.prepare_result("s-0", record("s-0", scores=(0.0, 99.0)), {0: "again"})]
        )[0]
        is False
    )

    result = store.result("s-0")
    assert result is not None
    assert (result.season_id, result.index, result.game, result.seed) == ("s", 0, raw["game"], 7)
    assert result.outcome is Outcome.COMPLETED and result.abort_reason == ""
    assert (result.scores, result.ranks, result.played_out) == ((20.0, 5.0), (0, 1), (1,))
    assert result.bots == ("bot:alpha@v1", "house:random")
    assert [(s.version, s.faults) for s in result.seats] == [
        ("sha256:0123456789abcdef", 0),
        ("sha256:0123456789abcdef", 2),
    ]
    assert result.options == {"target": 50}
    assert [(f.seat, f.kind, f.index, f.detail) for f in store.faults("s-0")] == [
        (1, FaultKind.TIMEOUT, 4, "no answer to decision 4 in time"),
        (1, FaultKind.CRASH, 9, "bot process exited with code 1"),
    ]
    assert store.match_record("s-0") == raw
    assert store.stderr("s-0", 0) == "thinking\n"
    capped = store.stderr("s-0", 1)
    assert capped.startswith("x" * cap) and "10 more bytes of stderr dropped" in capped
    assert store.stderr("s-0", 5) == ""
    assert store.scheduled("s")[0].status is MatchStatus.DONE


def test_an_aborted_match_keeps_its_reason_and_has_no_scores(store: Store) -> None:
    raw = record("local-1", scores=(), ranks=(), outcome="aborted", abort_reason="wall_clock")
    assert store.record_results([store.prepare_result("local-1", raw, {})])[0] is True
    result = store.result("local-1")
    assert result is not None
    assert (result.outcome, result.abort_reason) == (Outcome.ABORTED, "wall_clock")
    assert (result.scores, result.ranks, result.season_id) == ((), (), None)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (record("other"), "given for match"),
        (record("m", outcome="won"), "completed|aborted"),
        ({**record("m"), "format": "saloon.match/0"}, "format"),
        ({"match_id": "m"}, "log"),
        ({**record("m"), "seed": "seven"}, "seed"),
        ({**record("m"), "options": {"x": {1, 2}}}, "not plain JSON"),
    ],
)
def test_a_bad_record_is_refused_and_nothing_written(
    store: Store, raw: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidRecord, match=message):
        store.record_results([store.prepare_result("m", raw, {})])[0]
    assert store.result("m") is None


def test_results_come_in_schedule_order_never_completion_order(store: Store) -> None:
    store.create_season("late", {"game": "g"}, schedule("late", 2))
    store.create_season("early-by-name", {"game": "g"}, schedule("early-by-name", 3))
    store.create_season("other", {"game": "h"}, schedule("other", 1))
    finished = ["early-by-name-2", "local-b", "late-1", "other-0", "early-by-name-0", "late-0"]
    finished += ["local-a", "early-by-name-1"]
    for match_id in finished:
        game = "h" if match_id.startswith("other") else "g"
        assert (
            store.record_results([store.prepare_result(match_id, record(match_id, game=game), {})])[
                0
            ]
            is True
        )
    order = [r.match_id for r in store.results()]
    assert order == [
        "late-0",
        "late-1",
        "early-by-name-0",
        "early-by-name-1",
        "early-by-name-2",
        "other-0",
        "local-a",
        "local-b",
    ]
    assert [r.match_id for r in store.results(game="h")] == ["other-0"]
    assert [r.index for r in store.results(season_id="early-by-name")] == [0, 1, 2]
    assert [r.match_id for r in store.results(game="g", season_id="late")] == ["late-0", "late-1"]
    assert store.results(game="none") == []
    with pytest.raises(UnknownSeason):
        store.results(season_id="nope")


def test_unknown_matches_read_as_nothing(store: Store) -> None:
    assert store.result("nope") is None
    assert store.faults("nope") == []
    assert store.match_record("nope") is None
    assert store.stderr("nope", 0) == ""
    assert store.results() == []


# -- exactly once across processes ----------------------------------------------------

RACER = textwrap.dedent(
    """
    import json, os, sys, time
    from saloon.worker.store.store import ScheduledMatch, Store
    url, go, ids = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    records = json.loads(sys.stdin.read())
    print("ready", flush=True)
    while not os.path.exists(go):
        time.sleep(0.001)
    store = Store.open(url)  # both migrate a fresh database at once
    schedule = [ScheduledMatch(m, i, {}) for i, m in enumerate(sorted(ids))]
    created = store.create_season("race", {"game": "g"}, schedule)
    stderr = {0: "from " + str(os.getpid())}
    wrote = [store.record_results([store.prepare_result(m, records[m], stderr)])[0] for m in ids]
    print(json.dumps({"created": created, "wrote": wrote}), flush=True)
    store.close()
    """
)


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database, never migrated."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/fresh.db"
    else:
        with postgres_schema("race") as url:
            yield url


def test_two_processes_racing_on_a_fresh_store_migrate_create_and_record_once(
    fresh_url: str, tmp_path: Path
) -> None:
    ids = [f"race-{i:02d}" for i in range(20)]
    faulty = (Fault(0, FaultKind.INVALID, 2, "answer 9 of 3"),)
    records = {m: record(m, faults=faulty) for m in ids}
    go = tmp_path / "go"
    # Opposite orders: the two meet in the middle, each match contested at some point.
    orders = [ids, list(reversed(ids))]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, fresh_url, str(go), json.dumps(order)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for order in orders
    ]
    try:
        for proc in procs:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(records))
            proc.stdin.close()
            assert proc.stdout.readline().strip() == "ready"
        go.touch()
        outputs = []
        for proc in procs:
            assert proc.stdout is not None
            outputs.append(json.loads(proc.stdout.read()))
            assert proc.wait(timeout=60) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert sorted(out["created"] for out in outputs) == [False, True]
    wrote = {m: 0 for m in ids}
    for out, order in zip(outputs, orders, strict=True):
        for match_id, flag in zip(order, out["wrote"], strict=True):
            wrote[match_id] += flag
    assert wrote == {m: 1 for m in ids}
    with Store.open(fresh_url) as store:
        assert [r.match_id for r in store.results(season_id="race")] == ids
        assert all(len(store.faults(m)) == 1 for m in ids)
        assert store.progress("race").done == len(ids)
        with store.engine.connect() as conn:
            assert conn.execute(sa.select(sa.func.count()).select_from(result_seats)).scalar() == 40


# -- the public API for the layers above: read, write, insert-if-absent, fetch ----------


def test_a_write_commits_at_the_end_and_rolls_back_when_it_raises(store: Store) -> None:
    at = sa.func.now() if store.backend == "postgresql" else sa.func.current_timestamp()
    with store.write("add two bots") as conn:
        conn.execute(bots.insert().values(name="alpha", owner="alice", created_at=at))
    with pytest.raises(RuntimeError, match="changed my mind"), store.write("add one") as conn:
        conn.execute(bots.insert().values(name="beta", owner="bob", created_at=at))
        raise RuntimeError("changed my mind")
    with store.read("bots") as conn:
        assert conn.execute(sa.select(bots.c.name)).scalars().all() == ["alpha"]


def test_insert_ignore_inserts_only_what_is_absent(store: Store) -> None:
    store.add_bot("alpha", "alice")
    with store.write("bots") as conn:
        for owner in ("mallory", "alice"):
            conn.execute(
                store.insert_ignore(bots, ["name"]).values(
                    name="alpha", owner=owner, created_at=sa.func.current_timestamp()
                )
            )
    assert [(b.name, b.owner) for b in store.bots()] == [("alpha", "alice")]


def test_guard_maps_a_lost_database_and_nothing_else(store: Store) -> None:
    lost = sa.exc.OperationalError("SELECT 1", {}, ConnectionError("server closed the connection"))
    unavailable = pytest.raises(StoreUnavailable, match=r"^probe: store .* unavailable \(Connec")
    with unavailable, store.guard("probe"):
        raise lost
    bad = sa.exc.IntegrityError("INSERT", {}, ValueError("duplicate key"))
    with pytest.raises(sa.exc.IntegrityError), store.guard("probe"):
        raise bad
    with pytest.raises(ValueError, match="bad input"), store.guard("probe"):
        raise ValueError("bad input")


def test_fetch_runs_a_compiled_read_and_binds_its_values(store: Store) -> None:
    for name in ("alpha", "beta", "gamma"):
        store.add_bot(name, "alice")
    query = (
        sa.select(bots.c.name, bots.c.owner)
        .where(bots.c.name > sa.bindparam("after", type_=sa.String))
        .order_by(bots.c.name)
    )
    compiled = query.compile(dialect=store.engine.dialect)
    assert [tuple(r) for r in store.fetch("names", compiled, {"after": "alpha"})] == [
        ("beta", "alice"),
        ("gamma", "alice"),
    ]
    assert store.fetch("names", compiled, {"after": "gamma"}) == []


@pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)
def test_fetch_on_a_held_connection_killed_raises_unavailable_then_reconnects(
    store: Store, store_url: str
) -> None:
    compiled = sa.select(sa.func.pg_backend_pid()).compile(dialect=store.engine.dialect)
    pid = store.fetch("pid", compiled, {})[0][0]
    assert store.fetch("pid", compiled, {})[0][0] == pid  # held: the same connection
    admin = sa.create_engine(store_url)
    try:
        with admin.begin() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
    finally:
        admin.dispose()
    with pytest.raises(StoreUnavailable, match=r"^pid: store .* unavailable \(AdminShutdown"):
        store.fetch("pid", compiled, {})
    assert store.fetch("pid", compiled, {})[0][0] != pid  # a fresh one


# -- connection loss (PostgreSQL) -----------------------------------------------------

postgres_only = pytest.mark.parametrize("store_url", ["postgresql"], indirect=True)


@postgres_only
def test_a_connection_lost_mid_record_raises_unavailable_and_the_retry_records_once(
    store: Store, store_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="saloon.worker.store")
    admin = sa.create_engine(store_url)
    killed: list[int] = []
    stop = threading.Event()

    def kill_the_recorder(locker_pid: int) -> None:
        # While the record's statement is executing (its result row waits on the row the
        # locker inserted, not committed), its connection is killed; twice, as the store
        # tries once more on a fresh connection when its connection was dropped.
        blocked = sa.text("SELECT pid FROM pg_stat_activity WHERE :p = ANY(pg_blocking_pids(pid))")
        deadline = time.monotonic() + 30
        while len(killed) < 2 and not stop.is_set() and time.monotonic() < deadline:
            with admin.begin() as other:
                for pid in other.execute(blocked, {"p": locker_pid}).scalars():
                    if pid not in killed:
                        other.execute(sa.text("SELECT pg_terminate_backend(:p, 5000)"), {"p": pid})
                        killed.append(pid)
            time.sleep(0.01)

    prepared = store.prepare_result("lost-0", record("lost-0"), {})
    try:
        with admin.connect() as locker:
            locker.execute(result_rows.insert().values(dict(prepared.result, match_id="lost-0")))
            locker_pid = locker.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            killer = threading.Thread(target=kill_the_recorder, args=(locker_pid,))
            killer.start()
            try:
                with pytest.raises(StoreUnavailable, match="unavailable"):
                    store.record_results([prepared])[0]
            finally:
                stop.set()
                killer.join(timeout=30)
                locker.rollback()
    finally:
        admin.dispose()
    assert len(killed) == 2 and store.result("lost-0") is None  # nothing ever committed
    # Regression (test_redis_and_the_database_down_at_once_heal failed on it): the drop was
    # logged with libpq's message of three lines; a log record is one line.
    dropped = [r.getMessage() for r in caplog.records if "connection dropped" in r.getMessage()]
    assert dropped and all("\n" not in message for message in dropped), dropped
    assert store.record_results([store.prepare_result("lost-0", record("lost-0"), {})])[0] is True
    assert store.record_results([store.prepare_result("lost-0", record("lost-0"), {})])[0] is False
    assert len(store.results()) == 1


@postgres_only
def test_pooled_connections_killed_by_the_server_are_replaced_before_use(
    store: Store, store_url: str
) -> None:
    with store.engine.connect() as conn:
        pid = int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())
    admin = sa.create_engine(store_url)
    try:
        with admin.begin() as other:
            other.execute(sa.text("SELECT pg_terminate_backend(:p, 5000)"), {"p": pid})
    finally:
        admin.dispose()
    assert (
        store.record_results([store.prepare_result("after-kill", record("after-kill"), {})])[0]
        is True
    )
    # A pooled connection's statement (records go on the thread's held one): replaced too.
    assert store.claim_match("after-kill") is None


def test_an_unreachable_postgres_is_store_unavailable() -> None:
    with pytest.raises(StoreUnavailable, match="unavailable"):
        Store.open("postgresql+psycopg://postgres@127.0.0.1:1/test?connect_timeout=2")


def test_a_board_walk_on_an_unreachable_postgres_is_store_unavailable() -> None:
    # Regression: the ratings' own raw connection let the driver's error of a connection
    # that could not be opened escape as SQLAlchemy's; the store's held reader maps it.
    url = "postgresql+psycopg://postgres@127.0.0.1:1/test?connect_timeout=2"
    store = Store(create_engine(url, StoreConfig()))
    try:
        walk = sa.select(sa.literal(1)).compile(dialect=store.engine.dialect)
        with pytest.raises(StoreUnavailable, match=r"^board walk: store .* unavailable"):
            store.fetch("board walk", walk, {})
    finally:
        store.close()


def test_a_forked_child_uses_fresh_connections_and_the_parent_keeps_its_own(
    store: Store,
) -> None:
    # RQ's default worker forks a work-horse per job after the parent opened the store.
    store.create_season("fork", {"game": "g"}, schedule("fork", 2))
    pid = os.fork()
    if pid == 0:  # the child: record one match, exit without running pytest's teardown
        code = 1
        try:
            code = (
                0
                if store.record_results([store.prepare_result("fork-0", record("fork-0"), {})])[0]
                else 2
            )
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.record_results([store.prepare_result("fork-1", record("fork-1"), {})])[0] is True
    assert store.record_results([store.prepare_result("fork-0", record("fork-0"), {})])[0] is False
    assert [r.match_id for r in store.results()] == ["fork-0", "fork-1"]


def test_mark_matches_moves_many_at_once_and_skips_done_ones(store: Store) -> None:
    ids = [f"bulk-{i:04d}" for i in range(1200)]  # more than one IN (...) chunk
    store.create_season(
        "bulk", {"game": "g"}, [ScheduledMatch(m, i, {}) for i, m in enumerate(ids)]
    )
    store.record_results([store.prepare_result(ids[7], record(ids[7]), {})])[0]
    assert store.mark_matches(ids, MatchStatus.QUEUED) == len(ids) - 1
    assert store.progress("bulk").count(MatchStatus.QUEUED) == len(ids) - 1
    queued = store.scheduled("bulk", [MatchStatus.QUEUED])
    assert len(queued) == len(ids) - 1 and queued[0].match_id == ids[0]
    assert [r.match_id for r in store.scheduled("bulk", [MatchStatus.DONE])] == [ids[7]]
    with pytest.raises(UnknownMatch, match="nope"):
        store.mark_matches([ids[0], "nope"], MatchStatus.CANCELLED)
    assert store.progress("bulk").count(MatchStatus.CANCELLED) == 0  # nothing changed


def test_match_states_are_the_matches_in_the_statuses_asked_for_without_specs(
    store: Store,
) -> None:
    store.create_season("st", {"game": "g"}, schedule("st", 4))
    store.claim_match("st-1", "worker-a")
    store.record_results([store.prepare_result("st-2", record("st-2"), {})])[0]
    states = store.match_states("st", [MatchStatus.PENDING, MatchStatus.RUNNING])
    assert [(s.match_id, s.index, s.status) for s in states] == [
        ("st-0", 0, MatchStatus.PENDING),
        ("st-1", 1, MatchStatus.RUNNING),
        ("st-3", 3, MatchStatus.PENDING),
    ]
    assert states[1].detail == "worker-a"  # who claimed it
    assert store.match_states("nope", [MatchStatus.PENDING]) == []


def test_versions_added_at_once_from_many_threads_get_distinct_numbers(store: Store) -> None:
    store.add_bot("alpha", "alice")

    def add(worker: int) -> None:
        for i in range(4):
            store.add_version("alpha", f"w{worker}-{i}")

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(add, range(6)))
    assert sorted(v.seq for v in store.versions("alpha")) == list(range(1, 25))


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
def test_a_sqlite_store_locked_past_the_busy_timeout_is_unavailable_not_broken(
    store: Store, store_url: str
) -> None:
    impatient = Store.open(store_url, config=StoreConfig(busy_timeout_ms=50))
    try:
        with store.engine.connect() as holder:
            holder.execution_options(saloon_store_write=True)
            # BEGIN IMMEDIATE: the holder keeps the write lock while the other tries.
            with holder.begin(), pytest.raises(StoreUnavailable, match="locked"):
                impatient.record_results([impatient.prepare_result("m", record("m"), {})])[0]
        assert impatient.record_results([impatient.prepare_result("m", record("m"), {})])[0] is True
    finally:
        impatient.close()


def test_the_migrations_go_down_to_nothing_and_up_again(fresh_url: str) -> None:
    from alembic import command
    from alembic.config import Config

    from saloon.worker.store.engine import migrations_dir

    Store.open(fresh_url).close()
    engine = sa.create_engine(fresh_url)
    try:
        with engine.begin() as conn:
            cfg = Config()
            cfg.set_main_option("script_location", str(migrations_dir()))
            cfg.attributes["connection"] = conn
            command.downgrade(cfg, "base")
        with engine.connect() as conn:
            assert current_revision(conn) is None
            assert not sa.inspect(conn).has_table("results")
    finally:
        engine.dispose()
    with Store.open(fresh_url) as store:
        assert store.create_season("s", {"game": "g"}, schedule("s", 1)) is True


# -- batches: several matches claimed and recorded at once, each by its own id -----------


def test_claim_matches_claims_each_by_its_id_and_leaves_done_and_cancelled_alone(
    store: Store,
) -> None:
    store.create_season("cb", {"game": "seas-of-strife-v1"}, schedule("cb", 4))
    assert store.record_results([store.prepare_result("cb-0", record("cb-0"), {})])[0]
    store.mark_match("cb-3", MatchStatus.CANCELLED)
    got = store.claim_matches(["cb-0", "cb-1", "cb-2", "cb-3", "nope"], "w1")
    assert got == {
        "cb-0": MatchStatus.DONE,
        "cb-1": MatchStatus.RUNNING,
        "cb-2": MatchStatus.RUNNING,
        "cb-3": MatchStatus.CANCELLED,
    }
    rows = {r.match_id: r for r in store.scheduled("cb")}
    assert (rows["cb-1"].attempts, rows["cb-1"].detail) == (1, "w1")
    # The same, sent without waiting (a batch plays its first match meanwhile).
    pending = store.send_claim(["cb-1", "cb-0", "nope"], "w2")
    assert pending.wait() == {"cb-1": MatchStatus.RUNNING, "cb-0": MatchStatus.DONE}
    rows = {r.match_id: r for r in store.scheduled("cb")}
    assert (rows["cb-1"].attempts, rows["cb-1"].detail) == (2, "w2")
    store.mark_match("cb-1", MatchStatus.QUEUED)
    assert rows["cb-0"].attempts == 0 and rows["cb-3"].status is MatchStatus.CANCELLED
    # A failed batch marks its matches queued again: never the cancelled or done ones.
    store.mark_matches(["cb-0", "cb-1", "cb-2", "cb-3"], MatchStatus.QUEUED, "retrying")
    rows = {r.match_id: r for r in store.scheduled("cb")}
    assert [rows[f"cb-{i}"].status for i in range(4)] == [
        MatchStatus.DONE,
        MatchStatus.QUEUED,
        MatchStatus.QUEUED,
        MatchStatus.CANCELLED,
    ]


def test_record_results_writes_each_match_once_with_its_rows(store: Store) -> None:
    store.create_season("rb", {"game": "seas-of-strife-v1"}, schedule("rb", 3))
    assert store.record_results([store.prepare_result("rb-1", record("rb-1"), {})])[0]
    fault = Fault(0, FaultKind.TIMEOUT, 3, "slow")
    items = [
        store.prepare_result("rb-0", record("rb-0", faults=(fault,)), {0: "oops"}),
        store.prepare_result("rb-1", record("rb-1"), {}),  # recorded already: dropped
        store.prepare_result("rb-2", record("rb-2"), {1: "two"}),
    ]
    assert store.record_results(items) == [True, False, True]
    assert store.record_results(items) == [False, False, False]
    results = store.results(season_id="rb")
    assert [r.match_id for r in results] == ["rb-0", "rb-1", "rb-2"]
    assert [s.faults for s in results[0].seats] == [1, 0]
    assert [f.kind for f in store.faults("rb-0")] == [FaultKind.TIMEOUT]
    assert store.stderr("rb-0", 0) == "oops" and store.stderr("rb-2", 1) == "two"
    assert store.match_record("rb-2") == record("rb-2")
    assert store.progress("rb").done == 3
    assert store.record_results([]) == []


def played(match_id: str, **extra: Any) -> MatchRecord:
    """A worker's own record of ``match_id`` (a MatchRecord, not its JSON)."""
    return MatchRecord.from_json(record(match_id, **extra))


def test_send_results_records_a_workers_records_once_as_their_json(store: Store) -> None:
    store.create_season("sr", {"game": "seas-of-strife-v1"}, schedule("sr", 4))
    assert store.record_results([store.prepare_result("sr-1", played("sr-1"), {})])[0] is True
    fault = Fault(1, FaultKind.INVALID, 2, "no such card")
    items = [
        store.prepare_result("sr-0", played("sr-0", faults=(fault,)), {1: "hm"}),
        store.prepare_result("sr-1", played("sr-1"), {}),  # recorded already: dropped
        store.prepare_result("sr-2", record("sr-2"), {}),  # the JSON form is taken too
        store.prepare_result("sr-0", played("sr-0"), {}),  # twice in one flush: written once
    ]
    pending = store.send_results(items)
    assert pending.wait() == [True, False, True, True]
    assert pending.settled and pending.wait() == [True, False, True, True]
    # Stored as the JSON form, byte for byte what the record's to_json() holds.
    assert store.match_record("sr-0") == played("sr-0", faults=(fault,)).to_json()
    assert [f.detail for f in store.faults("sr-0")] == ["no such card"]
    assert store.stderr("sr-0", 1) == "hm"
    assert [s.faults for s in (store.result("sr-0") or pytest.fail()).seats] == [0, 1]
    assert store.progress("sr").done == 3
    assert store.send_results([store.prepare_result("sr-2", played("sr-2"), {})]).wait() == [False]
    assert store.send_results([]).wait() == []
    with pytest.raises(InvalidRecord, match="given for match"):
        store.prepare_result("sr-3", played("sr-0"), {})
    assert store.result("sr-3") is None


@postgres_only
@pytest.mark.parametrize("kill", ["before the send", "under the statement"])
def test_a_connection_dropped_around_a_sent_record_records_it_once(
    store: Store, store_url: str, kill: str
) -> None:
    store.create_season("dr", {"game": "seas-of-strife-v1"}, schedule("dr", 2))
    # The connection this thread sends statements on without waiting (a claim, then the
    # record, one after the other): the one the send will use.
    assert store.send_claim(["dr-1"]).wait() == {"dr-1": MatchStatus.RUNNING}
    held = store.held_connection().connection
    assert held is not None
    pid = held.connection.dbapi_connection.info.backend_pid  # type: ignore[union-attr]
    admin = sa.create_engine(store_url)
    try:
        with admin.connect() as locker, admin.connect() as killer:
            if kill == "under the statement":
                # The record's DONE mark waits on this row lock: the statement is still
                # running (nothing committed) when its connection is killed.
                locker.execute(
                    sa.text("SELECT 1 FROM scheduled_matches WHERE match_id = 'dr-0' FOR UPDATE")
                )
            else:
                killer.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            pending = store.send_results([store.prepare_result("dr-0", played("dr-0"), {})])
            if kill == "under the statement":
                killer.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
                locker.rollback()
            # Sent again on a fresh connection, which writes it.
            assert pending.wait() == [True]
    finally:
        admin.dispose()
    assert store.result("dr-0") is not None and store.progress("dr").done == 1
    assert store.send_results([store.prepare_result("dr-0", played("dr-0"), {})]).wait() == [False]
    assert len(store.results()) == 1


def test_records_are_stored_as_zstd_and_older_zlib_records_stay_readable(store: Store) -> None:
    store.create_season("enc", {"game": "seas-of-strife-v1"}, schedule("enc", 3))
    for i in range(3):
        store.record_results([store.prepare_result(f"enc-{i}", record(f"enc-{i}"), {})])[0]
    rows = stored_records(store)
    assert {r.encoding for r in rows} == {"zstd+json"}
    assert all(zstandard.ZstdDecompressor().decompress(r.data) for r in rows)
    # A record an earlier release wrote (zlib) reads back as it was.
    old = json.dumps(record("enc-1")).encode()
    unknown = json.dumps(record("enc-2")).encode()
    with store.engine.begin() as conn:
        for match_id, encoding, data in (
            ("enc-1", "zlib+json", zlib.compress(old)),
            ("enc-2", "lzma+json", unknown),
        ):
            conn.execute(
                match_records.update()
                .where(match_records.c.match_id == match_id)
                .values(encoding=encoding, data=data)
            )
    assert store.match_record("enc-1") == record("enc-1")
    assert store.match_record("enc-0") == record("enc-0")
    with pytest.raises(StoreError, match="encoding 'lzma\\+json' unknown"):
        store.match_record("enc-2")


def stored_records(store: Store) -> list[Any]:
    """Every stored match record row."""
    with store.engine.connect() as conn:
        return list(conn.execute(sa.select(match_records)).all())


@postgres_only
def test_statements_sent_without_waiting_share_one_held_connection_one_at_a_time(
    store: Store,
) -> None:
    store.create_season("hc", {"game": "seas-of-strife-v1"}, schedule("hc", 3))
    assert store.send_claim(["hc-0"]).wait() == {"hc-0": MatchStatus.RUNNING}
    held = store.held_connection().connection
    assert held is not None and not store.held_connection().busy
    # The next statement goes on the same connection, checked out once...
    pending = store.send_results([store.prepare_result("hc-0", played("hc-0"), {})])
    assert store.held_connection() == HeldConnection(held, busy=True)
    # ... and one sent while it is busy goes on another (a pooled one), both answered.
    claim = store.send_claim(["hc-1", "hc-2"])
    assert claim.wait() == {"hc-1": MatchStatus.RUNNING, "hc-2": MatchStatus.RUNNING}
    assert pending.wait() == [True] and store.held_connection() == HeldConnection(held, False)
    assert store.progress("hc").done == 1


def test_the_held_connection_is_a_read_only_snapshot(store: Store) -> None:
    store.create_season("hs", {"game": "seas-of-strife-v1"}, schedule("hs", 1))
    assert store.send_claim(["hs-0"]).wait() == {"hs-0": MatchStatus.RUNNING}
    # A thread that sent nothing holds nothing (on SQLite no thread ever does).
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(store.held_connection).result() == HeldConnection(None, busy=False)
    snapshot = store.held_connection()
    assert (snapshot.connection is not None) is (store.backend == "postgresql")
    assert not snapshot.busy
    with pytest.raises(dataclasses.FrozenInstanceError):
        snapshot.busy = True  # type: ignore[misc]
