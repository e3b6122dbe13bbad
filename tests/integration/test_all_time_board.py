"""The all-time board over a real store: who it lists, and from which seasons."""

from __future__ import annotations

from pathlib import Path

from saloon.ratings.boards import game_leaderboard
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.house import make_house_bot
from saloon.worker.store.rows import ScheduledMatch
from saloon.worker.store.store import Store

GAME = "western-showdown-v1"


def _record(store: Store, match_id: str, bots: list[str], seed: int) -> None:
    seats = [InProcessSeat(make_house_bot(GAME, b.removeprefix("house:")), b, "t") for b in bots]
    store.record_results(
        [
            store.prepare_result(
                match_id, play_match(GAME, seats, seed, match_id=match_id).to_json(), {}
            )
        ]
    )[0]


def test_all_time_board_lists_bots_scheduled_in_a_season_without_results(
    tmp_path: Path,
) -> None:
    """Regression: a bot scheduled only in a season that has no result yet was missing."""
    with Store.open(tmp_path / "s.db") as store:
        played = ["house:greedy", "house:random"]
        store.create_season(
            "a", {"game": GAME}, [ScheduledMatch("a-0", 0, {"seats": played, "seed": 1})]
        )
        _record(store, "a-0", played, 1)
        waiting = ["bot:zed@z1", "house:greedy"]
        store.create_season(
            "b", {"game": GAME}, [ScheduledMatch("b-0", 0, {"seats": waiting, "seed": 2})]
        )
        board, _others = game_leaderboard(store, GAME)
    rows = {row.bot: row for row in board.rows}
    assert set(rows) == {"house:greedy", "house:random", "zed"}
    assert rows["zed"].rank is None and rows["zed"].matches == 0
    assert board.rows[-1].bot == "zed"  # unrated last
    assert all(rows[b].rank is not None for b in played)
