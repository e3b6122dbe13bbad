"""``saloon eval``: its schedule (seats rotated, duplicate deals), its statistics, and the
command over real matches on two processes."""

from __future__ import annotations

import json
import math
import subprocess
import sys

from saloon.referee.evaluate import (
    MatchOutcome,
    schedule,
    sign_test_p,
    summarize,
    wilson,
)

SALOON = [sys.executable, "-m", "saloon.arena.cli"]


def test_the_bot_plays_every_seat_and_duplicate_deals_share_a_seed() -> None:
    plain = schedule("me", ["a", "b"], 3, 6, seed=1, duplicate=False)
    assert [m.seat for m in plain] == [0, 1, 2, 0, 1, 2]
    assert all(m.bots[m.seat] == "me" for m in plain)
    assert plain[1].bots == ("b", "me", "a")  # the table rotated by one seat
    assert len({m.seed for m in plain}) == 6
    dup = schedule("me", ["a", "b"], 3, 6, seed=1, duplicate=True)
    assert [m.deal for m in dup] == [0, 0, 0, 1, 1, 1]
    assert len({m.seed for m in dup[:3]}) == 1 and dup[0].seed != dup[3].seed
    assert schedule("me", ["a"], 4, 1, 0, False)[0].bots == ("me", "a", "a", "a")


def test_sign_test_and_wilson_interval_values() -> None:
    assert sign_test_p(10, 2) == sum(math.comb(12, k) for k in range(10, 13)) / 2**12
    assert sign_test_p(0, 0) == 1.0
    low, high = wilson(14, 20)
    assert (round(low, 3), round(high, 3)) == (0.481, 0.855)


def outcome(index: int, rank: int, opponents_rank: float) -> MatchOutcome:
    return MatchOutcome(index, index, 0, rank, opponents_rank, 0, 0, True, False, False, False)


def test_summary_of_two_seat_matches_counts_a_tie_half() -> None:
    outcomes = [outcome(0, 0, 1), outcome(1, 0, 1), outcome(2, 1, 0), outcome(3, 0, 0)]
    summary = summarize("me", "g", ["x"], 2, 0, False, outcomes)
    assert (summary.wins, summary.losses, summary.ties) == (2, 1, 1)
    assert summary.win_rate == 2.5 / 4
    assert summary.p_value == sign_test_p(2, 1)


def test_eval_plays_seeded_matches_on_two_processes() -> None:
    argv = [*SALOON, "eval", "house:greedy", "--game", "western-showdown-v1", "--vs"]
    argv += ["house:random", "-n", "6", "--jobs", "2", "--duplicate", "--json"]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    summary = json.loads(first.stdout)
    assert summary["matches"] == 6 and summary["wins"] + summary["losses"] == 6
    assert summary["wins"] >= 5, summary  # greedy beats random nearly always
    assert [o["seat"] for o in summary["outcomes"]] == [0, 1, 0, 1, 0, 1]
    again = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(again.stdout) == summary  # seeded: the same matches again
    text = subprocess.run(argv[:-1], capture_output=True, text=True, timeout=120, check=True)
    assert "win rate" in text.stdout and "against 'no better than the opponents'" in text.stdout


def test_eval_refuses_a_table_the_game_does_not_take() -> None:
    out = subprocess.run(
        [*SALOON, "eval", "house:random", "--game", "western-showdown-v1", "--seats", "3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1
    assert out.stderr.startswith("saloon: error: western-showdown-v1 takes 2-2 seats, not 3")
