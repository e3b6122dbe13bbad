"""``house:search`` and its graded variants ``house:search-N``: rollouts of each game's
``house:greedy`` over determinizations (:class:`saloon.sdk.search.RolloutSearch`): greedy's
choice is the prior, greedy's rules play every seat in the playouts (read straight off the
engine state: :mod:`saloon.sdk.house.playouts`), and another action is played only where
the playouts say it does better. ``house:search-N`` spends N playouts per
decision; ``house:search`` a per-game default (:attr:`GameKnowledge.iterations`).

Reproducible: the playout budget alone decides how much is searched, never the clock, so
the same seed gives the same moves on a quiet machine and a loaded one. House bots play in
the referee's process, unclocked; :data:`SAFETY_MS` only stops a search that would
otherwise hang a match, and the match record's ``notes`` say when it fired (that move then
depended on the machine). Measured strength: tests/unit/test_search_bots.py,
bench/search.py, docs/strength.md.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from saloon.games import TERMINAL, State
from saloon.games.seas_of_strife.engine import SeasOfStrifeState
from saloon.games.seizure.cards import POINTS
from saloon.games.seizure.engine import SeizureState
from saloon.sdk.bot import Bot, MatchInfo
from saloon.sdk.house.playouts import (
    greedy_seizure_playout,
    greedy_strife_playout,
    greedy_strife_rollout,
    greedy_western_playout,
)
from saloon.sdk.house.seas_of_strife import GreedyBot as StrifeGreedy
from saloon.sdk.house.seizure import GreedyBot as SeizureGreedy
from saloon.sdk.house.western_showdown import GreedyBot as ShowdownGreedy
from saloon.sdk.search import (
    DEFAULT_ITERATIONS,
    Evaluation,
    InformationSetSearch,
    Playout,
    Rollout,
    RolloutSearch,
    SearchBot,
    SearchBudget,
    Searcher,
    random_playout,
    round_horizon,
    score_rewards,
    squash,
)

#: The graded variants: ``house:search-N`` for each N here (``house:search`` is the default).
GRADES = (25, 50, 100, 200, 400, 800)
#: The per-decision safety cap of every house search, in milliseconds: far above what the
#: largest grade needs (house:search-800's dearest Western Legends: Showdown decisions
#: take a few seconds on one busy core), so it fires only for a search that is stuck or
#: starved, and the record notes it. Not a share of the decision clock: house bots are not clocked.
SAFETY_MS = 30_000.0
#: Western: how much of the reward is the cards-won margin (the rest is the win), and the
#: margin's scale.
MARGIN_SHARE = 0.5
WESTERN_MARGIN_SCALE = 3.0
#: Seas of Strife playouts run to the end of the hand (None; the playout loop made that
#: cheap, and the per-playout costs then weigh less against the engine's). Against the
#: former 12 seat decisions, games (of 100; 80 at 4 seats) placed better / worse than the
#: greedy seats' average at 40 playouts: 3 seats 58/18 vs 50/21, 4 seats 64/16 vs 58/21,
#: 5 seats 57/32 and 71/23 (seeds 100..199) vs 73/21, 6 seats 71/24 vs 66/31 (30
#: decisions measured about as strong as a whole hand). A depth-limited playout
#: (``playout_depth``) is scored by the tricks taken so far.
STRIFE_PLAYOUT_DEPTH: int | None = None
TRICK_SCALE = 1.5
#: Seizure playouts stop after this many seat decisions and read the hands' points.
SEIZURE_PLAYOUT_DEPTH = 30
#: Playouts per decision of house:search (Western's run to the end of the game, and its
#: greedy scores a dozen boards per decision: the dearest playout of the three).
SEIZURE_ITERATIONS = 200
WESTERN_ITERATIONS = 24
STRIFE_ITERATIONS = 40


def cards_won_rewards(state: State, root_scores: Sequence[float]) -> list[float]:
    """Western Legends: Showdown (one game): the win, plus a share for the cards won
    margin (a smoother signal than the win alone)."""
    wins = score_rewards(state, root_scores)
    if state.current_player() != TERMINAL or len(wins) != 2:
        return wins
    won = state.scores()
    margin = squash([won[0], won[1]], WESTERN_MARGIN_SCALE)
    return [(1 - MARGIN_SHARE) * w + MARGIN_SHARE * m for w, m in zip(wins, margin, strict=True)]


def tricks_rewards(state: State, root_scores: Sequence[float]) -> list[float]:
    """Seas of Strife: mid-hand, each seat's points plus the tricks it took this hand."""
    if state.current_player() == TERMINAL or round_horizon(state):
        return score_rewards(state, root_scores)
    taken = cast(SeasOfStrifeState, state).taken
    points = state.scores()
    return squash(
        [r - p - t for p, t, r in zip(points, taken, root_scores, strict=True)], TRICK_SCALE
    )


def hand_points_rewards(state: State, root_scores: Sequence[float]) -> list[float]:
    """Seizure: mid-round, each seat's total plus what its hand would score now."""
    if state.current_player() == TERMINAL or round_horizon(state):
        return score_rewards(state, root_scores)
    hands = cast(SeizureState, state).hands
    totals = state.scores()
    projected = [t + sum(POINTS[c] for c in h) for t, h in zip(totals, hands, strict=True)]
    return squash([r - p for p, r in zip(projected, root_scores, strict=True)])


@dataclass(frozen=True)
class GameKnowledge:
    """What the house search adds for one game (by full game id)."""

    playout: Playout = random_playout
    evaluate: Evaluation = score_rewards
    playout_depth: int | None = None
    #: The game's greedy house bot: the search's prior (its choice stands unless the
    #: search finds better; ``playout`` is its engine-level copy).
    greedy: type[Bot] | None = None
    #: Rollouts of the base policy (RolloutSearch) instead of SO-ISMCTS.
    rollout: bool = False
    #: Playouts (iterations) per decision of ``house:search`` at this game.
    iterations: int = DEFAULT_ITERATIONS
    #: The whole playout as one game-specific loop (``playout``'s choices), if any.
    playout_loop: Rollout | None = None


KNOWLEDGE: dict[str, GameKnowledge] = {
    "seas-of-strife-v1": GameKnowledge(
        playout=greedy_strife_playout,
        evaluate=tricks_rewards,
        playout_depth=STRIFE_PLAYOUT_DEPTH,
        greedy=StrifeGreedy,
        rollout=True,
        iterations=STRIFE_ITERATIONS,
        playout_loop=greedy_strife_rollout,
    ),
    "western-showdown-v1": GameKnowledge(
        playout=greedy_western_playout,
        evaluate=cards_won_rewards,
        greedy=ShowdownGreedy,
        rollout=True,
        iterations=WESTERN_ITERATIONS,
    ),
    "seizure-v1": GameKnowledge(
        playout=greedy_seizure_playout,
        evaluate=hand_points_rewards,
        playout_depth=SEIZURE_PLAYOUT_DEPTH,
        greedy=SeizureGreedy,
        rollout=True,
        iterations=SEIZURE_ITERATIONS,
    ),
}


class Search(SearchBot):
    """The default budget: :attr:`GameKnowledge.iterations` playouts per decision."""

    #: False: the game's own default iteration count (KNOWLEDGE); True: BUDGET's.
    GRADED = False
    BUDGET = SearchBudget(DEFAULT_ITERATIONS, SAFETY_MS)

    def on_match_start(self, info: MatchInfo) -> None:
        # Not BUDGET.within(info.decision_ms): a share of the clock would let the machine's
        # load decide how much is searched.
        self.search = self.make_search(info, self.BUDGET)

    def make_search(self, info: MatchInfo, budget: SearchBudget) -> Searcher:
        knowledge = KNOWLEDGE.get(info.game, GameKnowledge())
        if not self.GRADED:
            budget = SearchBudget(knowledge.iterations, budget.time_ms)
        rng = random.Random(info.seed)
        prior = knowledge.greedy().act if knowledge.greedy is not None else None
        playout = knowledge.playout
        if knowledge.rollout:
            return RolloutSearch(
                info.game,
                info.seat,
                rng,
                budget,
                playout=playout,
                evaluate=knowledge.evaluate,
                playout_depth=knowledge.playout_depth,
                prior=prior,
                rollout=knowledge.playout_loop,
            )
        return InformationSetSearch(
            info.game,
            info.seat,
            rng,
            budget,
            playout=playout,
            evaluate=knowledge.evaluate,
            playout_depth=knowledge.playout_depth,
            prior=prior,
            rollout=knowledge.playout_loop,
        )


def graded(iterations: int) -> type[Search]:
    """house:search-N: ``iterations`` playouts per decision (the same safety cap)."""
    return type(
        f"Search{iterations}",
        (Search,),
        {
            "__doc__": f"{iterations} playouts per decision.",
            "__module__": __name__,
            "GRADED": True,
            "BUDGET": SearchBudget(iterations, SAFETY_MS),
        },
    )


Search25 = graded(25)
Search50 = graded(50)
Search100 = graded(100)
Search200 = graded(200)
Search400 = graded(400)
Search800 = graded(800)
