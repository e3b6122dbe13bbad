"""The season's standings (saloon.worker.seasons.standings) and the fold's statistics
(saloon.ratings.fold.BotStats) from the same store rows: where their definitions agree they
give the same figures, and where they differ (a shared first, a bot's versions) each keeps
its own, as their docstrings say.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from saloon.ratings.fold import fold
from saloon.ratings.source import to_result
from saloon.referee.record import Outcome
from saloon.worker.seasons.standings import standings
from saloon.worker.store.rows import ResultRow, SeatRow

GAME = "seizure-v1"


def row(index: int, seats: list[tuple[str, int | None, float | None]], **kw: object) -> ResultRow:
    """A stored result of season s1: (bot id, rank, score) per seat."""
    outcome = kw.get("outcome", Outcome.COMPLETED)
    assert isinstance(outcome, Outcome)
    faults = kw.get("faults", [0] * len(seats))
    assert isinstance(faults, list)
    return ResultRow(
        match_id=f"s1-{index:06d}",
        season_id="s1",
        index=index,
        game=GAME,
        options={},
        seed=index,
        outcome=outcome,
        abort_reason="",
        seats=tuple(
            SeatRow(i, bot, bot.partition("@")[2], score, rank, False, faults[i])
            for i, (bot, rank, score) in enumerate(seats)
        ),
        saloon_version="test",
        finished_at=datetime(2024, 1, 1, tzinfo=UTC),
    )


ROWS = [
    row(0, [("house:greedy", 0, 10.0), ("house:random", 0, 10.0)]),  # a shared first
    row(1, [("bot:x@v1", 0, 3.0), ("house:random", 1, 1.0)], faults=[0, 2]),
    row(2, [("bot:x@v1", 0, 5.0), ("house:random", 1, 2.0), ("bot:x@v2", 2, 1.0)]),
    row(3, [("house:greedy", None, None), ("house:random", None, None)], outcome=Outcome.ABORTED),
]


def test_standings_count_every_seat_and_a_shared_first_as_a_win() -> None:
    """Standings: one line per seat's bot id (each version apart), rank 0 is a win."""
    lines = {s.bot: s for s in standings(ROWS)}
    assert [s.bot for s in standings(ROWS)] == [
        "bot:x@v1",
        "house:greedy",
        "house:random",
        "bot:x@v2",
    ]
    assert (lines["house:greedy"].matches, lines["house:greedy"].wins) == (1, 1)
    assert (lines["house:random"].matches, lines["house:random"].wins) == (3, 1)
    assert lines["house:random"].mean_rank == pytest.approx(2 / 3)
    assert lines["house:random"].faults == 2
    assert (lines["bot:x@v1"].matches, lines["bot:x@v1"].wins) == (2, 2)
    assert (lines["bot:x@v2"].matches, lines["bot:x@v2"].mean_rank) == (1, 2.0)


def test_the_fold_counts_a_bot_once_a_match_and_only_a_sole_first_as_a_win() -> None:
    """BotStats: one line per bot name (versions together), a win is first alone."""
    results = [to_result(r, 1, None, {}) for r in ROWS]
    stats = fold(results, results[0].ladder).stats
    assert set(stats) == {"x", "house:greedy", "house:random"}
    assert (stats["house:greedy"].matches, stats["house:greedy"].wins) == (1, 0)
    assert (stats["house:random"].matches, stats["house:random"].wins) == (3, 0)
    assert stats["house:random"].placing_sum == 5
    # x's two versions in match 2 are one match at the mean of their places (1 and 3).
    assert (stats["x"].matches, stats["x"].wins, stats["x"].placing_sum) == (2, 2, 3.0)
    assert stats["x"].versions == {"v1": 2}  # a match counts for the version of its first seat


def test_both_give_the_same_figures_where_their_definitions_agree() -> None:
    """One seat per bot, no shared first: matches, wins, places, points, faults agree."""
    rng = random.Random(3)
    bots = [f"house:b{i}" for i in range(5)]
    rows = []
    for index in range(60):
        seated = rng.sample(bots, rng.randint(2, 4))
        places = list(range(len(seated)))
        rng.shuffle(places)
        seats = [(b, p, float(rng.randint(-5, 20))) for b, p in zip(seated, places, strict=True)]
        rows.append(row(index, seats, faults=[rng.randint(0, 1) for _ in seated]))
    lines = {s.bot: s for s in standings(rows)}
    results = [to_result(r, 1, None, {}) for r in rows]
    stats = fold(results, results[0].ladder).stats
    assert set(lines) == set(stats)
    for bot, line in lines.items():
        s = stats[bot]
        assert (line.matches, line.wins, line.faults) == (s.matches, s.wins, s.faults)
        assert line.mean_rank + 1 == pytest.approx(s.avg_placing)
        assert line.mean_score == pytest.approx(s.avg_points)
