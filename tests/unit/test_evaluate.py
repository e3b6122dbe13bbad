"""``saloon eval``: its schedule (seats rotated, duplicate deals), its statistics, and the
command over real matches on two processes."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

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


HASTY = '''
import sys
from pathlib import Path

from saloon.sdk.search import SearchBot, SearchBudget


class Hasty(SearchBot):
    """Capped on purpose: a budget no machine meets in 1 ms; one INVALID answer a match."""

    BUDGET = SearchBudget(iterations=10_000_000, time_ms=1)

    def on_match_start(self, info):
        super().on_match_start(info)
        self.first = True

    def act(self, decision):
        if self.first:
            self.first = False
            print("first decision", decision.index, file=sys.stderr)
            return "not a legal action"
        return super().act(decision)
'''


def test_eval_json_carries_faults_capped_decisions_stderr_and_a_load_warning(
    tmp_path: Path,
) -> None:
    """Issue 30: eval said nothing of decisions a bot's own time cap cut short (its moves
    then depend on the machine's load), nor of its stderr or notes."""
    bot = tmp_path / "hasty.py"
    bot.write_text(HASTY)
    argv = [*SALOON, "eval", str(bot), "--game", "western-showdown-v1", "--vs", "house:random"]
    argv += ["-n", "2", "--jobs", "1"]
    out = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr  # faults, but neither a crash nor played out
    summary = json.loads(out.stdout)
    assert summary["faults"] == {"INVALID": 2}
    assert summary["decisions"] > 20
    # Every decision but the INVALID one ran the search, and each was capped and noted.
    assert summary["capped"] == summary["decisions"] - 2 and summary["capped_matches"] == 2
    assert summary["notes"] == summary["capped"]
    # Its print and the SDK runtime's line on the INVALID answer, in each match.
    assert summary["stderr_lines"] == 4 and summary["stderr_matches"] == 2
    assert summary["load_dependent"] is True
    assert "depend on the machine's speed and load" in summary["warnings"][0]
    for match in summary["outcomes"]:
        assert match["faults"] == {"INVALID": 1}
        assert match["capped_note"].startswith("search: the time cap stopped decision ")
        assert (
            match["first_stderr"].startswith("[decision ")
            and "first decision" in match["first_stderr"]
        )
    text = subprocess.run(argv, capture_output=True, text=True, timeout=300).stdout
    assert "  faults: the bot's 2 INVALID in 2 matches; it crashed or was played out in 0" in text
    # The capped searches play differently from run to run: the counts move, the lines stay.
    decisions = next(line for line in text.splitlines() if line.startswith("  decisions: "))
    asked, capped = int(decisions.split()[1]), int(decisions.split()[3])
    assert 0 < capped == asked - 2, decisions
    assert decisions.endswith(" cut short by the bot's own time cap (in 2 matches)")
    assert "  stderr: 4 lines in 2 matches" in text
    assert "  warning: " in text and "depend on the machine's speed and load" in text


def test_eval_of_an_uncapped_bot_has_no_load_warning() -> None:
    argv = [*SALOON, "eval", "house:search-25", "--game", "western-showdown-v1", "-n", "1"]
    out = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=300)
    summary = json.loads(out.stdout)
    assert summary["capped"] == 0 and summary["faults"] == {} and summary["warnings"] == []
    assert summary["load_dependent"] is False and summary["decisions"] > 10
