"""`saloon leaderboard` and `saloon bot show` over a real results store (SQLite and
PostgreSQL), filled with real matches of in-process bots."""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from saloon.arena.cli import main, season_leaderboard
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.bot import Bot, Decision
from saloon.sdk.house import make_house_bot
from saloon.worker.store.rows import ScheduledMatch
from saloon.worker.store.store import Store
from tests.databases import postgres_schema

GAME = "seas-of-strife-v1"
#: Season s1: four bots in every match; alice is a stored bot (plays like house:greedy),
#: dave crashes in his 3rd match of the season; carol is scheduled only in the aborted one.
S1 = ["house:greedy", "house:random", "bot:alice@v1", "bot:dave@d1"]
#: Season s2: duplicate deals (each deal replayed 3 times, seats rotated); alice is now v2.
S2 = ["house:greedy", "house:random", "bot:alice@v2"]


class Crasher(Bot):
    """Plays greedy, but its code raises on its first decision when told to."""

    def __init__(self, crash: bool) -> None:
        self.crash = crash
        self.greedy = make_house_bot(GAME, "greedy")

    def act(self, decision: Decision[Any, Any]) -> Any:
        if self.crash:
            raise RuntimeError("boom")
        return self.greedy.act(decision)


def seat(bot_id: str, crash: bool = False) -> InProcessSeat:
    name = bot_id.removeprefix("house:")
    if bot_id.startswith("bot:dave"):
        return InProcessSeat(Crasher(crash), bot_id, bot_id.split("@")[1])
    if bot_id.startswith("bot:"):
        return InProcessSeat(make_house_bot(GAME, "greedy"), bot_id, bot_id.split("@")[1])
    return InProcessSeat(make_house_bot(GAME, name), bot_id, "saloon-test")


def seasons() -> list[tuple[str, list[ScheduledMatch], list[dict[str, Any]]]]:
    """Both seasons: (id, schedule, records in schedule order). Played once per module."""
    out = []
    s1_specs, s1_records = [], []
    for i in range(8):
        bots = S1[i % 4 :] + S1[: i % 4]
        s1_specs.append(ScheduledMatch(f"s1-{i}", i, {"seats": bots, "seed": i}))
        record = play_match(GAME, [seat(b, crash=(i == 2)) for b in bots], i, match_id=f"s1-{i}")
        s1_records.append(record.to_json())
    # s1-8: carol's only match, aborted by the infrastructure
    bots = ["bot:carol@c1", "house:random", "house:greedy"]
    s1_specs.append(ScheduledMatch("s1-8", 8, {"seats": bots, "seed": 8}))
    aborted = play_match(GAME, [seat("house:random"), seat("house:random"),
                                seat("house:greedy")], 8, match_id="s1-8").to_json()  # fmt: skip
    aborted["seats"][0]["bot"] = "bot:carol@c1"
    aborted.update(outcome="aborted", abort_reason="wall_clock")
    s1_records.append(aborted)
    out.append(("s1", s1_specs, s1_records))
    s2_specs, s2_records = [], []
    for deal in range(3):
        for turn in range(3):
            i = deal * 3 + turn
            bots = S2[turn:] + S2[:turn]
            s2_specs.append(ScheduledMatch(f"s2-{i}", i, {"seats": bots, "deal": deal}))
            record = play_match(GAME, [seat(b) for b in bots], 100 + deal, match_id=f"s2-{i}")
            s2_records.append(record.to_json())
    out.append(("s2", s2_specs, s2_records))
    return out


@pytest.fixture(scope="module")
def played() -> list[tuple[str, list[ScheduledMatch], list[dict[str, Any]]]]:
    return seasons()


def fill(url: str, played: Any, completion_order: random.Random | None = None) -> None:
    store = Store.open(url)
    try:
        store.add_bot("alice", "alice-owner")
        store.add_version("alice", "v1")
        store.add_version("alice", "v2")
        store.add_bot("carol", "carol-owner")
        store.add_version("carol", "c1")
        store.add_bot("dave", "dave-owner")
        store.add_version("dave", "d1")
        records = []
        for season_id, specs, recs in played:
            store.create_season(season_id, {"game": GAME}, specs)
            records.extend(recs)
        if completion_order is not None:
            completion_order.shuffle(records)  # the order workers happened to finish in
        for record in records:
            store.record_results([store.prepare_result(record["match_id"], record, {})])[0]
    finally:
        store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "saloon.db")
        return
    with postgres_schema("ratings") as url:
        yield url


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_leaderboard_formats_agree_and_completion_order_does_not_matter(
    store_url: str, played: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(store_url, played)
    code, text, _ = run(capsys, "leaderboard", "--game", GAME, "--store", store_url,
                        "--format", "json")  # fmt: skip
    assert code == 0
    board = json.loads(text)
    rows = board["rows"]
    assert board["scope"] == "all-time" and board["ladder"] == GAME
    rated = [r for r in rows if r["rank"] is not None]
    assert [r["rank"] for r in rated] == list(range(1, len(rated) + 1))
    assert [r["conservative"] for r in rated] == sorted((r["conservative"] for r in rated),
                                                        reverse=True)  # fmt: skip
    by_bot = {r["bot"]: r for r in rows}
    assert by_bot["alice"]["version"] == "v2" and by_bot["alice"]["owner"] == "alice-owner"
    assert by_bot["alice"]["matches"] == 8 + 9
    assert by_bot["house:greedy"]["owner"] == "house"
    assert by_bot["dave"]["faults"] >= 1
    carol = by_bot["carol"]  # scheduled, only in an aborted match: unrated, not zero
    assert carol["rank"] is None and carol["mu"] is None and carol["matches"] == 0
    assert rows[-1]["bot"] == "carol"
    assert board["rated_comparisons"] == 8 + 3  # s1's 8 matches, s2's 3 deals

    code, text, _ = run(capsys, "leaderboard", "--game", GAME, "--store", store_url,
                        "--format", "csv")  # fmt: skip
    lines = list(csv.DictReader(io.StringIO(text)))
    assert list(lines[0]) == board["columns"]
    assert [line["bot"] for line in lines] == [r["bot"] for r in rows]
    assert lines[-1]["rank"] == "" and lines[-1]["mu"] == ""

    code, text, _ = run(capsys, "leaderboard", "--game", GAME, "--store", store_url)
    assert code == 0 and "mu-3sigma" in text and "unrated" in text and "carol" in text

    page = tmp_path / "board.html"
    code, _, _ = run(capsys, "leaderboard", "--game", GAME, "--store", store_url,
                     "--format", "html", "--out", str(page))  # fmt: skip
    assert code == 0 and page.read_text().count('<svg class="chart"') == len(rated)

    # the same results recorded in another completion order: the same leaderboard
    if not store_url.startswith("postgres"):
        other = str(tmp_path / "shuffled.db")
        fill(other, played, random.Random(5))
        code, text, _ = run(capsys, "leaderboard", "--game", GAME, "--store", other,
                            "--format", "json")  # fmt: skip
        assert json.loads(text) == board


def test_season_leaderboard_and_bot_show(
    store_url: str, played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(store_url, played)
    code, text, _ = run(capsys, "leaderboard", "--game", GAME, "--season", "s2",
                        "--store", store_url, "--format", "json")  # fmt: skip
    board = json.loads(text)
    assert code == 0 and board["season"] == "s2" and board["scope"] == "season"
    assert {r["bot"] for r in board["rows"]} == {"house:greedy", "house:random", "alice"}
    assert all(r["matches"] == 9 for r in board["rows"])
    assert board["rated_comparisons"] == 3

    # what a season runner (saloon demo) prints through the report the saloon command hands it
    out = io.StringIO()
    with Store.open(store_url) as store:
        season_leaderboard(store, "s1", out)
    report = out.getvalue()
    assert "season s1" in report and "unrated" in report
    assert report.index("carol") > max(report.index(b) for b in ("alice", "dave", "house:random"))

    code, text, _ = run(capsys, "bot", "show", "dave", "--store", store_url)
    assert code == 0
    assert "dave-owner" in text and "d1" in text and "CRASH" in text and "boom" in text
    assert "played out" in text and f"rating on {GAME}" in text

    code, text, _ = run(capsys, "bot", "show", "alice", "--store", store_url)
    assert code == 0 and "v1" in text and "v2" in text


def test_user_errors_are_one_line(
    tmp_path: Path, played: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    url = str(tmp_path / "saloon.db")
    fill(url, played)
    for argv, needle in [
        (["leaderboard", "--game", GAME, "--season", "nope"], "no season 'nope'"),
        (["leaderboard", "--game", "no-such-game-v1"], "no-such-game-v1"),
        (["leaderboard", "--game", "seizure-v1", "--season", "s1"], "not seizure-v1"),
        (["leaderboard", "--game", "seizure-v1", "--option", "end=never"], "end"),
        (["bot", "show", "nobody"], "no bot 'nobody'"),
        (["leaderboard", "--game", GAME, "--out", str(tmp_path / "no" / "dir.html")],
         "cannot write"),
    ]:  # fmt: skip
        code, _, err = run(capsys, *argv, "--store", url)
        assert code == 1, argv
        assert err.startswith("saloon: error:") and needle in err and err.count("\n") == 1, err
    missing = tmp_path / "missing.db"
    code, _, err = run(capsys, "leaderboard", "--game", GAME, "--store", str(missing))
    assert code == 1 and "no results store" in err and not missing.exists()
