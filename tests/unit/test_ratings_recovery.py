"""Recovery: a season among bots of known, ordered strength ranks them in true order.

Four Seas of Strife bots, all four in every match (seats rotated), 200 seeded matches:
house:greedy, greedy playing a random legal move with probability 0.35, then 0.7, and
house:random. The premise (each is stronger than the next) is checked on the same
matches with a one-sided sign test on head-to-head placings, p < 0.01 per neighbour pair;
the leaderboard must then list them in that order. Deterministic: fixed seeds.
"""

from __future__ import annotations

import random
from itertools import pairwise
from math import comb
from typing import Any

from saloon.ratings.fold import fold
from saloon.ratings.ladders import ladder_for
from saloon.ratings.leaderboard import build_leaderboard
from saloon.ratings.results import Result, SeatResult
from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.sdk.bot import Bot, Decision, MatchInfo
from saloon.sdk.house import make_house_bot

GAME = "seas-of-strife-v1"
MATCHES = 200
#: Sign-test threshold for "stronger than the next bot" on these matches.
P_THRESHOLD = 0.01


class SloppyGreedy(Bot):
    """house:greedy that plays a uniformly random legal move with probability ``p``."""

    def __init__(self, p: float) -> None:
        self.p = p
        self.greedy = make_house_bot(GAME, "greedy")
        self.rng = random.Random(0)

    def on_match_start(self, info: MatchInfo) -> None:
        self.rng = random.Random(info.seed)
        self.greedy.on_match_start(info)

    def act(self, decision: Decision[Any, Any]) -> Any:
        if self.rng.random() < self.p:
            return decision.legal[self.rng.randrange(len(decision.legal))]
        return self.greedy.act(decision)


#: Strongest first: the true order.
BOTS: dict[str, Any] = {
    "house:greedy": lambda: make_house_bot(GAME, "greedy"),
    "sloppy-0.5": lambda: SloppyGreedy(0.5),
    "sloppy-0.8": lambda: SloppyGreedy(0.8),
    "house:random": lambda: make_house_bot(GAME, "random"),
}


def sign_test_p(above: int, below: int) -> float:
    """One-sided p-value of ``above`` or more wins out of ``above + below`` at 1/2."""
    n = above + below
    return sum(comb(n, k) for k in range(above, n + 1)) / 2**n


def test_a_season_of_ordered_bots_ranks_them_in_true_order() -> None:
    names = list(BOTS)
    results = []
    for i in range(MATCHES):
        order = names[i % 4 :] + names[: i % 4]  # every bot in every seat equally often
        seats = [InProcessSeat(BOTS[name](), name, "1") for name in order]
        record = play_match(GAME, seats, seed=10_000 + i, match_id=f"recovery-{i}")
        seat_results = tuple(
            SeatResult(s.bot, "1", record.ranks[s.seat], record.scores[s.seat])
            for s in record.seats
        )
        results.append(Result(ladder_for(GAME, record.options), record.match_id, (0, i),
                              seat_results))  # fmt: skip
    standings = fold(results, results[0].ladder)
    for stronger, weaker in pairwise(names):
        h2h = standings.head_to_head[(stronger, weaker)]
        p = sign_test_p(h2h.above, h2h.below)
        assert p < P_THRESHOLD, f"premise: {stronger} > {weaker} not shown (p={p:.3g})"
    board = build_leaderboard(standings)
    assert [row.bot for row in board.rows] == names
    assert all(row.matches == MATCHES for row in board.rows)
