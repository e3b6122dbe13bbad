"""``saloon season ...`` and ``saloon demo`` with the in-process queue and a SQLite store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from saloon.arena.cli import main
from saloon.games import game_ids
from saloon.worker.seasons.cli import demo_seasons
from saloon.worker.seasons.run import season_results
from saloon.worker.seasons.schedule import expand
from saloon.worker.store.store import Store

WSD = ["--game", "western-showdown-v1", "--bot", "house:greedy", "--bot", "house:random"]


def saloon(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_run_locally_then_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "s.db")
    code, out, err = saloon(
        capsys, "season", "run", "w1", *WSD, "--rounds", "2", "--store", db, "--local"
    )
    assert code == 0, err
    assert "4 matches recorded here" in out and "house:greedy" in out and "standings" in out
    code, out, _ = saloon(capsys, "season", "status", "w1", "--store", db)
    assert code == 0
    assert "w1 (done): 4 done, 0 running, 0 failed, 0 remaining of 4" in out
    code, out, _ = saloon(capsys, "season", "status", "w1", "--store", db, "--follow")
    assert code == 0 and "4/4" in out  # the progress bar, complete
    # Running it again plays nothing: every match is recorded once.
    code, out, _ = saloon(capsys, "season", "run", "w1", "--store", db, "--local")
    assert code == 0 and "0 matches recorded here" in out
    with Store.open(db) as store:
        results = store.results(season_id="w1")
    assert [r.match_id for r in results] == ["w1-0", "w1-1", "w1-2", "w1-3"]
    assert [r.seats[0].bot for r in results] == ["house:greedy", "house:random"] * 2


def test_create_is_idempotent_and_refuses_a_changed_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    assert saloon(capsys, "season", "create", "c1", *WSD, "--store", db)[0] == 0
    assert saloon(capsys, "season", "create", "c1", *WSD, "--store", db)[0] == 0
    code, _, err = saloon(capsys, "season", "create", "c1", *WSD, "--seed", "5", "--store", db)
    assert code == 1 and err.startswith("saloon: error:") and "different spec" in err


def test_cancel_drops_the_unplayed_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    saloon(capsys, "season", "create", "x1", *WSD, "--store", db)
    code, out, _ = saloon(
        capsys, "season", "cancel", "x1", "--store", db, "--redis", "redis://127.0.0.1:1/0"
    )
    assert code == 0 and "2 unplayed matches dropped" in out
    code, out, _ = saloon(
        capsys, "season", "status", "x1", "--store", db, "--redis", "redis://127.0.0.1:1/0"
    )
    assert "x1 (cancelled): 0 done" in out and "0 remaining of 2" in out
    code, _, err = saloon(capsys, "season", "run", "x1", "--store", db, "--local")
    assert code == 1 and "cancelled" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--game", "nope-v1", "--bot", "house:random"], "nope-v1"),
        (["--game", "western-showdown-v1", "--bot", "house:random"], "cannot fill"),
        ([*WSD, "--seats", "3"], "seats"),
    ],
)
def test_bad_seasons_print_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = saloon(
        capsys, "season", "create", "b1", *args, "--store", str(tmp_path / "s.db")
    )
    assert code == 1 and out == ""
    assert err.startswith("saloon: error:") and message in err and len(err.splitlines()) == 1


def test_a_missing_bot_path_fails_the_match_not_the_season(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    gone = str(tmp_path / "gone.py")
    args = ["--game", "western-showdown-v1", "--bot", gone, "--bot", "house:random"]
    _, out, _ = saloon(capsys, "season", "run", "m1", *args, "--store", db, "--local")
    assert "0 matches recorded here" in out
    _, out, _ = saloon(capsys, "season", "status", "m1", "--store", db)
    assert "0 done, 0 running, 2 failed, 0 remaining of 2" in out


def test_season_run_exits_1_and_says_so_when_matches_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    gone = str(tmp_path / "gone.py")
    bots = ["--bot", "house:random", "--bot", "house:greedy", "--bot", gone]
    args = ["--game", "seizure-v1", "--seats", "2", *bots]
    code, out, err = saloon(capsys, "season", "run", "f1", *args, "--store", db, "--local")
    assert code == 1
    recorded = re.search(r"(\d+) matches recorded here", out)
    failed = re.search(r"(\d+) of (\d+) matches failed", err)
    assert recorded and failed, (out, err)
    assert int(recorded[1]) > 0 and int(failed[1]) > 0
    assert int(recorded[1]) + int(failed[1]) == int(failed[2])
    assert len(err.splitlines()) == 1 and "gone.py" in err
    # All recorded: 0.
    code, _, err = saloon(capsys, "season", "run", "ok", *WSD, "--store", db, "--local")
    assert code == 0 and err == ""


def test_season_start_leaves_a_finished_season_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], redis_url: str
) -> None:
    import uuid

    from saloon.worker.queue.season_queue import SeasonQueue, connect

    db = str(tmp_path / "s.db")
    queue = f"test-start-done-{uuid.uuid4().hex[:8]}"
    try:
        code, _, err = saloon(capsys, "season", "run", "d1", *WSD, "--store", db, "--local")
        assert code == 0, err
        code, out, _ = saloon(capsys, "season", "status", "d1", "--store", db)
        assert "(done)" in out
        start = ["season", "start", "d1", "--store", db, "--redis", redis_url, "--queue", queue]
        code, out, err = saloon(capsys, *start)
        assert code == 0, err
        assert "0 matches enqueued" in out
        with Store.open(db) as store:
            row = store.season("d1")
            assert row is not None and row.status.value == "done"
    finally:
        SeasonQueue(connect(redis_url), queue).purge()


def test_the_demo_covers_every_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seasons = demo_seasons(1)
    assert sorted(s.game for s in seasons) == sorted(game_ids())
    for season in seasons:
        assert expand(season)  # every demo season is a valid, non-empty schedule
    code, out, err = saloon(capsys, "demo", "--rounds", "1", "--game", "western-showdown-v1")
    assert code == 0, err
    assert "western-showdown-v1: 6 matches" in out
    for bot in ("house:random", "house:greedy", "house:search"):
        assert bot in out
    # Printed once: the leaderboard, not the standings as well.
    assert out.count("· season demo-western-showdown-v1") == 1
    assert "standings" not in out


def test_season_results_come_in_schedule_order_with_their_deals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    args = [*WSD, "--bot", "house:greedy#2", "--duplicate", "--store", db, "--local"]
    assert saloon(capsys, "season", "run", "d1", *args)[0] == 0
    with Store.open(db) as store:
        rows = season_results(store, "d1")
        records = [store.match_record(r.result.match_id) for r in rows]
    assert [r.index for r in rows] == list(range(6))
    assert [r.deal for r in rows] == [0, 0, 1, 1, 2, 2]
    for first, second in zip(records[::2], records[1::2], strict=True):
        assert first and second and first["seed"] == second["seed"]
        # the same deal: the same first chance event (the shuffle), seats swapped
        assert first["log"][0] == second["log"][0]
        assert [s["bot"] for s in first["seats"]] == [s["bot"] for s in second["seats"]][::-1]


def test_the_season_commands_keep_saloon_play_light() -> None:
    """Building the parser (every `saloon` command does) imports no rq, redis, SQL or rich."""
    import subprocess
    import sys

    code = (
        "import sys; from saloon.arena.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('rq', 'redis', 'sqlalchemy', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr
