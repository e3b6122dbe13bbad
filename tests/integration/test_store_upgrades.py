"""Upgrades keep every record: a store made by each earlier schema version, filled as that
version held its data, upgrades to the current schema with every row intact and the boards
unchanged; on SQLite and PostgreSQL.

Every revision the package ships (saloon/worker/store/migrations/versions) but the head is
taken, whatever their number: a migration added later is covered with no change here. For
each, the test

1. builds the database at that revision for real (``alembic upgrade REV``);
2. writes, with plain SQL on the tables *as reflected from that database*, the rows of a
   filled arena (users, packages, bots and versions, four seasons and their schedules,
   results with their seats, faults, records and stderr, an organiser's schedule, a
   continuous ladder and, from revision 0003 on, the boards' checkpoints): the rows come
   from a store filled once at the head through the public API, projected onto the
   columns the old revision has (a NOT NULL column the test has no value for fails
   loudly: a new table or column needs its data here). Half the records are stored as
   the earlier releases did (``zlib+json``);
3. reads every table back, upgrades to head (``alembic upgrade head``), reads again and
   compares row by row (same columns, same values);
4. opens the upgraded store and checks each record, its faults and stderr, the season
   and all-time boards (equal, number for number, to the boards before; from a stored
   checkpoint where the old schema had one) and that new bots, seasons and results are
   written after it (the id sequences follow the copied rows).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
import sqlalchemy as sa

from saloon.arena.registry import Registry, Role
from saloon.ratings.boards import game_leaderboard, rebuilt_leaderboard, season_leaderboard
from saloon.ratings.leaderboard import Leaderboard
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.worker.store import schema as t
from saloon.worker.store.codec import decode_record
from saloon.worker.store.engine import head_revision, migrations_dir
from saloon.worker.store.rows import MatchStatus, ScheduledMatch, SeasonStatus
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

GAME = "seas-of-strife-v1"
FIELD = ["house:greedy", "house:random", "bot:alice@v1", "bot:bob@b1", "bot:carl@c1"]
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def earlier_revisions() -> list[str]:
    """Every shipped revision but the head, oldest first."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(migrations_dir()))
    chain = [rev.revision for rev in script.walk_revisions()]  # newest first
    chain.reverse()
    assert chain[-1] == head_revision()
    return chain[:-1]


def _alembic(conn: sa.Connection, target: str) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    cfg.attributes["connection"] = conn
    command.upgrade(cfg, target)


def _record(match_id: str, bots: list[str], seed: int, aborted: bool = False) -> dict[str, Any]:
    seats = []
    for bot in bots:
        version = bot.split("@")[1] if "@" in bot else "saloon-test"
        seats.append(InProcessSeat(make_house_bot(GAME, "random"), bot, version))
    record = play_match(GAME, seats, seed, match_id=match_id).to_json()
    if aborted:
        record.update(outcome="aborted", abort_reason="wall_clock")
        record["faults"] = [
            {"seat": 1, "kind": "TIMEOUT", "decision": 3, "detail": "no answer in 1000 ms"}
        ]
    return record


@dataclass
class Filled:
    """The arena filled once at the head: its rows per table and the boards they make."""

    rows: dict[str, list[dict[str, Any]]]
    records: dict[str, Any]
    boards: dict[str, Leaderboard]
    #: Each user's token: it still signs them in after the upgrade.
    tokens: dict[str, str]


def _boards(store: Store) -> dict[str, Leaderboard]:
    boards = {"all-time": game_leaderboard(store, GAME)[0]}
    for sid in ("s1", "s2", "s4"):
        boards[sid] = season_leaderboard(store, sid)
    boards["full fold"] = rebuilt_leaderboard(store, GAME)  # from the results alone
    boards["s2 full fold"] = rebuilt_leaderboard(store, GAME, "s2")
    return boards


def _fill(store: Store) -> tuple[dict[str, Any], dict[str, str]]:
    for name, owner in (("alice", "ann"), ("bob", "bo"), ("carl", "cy"), ("zed", "zo")):
        store.add_bot(name, owner)
    store.add_version("alice", "v1", {"language": "python", "package": "a" * 64})
    store.add_version("alice", "v2", {"language": "python"})
    store.add_version("bob", "b1", {})
    store.add_version("carl", "c1", {})
    store.add_version("zed", "z1", {})
    records: dict[str, Any] = {}
    s1 = []
    for i in range(10):
        bots = [FIELD[(i + j) % 5] for j in range(3 + i % 2)]
        s1.append(ScheduledMatch(f"s1-{i}", i, {"seats": bots}))
        records[f"s1-{i}"] = _record(f"s1-{i}", bots, i, aborted=(i == 6))
    store.create_season("s1", {"game": GAME, "rounds": 2}, s1)
    s2 = []
    table = ["house:greedy", "bot:alice@v2", "bot:bob@b1"]
    for deal in range(2):
        for turn in range(3):
            i = deal * 3 + turn
            bots = table[turn:] + table[:turn]
            s2.append(ScheduledMatch(f"s2-{i}", i, {"seats": bots, "deal": deal}))
            records[f"s2-{i}"] = _record(f"s2-{i}", bots, 100 + deal)
    store.create_season("s2", {"game": GAME, "duplicate": True}, s2)
    zed = ["bot:zed@z1", "house:random", "house:greedy"]
    store.create_season("s3", {"game": GAME}, [ScheduledMatch("s3-0", 0, {"seats": zed})])
    s4 = [ScheduledMatch(f"s4-{i}", i, {"seats": FIELD[i : i + 3]}) for i in range(3)]
    records.update({f"s4-{i}": _record(f"s4-{i}", FIELD[i : i + 3], 200 + i) for i in range(3)})
    store.create_season("s4", {"game": GAME}, s4)
    for sid in ("s1", "s2", "s4"):
        store.set_season_status(sid, SeasonStatus.RUNNING)
    store.mark_match("s4-2", MatchStatus.FAILED, "crashed three times")
    for match_id, record in records.items():
        if match_id == "s4-2":
            continue
        stderr = {1: f"{match_id}: thinking\n"} if match_id.endswith("-1") else {}
        store.record_results([store.prepare_result(match_id, record, stderr)])
    loose = _record("loose-0", FIELD[:3], 300)  # a result outside any season
    store.record_results([store.prepare_result("loose-0", loose, {})])
    records["loose-0"] = loose
    store.set_season_status("s1", SeasonStatus.DONE)
    store.set_season_status("s4", SeasonStatus.FAILED)
    registry = Registry(store)  # users through the arena's own API: whatever a user holds
    tokens = {"ann": registry.add_user("ann"), "olga": registry.add_user("olga", Role.ORGANISER)}
    with store.write("fill arena") as conn:
        conn.execute(
            t.packages.insert(),
            [{"digest": "a" * 64, "data": b"\x1f\x8b package", "size": 11, "created_at": WHEN}],
        )
        conn.execute(
            t.schedules.insert(),
            [
                {
                    "schedule_id": "weekly",
                    "organiser": "olga",
                    "spec": {"game": GAME, "rounds": 1},
                    "every_s": 604800,
                    "active": True,
                    "made": 1,
                    "created_at": WHEN,
                }
            ],
        )
        conn.execute(
            t.season_owners.insert(),
            [
                {"season_id": "s1", "organiser": "olga", "schedule_id": "weekly"},
                {"season_id": "s2", "organiser": "olga", "schedule_id": ""},
            ],
        )
        conn.execute(
            t.continuous_ladders.insert(),
            [
                {
                    "ladder_id": "strife-open",
                    "organiser": "olga",
                    "spec": {"game": GAME},
                    "active": True,
                    "batches": 4,
                    "created_at": WHEN,
                    "updated_at": WHEN,
                }
            ],
        )
        # From revision 0006 on: a tournament done with its report, and a final mark.
        conn.execute(
            t.tournaments.insert(),
            [
                {
                    "tournament_id": "cup",
                    "organiser": "olga",
                    "game": GAME,
                    "spec": {"tournament_id": "cup", "game": GAME, "seed": 5},
                    "phase": "done",
                    "deadline": WHEN,
                    "frozen_at": WHEN,
                    "field": ["bot:alice@v2", "house:greedy"],
                    "batches": 2,
                    "state": {"stop": "confident", "matches": 6},
                    "report": {"json": {"standings": []}, "csv": "place\n"},
                    "created_at": WHEN,
                    "updated_at": WHEN,
                }
            ],
        )
        conn.execute(
            t.tournament_finals.insert(),
            [
                {
                    "tournament_id": "cup",
                    "bot": "alice",
                    "version": "v2",
                    "owner": "ann",
                    "marked_at": WHEN,
                }
            ],
        )
    return records, tokens


def _read_all(conn: sa.Connection, tables: list[sa.Table]) -> dict[str, list[dict[str, Any]]]:
    """Every row of ``tables``, by primary key (or every column) order."""
    out = {}
    for table in tables:
        order = list(table.primary_key.columns) or list(table.columns)
        rows = conn.execute(sa.select(table).order_by(*order)).mappings().all()
        out[table.name] = [dict(row) for row in rows]
    return out


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Filled]:
    url = str(tmp_path_factory.mktemp("head") / "head.db")
    with Store.open(url) as store:
        records, tokens = _fill(store)
        boards = _boards(store)  # also writes the boards' checkpoints
        with store.read("dump") as conn:
            rows = _read_all(conn, list(t.metadata.sorted_tables))
    yield Filled(rows, records, boards, tokens)


@pytest.fixture(params=["sqlite", "postgres"])
def fresh_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
        return
    with postgres_schema("upg") as url:
        yield url


def _as_old_release(row: dict[str, Any], n: int) -> dict[str, Any]:
    """Every other record as earlier releases stored it: zlib-compressed JSON."""
    if n % 2:
        return row
    raw = orjson.dumps(decode_record(row["encoding"], row["data"]))
    return {**row, "encoding": "zlib+json", "raw_bytes": len(raw), "data": zlib.compress(raw)}


def _write_old(conn: sa.Connection, old: sa.MetaData, filled: Filled, revision: str) -> None:
    """The filled arena's rows, written onto the tables as revision ``revision`` has them."""
    for table in old.sorted_tables:
        if table.name == "alembic_version":
            continue
        assert table.name in filled.rows, (
            f"revision {revision} has a table {table.name!r} this test does not fill"
        )
        source = filled.rows[table.name]
        known = set(source[0]) if source else set(table.columns.keys())
        for column in table.columns:
            if column.name not in known:
                assert column.nullable or column.server_default is not None, (
                    f"revision {revision}: {table.name}.{column.name} needs a value in this test"
                )
        rows = [{k: v for k, v in row.items() if k in table.columns} for row in source]
        if table.name == "match_records":
            rows = [_as_old_release(row, n) for n, row in enumerate(rows)]
        if rows:
            conn.execute(table.insert(), rows)
    if conn.dialect.name == "postgresql":
        # What the old release's own inserts left: serial sequences past the copied ids.
        for table in old.sorted_tables:
            if "id" in table.columns and table.columns["id"].autoincrement is not False:
                conn.execute(
                    sa.text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"(SELECT max(id) FROM {table.name}))"
                    )
                )


def _same_board(a: Leaderboard, b: Leaderboard) -> None:
    assert a.records() == b.records()
    assert a.standings.ratings == b.standings.ratings  # floats compared exactly
    assert a.standings.history == b.standings.history
    assert a.standings.head_to_head == b.standings.head_to_head
    assert a.standings.comparisons == b.standings.comparisons


def test_every_earlier_revision_is_covered() -> None:
    revisions = earlier_revisions()
    assert revisions[0] == "0001" and "0004" in revisions
    assert len(set(revisions)) == len(revisions)


@pytest.mark.parametrize("revision", earlier_revisions())
def test_a_store_of_an_earlier_schema_upgrades_with_every_record_and_board_intact(
    revision: str, fresh_url: str, filled: Filled
) -> None:
    engine = sa.create_engine(fresh_url)
    try:
        with engine.begin() as conn:
            _alembic(conn, revision)
        old = sa.MetaData()
        with engine.begin() as conn:
            old.reflect(conn)
            _write_old(conn, old, filled, revision)
        tables = [tb for tb in old.sorted_tables if tb.name != "alembic_version"]
        with engine.connect() as conn:
            before = _read_all(conn, tables)
        assert len(before["results"]) == len(filled.records) - 1  # s4-2 failed
        assert len(before["bots"]) == 4 and len(before["faults"]) >= 1
        with engine.begin() as conn:
            _alembic(conn, "head")
        with engine.connect() as conn:
            after = _read_all(conn, tables)
            version = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()
        assert version == head_revision()
        for name in before:
            assert after[name] == before[name], f"{name}: rows changed by the upgrade"
    finally:
        engine.dispose()

    with Store.open(fresh_url) as store:
        for match_id, record in filled.records.items():
            if match_id == "s4-2":
                assert store.match_record(match_id) is None
                continue
            assert store.match_record(match_id) == record, match_id
            assert [f.kind for f in store.faults(match_id)] == [
                f["kind"] for f in record.get("faults", [])
            ]
        assert store.stderr("s1-1", 1) == "s1-1: thinking\n"
        assert [r.match_id for r in store.results(game=GAME)] == [
            *[f"s1-{i}" for i in range(10)],
            *[f"s2-{i}" for i in range(6)],
            "s4-0",
            "s4-1",
            "loose-0",
        ]
        assert store.progress("s4").count(MatchStatus.FAILED) == 1
        assert [v.version for v in store.versions("alice")] == ["v1", "v2"]
        registry = Registry(store)
        if "users" in before:  # the revision had users: their tokens still sign them in
            for name, token in filled.tokens.items():
                assert registry.authenticate(token).name == name
        else:
            assert registry.users() == []
        boards = _boards(store)
        for name, board in filled.boards.items():
            _same_board(boards[name], board)
        # The upgraded store takes new data: its id sequences follow the copied rows.
        store.add_bot("newbie", "nora")
        assert [v.seq for v in [store.add_version("newbie", "n1", {})]] == [1]
        new = _record("s5-0", FIELD[:3], 400)
        assert store.create_season("s5", {"game": GAME}, [ScheduledMatch("s5-0", 0, {})])
        assert store.record_results([store.prepare_result("s5-0", new, {})]) == [True]
        assert [s.season_id for s in store.seasons()] == ["s1", "s2", "s3", "s4", "s5"]
        assert game_leaderboard(store, GAME)[0].standings.matches == (
            filled.boards["all-time"].standings.matches + 1
        )
