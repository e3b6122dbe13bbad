"""Incremental boards (saloon.ratings.incremental) over a real store, SQLite and PostgreSQL:
the checkpoint gives exactly the numbers of a full fold, late results wait, and a result
recorded behind the prefix rebuilds it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.ratings.boards import game_leaderboard, rebuilt_leaderboard, season_leaderboard
from saloon.ratings.leaderboard import Leaderboard
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.worker.store.rows import MatchStatus, ScheduledMatch, SeasonStatus
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

GAME = "seas-of-strife-v1"
FIELD = ["house:greedy", "house:random", "bot:alice@v1", "bot:bob@b1", "bot:carl@c1"]


def _record(match_id: str, bots: list[str], seed: int, aborted: bool = False) -> dict[str, Any]:
    seats = []
    for bot in bots:
        version = bot.split("@")[1] if "@" in bot else "saloon-test"
        seats.append(InProcessSeat(make_house_bot(GAME, "random"), bot, version))
    record = play_match(GAME, seats, seed, match_id=match_id).to_json()
    if aborted:
        record.update(outcome="aborted", abort_reason="wall_clock")
    return record


def _fill(store: Store) -> list[dict[str, Any]]:
    """Four seasons (see the test); their records, not yet recorded."""
    for name, owner in (("alice", "ann"), ("bob", "bo"), ("carl", "cy"), ("zed", "zo")):
        store.add_bot(name, owner)
    records = []
    s1 = []
    for i in range(14):
        bots = [FIELD[(i + j) % 5] for j in range(3 + i % 2)]
        s1.append(ScheduledMatch(f"s1-{i}", i, {"seats": bots}))
        records.append(_record(f"s1-{i}", bots, i, aborted=(i == 6)))
    store.create_season("s1", {"game": GAME}, s1)
    s2 = []
    table = ["house:greedy", "bot:alice@v2", "bot:bob@b1"]  # alice's new version
    for deal in range(3):
        for turn in range(3):
            i = deal * 3 + turn
            bots = table[turn:] + table[:turn]
            s2.append(ScheduledMatch(f"s2-{i}", i, {"seats": bots, "deal": deal}))
            records.append(_record(f"s2-{i}", bots, 100 + deal))
    store.create_season("s2", {"game": GAME}, s2)
    for sid in ("s1", "s2"):
        store.set_season_status(sid, SeasonStatus.RUNNING)
    # s3: never started; zed is scheduled only here (listed unrated)
    zed = ["bot:zed@z1", "house:random", "house:greedy"]
    store.create_season("s3", {"game": GAME}, [ScheduledMatch("s3-0", 0, {"seats": zed})])
    return records


def _position(store: Store) -> tuple[int, int]:
    import sqlalchemy as sa

    from saloon.worker.store import schema as t

    b = t.rating_boards
    with store.engine.connect() as conn:
        row = conn.execute(
            sa.select(b.c.position_seq, b.c.position_idx).where(b.c.board.like("all-time:%"))
        ).one()
    return (row[0], row[1])


def _same(a: Leaderboard, b: Leaderboard) -> None:
    assert a.records() == b.records()
    assert a.standings.ratings == b.standings.ratings  # floats compared exactly
    assert a.standings.history == b.standings.history
    assert a.standings.head_to_head == b.standings.head_to_head
    assert a.standings.comparisons == b.standings.comparisons
    assert {k: vars(v) for k, v in a.standings.stats.items()} == {
        k: vars(v) for k, v in b.standings.stats.items()
    }


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "boards.db")
        return
    with postgres_schema("incr") as pg:
        yield pg


def test_checkpoint_equals_a_full_fold_whatever_the_recording_order(url: str) -> None:
    with Store.open(url) as store:
        records = _fill(store)
        order = list(records)
        random.Random(3).shuffle(order)
        for record in order:
            store.record_results([store.prepare_result(record["match_id"], record, {})])[0]
            game_leaderboard(store, GAME)  # extends the checkpoint one result at a time
        board, _ = game_leaderboard(store, GAME)
        _same(board, rebuilt_leaderboard(store, GAME))
        rows = {r.bot: r for r in board.rows}
        assert rows["zed"].rank is None and rows["alice"].version == "v2"
        assert board.standings.comparisons == 13 + 3  # s1 less its aborted match, s2's deals
        for sid in ("s1", "s2"):
            _same(season_leaderboard(store, sid), rebuilt_leaderboard(store, GAME, sid))
    with Store.open(url) as fresh:  # another process: reads the stored checkpoint
        again, _ = game_leaderboard(fresh, GAME)
        _same(again, board)


def test_a_result_ahead_of_an_unplayed_match_waits_for_it(url: str) -> None:
    with Store.open(url) as store:
        records = {r["match_id"]: r for r in _fill(store)}
        store.mark_match("s1-0", MatchStatus.QUEUED)
        for i in range(1, 5):
            store.record_results([store.prepare_result(f"s1-{i}", records[f"s1-{i}"], {})])[0]
        waiting, _ = game_leaderboard(store, GAME)
        assert waiting.standings.matches == 0  # s1-0 is queued: s1-1..4 wait
        store.record_results([store.prepare_result("s1-0", records["s1-0"], {})])[0]
        board, _ = game_leaderboard(store, GAME)
        assert board.standings.matches == 5
        _same(board, rebuilt_leaderboard(store, GAME))


def test_a_match_recorded_behind_the_prefix_rebuilds_the_board(url: str) -> None:
    with Store.open(url) as store:
        records = {r["match_id"]: r for r in _fill(store)}
        store.mark_match("s1-2", MatchStatus.FAILED, "gave up")
        store.set_season_status("s1", SeasonStatus.FAILED)  # settled: s1-2 is passed over
        for match_id, record in records.items():
            if match_id != "s1-2":
                store.record_results([store.prepare_result(match_id, record, {})])[0]
        before, _ = game_leaderboard(store, GAME)
        assert before.standings.matches == len(records) - 2  # less s1-2 and the aborted one
        store.record_results([store.prepare_result("s1-2", records["s1-2"], {})])[
            0
        ]  # retried after all
        zed = ["bot:zed@z1", "house:random", "house:greedy"]
        store.record_results([store.prepare_result("s3-0", _record("s3-0", zed, 7), {})])[
            0
        ]  # a season never started
        after, _ = game_leaderboard(store, GAME)
        _same(after, rebuilt_leaderboard(store, GAME))
        assert after.standings.matches == len(records) and after.rows[0].rank == 1
        assert {r.bot: r for r in after.rows}["zed"].matches == 1


def test_two_processes_holding_unwritten_checkpoints_both_stay_exact(url: str) -> None:
    from saloon.ratings.incremental import BoardScope, IncrementalBoard, write_held
    from saloon.ratings.ladders import default_ladder

    with Store.open(url) as one, Store.open(url) as two:
        records = _fill(one)
        order = list(records)
        random.Random(5).shuffle(order)
        for i, record in enumerate(order):
            one.record_results([one.prepare_result(record["match_id"], record, {})])[0]
            # Each holds what it took in, mostly unwritten; the other's write moves the
            # stored checkpoint under it (it then re-reads and re-extends).
            game_leaderboard(one if i % 2 else two, GAME, details=i % 3 == 0)
        rebuilt = rebuilt_leaderboard(one, GAME)
        _same(game_leaderboard(one, GAME)[0], rebuilt)
        _same(game_leaderboard(two, GAME)[0], rebuilt)
        board = IncrementalBoard(two, BoardScope.all_time(default_ladder(GAME)))
        board.update()
        write_held(two)  # a process about to end writes what it holds
        held = board._held[board.scope.key]
        assert not held.pending.any() and _position(two) == held.position
    with Store.open(url) as three:  # reads what was written, takes in nothing more
        _same(game_leaderboard(three, GAME)[0], rebuilt)
