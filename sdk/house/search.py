"""``house:search`` and its graded variants ``house:search-N``: information-set search
(:mod:`saloon.sdk.search`) with N iterations per decision (200 for ``house:search``), each
capped at 200 ms and a quarter of the decision clock, plus what a bot author would add
per game: a playout policy and an evaluation read off the engine state (:data:`KNOWLEDGE`,
by full game id). Measured strength: tests/unit/test_search_bots.py, bench/search.py.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from saloon.referee.games import TERMINAL, State
from saloon.referee.games.seas_of_strife.engine import PLAY_CARD as STRIFE_PLAY
from saloon.referee.games.seas_of_strife.engine import trick_winner_index
from saloon.referee.games.seizure.cards import POINTS
from saloon.referee.games.seizure.engine import GIVE_CARD
from saloon.referee.games.western_showdown.cards import condition_met
from saloon.referee.games.western_showdown.engine import (
    ACTIVATE,
    DETERMINATION_EXTRA,
    NO,
    TURN,
    YES,
)
from saloon.sdk.bot import Bot, MatchInfo
from saloon.sdk.house.western_showdown import GreedyBot as ShowdownGreedy
from saloon.sdk.search import (
    DEFAULT_TIME_MS,
    Evaluation,
    InformationSetSearch,
    Playout,
    SearchBot,
    SearchBudget,
    random_playout,
    round_horizon,
    score_rewards,
    squash,
)

#: The graded variants: ``house:search-N`` for each N here (``house:search`` is the default).
GRADES = (25, 50, 100, 200, 400, 800)
#: Share of playout decisions made at random by the heuristic policies (keeps playouts
#: varied: a deterministic policy would make every playout of a sample the same).
EPSILON = 0.25
#: Western: how much of the reward is the cards-won margin (the rest is the win), and the
#: margin's scale.
MARGIN_SHARE = 0.5
WESTERN_MARGIN_SCALE = 3.0
#: Western playouts: how much the opponent's best immediate take counts against a move.
THREAT_WEIGHT = 0.7
#: Western playouts: how often an ability is used when offered.
ACTIVATE_SHARE = 0.8
#: Seas of Strife playouts stop after this many seat decisions (a few tricks: the rest of
#: a hand played at random is mostly noise) and count the tricks taken.
STRIFE_PLAYOUT_DEPTH = 12
TRICK_SCALE = 1.5
#: Seizure playouts stop after this many seat decisions and read the hands' points.
SEIZURE_PLAYOUT_DEPTH = 24


def duck_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """Seas of Strife: follow with the highest card that does not take the trick as it
    stands, else the highest card; lead at random."""
    trick = state.trick_cards  # type: ignore[attr-defined]
    if not trick or rng.random() < EPSILON or state.decision_kind() != STRIFE_PLAY:
        return legal[int(rng.random() * len(legal))]
    size = len(trick)
    best = -1
    cards = list(trick)
    cards.append(0)
    for card in legal:
        cards[size] = card
        if trick_winner_index(cards) != size and card > best:
            best = card
    return best if best >= 0 else max(legal)


def shed_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """Seizure: give away the card worth the most points, anything else at random."""
    if rng.random() >= EPSILON and state.decision_kind() == GIVE_CARD:
        return max(legal, key=POINTS.__getitem__)
    return legal[int(rng.random() * len(legal))]


def take_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """Western Legends: Showdown: the placement that wins the most cards now minus
    THREAT_WEIGHT x the largest stack the opponent's hand (in this sample) could then win
    at once; abilities used ACTIVATE_SHARE of the time; other choices at random."""
    kind = state.decision_kind()
    if rng.random() < EPSILON:
        return legal[int(rng.random() * len(legal))]
    if kind == ACTIVATE:
        return YES if rng.random() < ACTIVATE_SHARE else NO
    if kind not in (TURN, DETERMINATION_EXTRA):
        return legal[int(rng.random() * len(legal))]
    stacks: list[list[int]] = state.stacks  # type: ignore[attr-defined]
    slot_of: list[int] = state.slot_of  # type: ignore[attr-defined]
    locations: list[int] = state.locations  # type: ignore[attr-defined]
    hands: list[list[int]] = state.hands  # type: ignore[attr-defined]
    replies = hands[1 - state.current_player()]

    def takeable(location: int, stack: list[int]) -> int:
        """The largest stack a reply could win at once at ``location``."""
        for other in replies:
            if condition_met(location, [*stack, other]):
                return len(stack) + 1
        return 0

    # What the opponent could take where this move changes nothing, per slot.
    base = [takeable(locations[k], stack) for k, stack in enumerate(stacks)]
    best = legal[int(rng.random() * len(legal))]
    best_value = -99.0
    for action in legal:
        if action >= 126:  # PASS / SKIP
            continue
        card, where = divmod(action, 7)
        slot = slot_of[where]
        grown = [*stacks[slot], card]
        if condition_met(where, grown):
            value = float(len(grown))
            there = 0
        else:
            value = 0.0
            there = takeable(where, grown)
        threat = max(there, *(t for k, t in enumerate(base) if k != slot))
        value -= THREAT_WEIGHT * threat
        if value > best_value:
            best, best_value = action, value
    return best


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
    taken: list[int] = state.taken  # type: ignore[attr-defined]
    points = state.scores()
    return squash(
        [r - p - t for p, t, r in zip(points, taken, root_scores, strict=True)], TRICK_SCALE
    )


def hand_points_rewards(state: State, root_scores: Sequence[float]) -> list[float]:
    """Seizure: mid-round, each seat's total plus what its hand would score now."""
    if state.current_player() == TERMINAL or round_horizon(state):
        return score_rewards(state, root_scores)
    hands: list[list[int]] = state.hands  # type: ignore[attr-defined]
    totals = state.scores()
    projected = [t + sum(POINTS[c] for c in h) for t, h in zip(totals, hands, strict=True)]
    return squash([r - p for p, r in zip(projected, root_scores, strict=True)])


@dataclass(frozen=True)
class GameKnowledge:
    """What the house search adds for one game (by full game id)."""

    playout: Playout = random_playout
    evaluate: Evaluation = score_rewards
    playout_depth: int | None = None
    #: The game's greedy house bot, whose choice the search starts from (a prior).
    greedy: type[Bot] | None = None


KNOWLEDGE: dict[str, GameKnowledge] = {
    "seas-of-strife-v1": GameKnowledge(
        playout=duck_playout, evaluate=tricks_rewards, playout_depth=STRIFE_PLAYOUT_DEPTH
    ),
    "western-showdown-v1": GameKnowledge(
        playout=take_playout, evaluate=cards_won_rewards, greedy=ShowdownGreedy
    ),
    "seizure-v1": GameKnowledge(
        playout=shed_playout, evaluate=hand_points_rewards, playout_depth=SEIZURE_PLAYOUT_DEPTH
    ),
}


class Search(SearchBot):
    """The default budget (saloon.sdk.search.DEFAULT_ITERATIONS, time-capped)."""

    def make_search(self, info: MatchInfo, budget: SearchBudget) -> InformationSetSearch:
        knowledge = KNOWLEDGE.get(info.game, GameKnowledge())
        prior = knowledge.greedy().act if knowledge.greedy is not None else None
        return InformationSetSearch(
            info.game,
            info.seat,
            random.Random(info.seed),
            budget,
            playout=knowledge.playout,
            evaluate=knowledge.evaluate,
            playout_depth=knowledge.playout_depth,
            prior=prior,
        )


class Search25(Search):
    """25 iterations per decision."""

    BUDGET = SearchBudget(25, DEFAULT_TIME_MS)


class Search50(Search):
    """50 iterations per decision."""

    BUDGET = SearchBudget(50, DEFAULT_TIME_MS)


class Search100(Search):
    """100 iterations per decision."""

    BUDGET = SearchBudget(100, DEFAULT_TIME_MS)


class Search200(Search):
    """200 iterations per decision."""

    BUDGET = SearchBudget(200, DEFAULT_TIME_MS)


class Search400(Search):
    """400 iterations per decision (time-capped like every grade)."""

    BUDGET = SearchBudget(400, DEFAULT_TIME_MS)


class Search800(Search):
    """800 iterations per decision (time-capped like every grade)."""

    BUDGET = SearchBudget(800, DEFAULT_TIME_MS)
