"""saloon.sdk.search: determinism, the budget, plug-ins and its errors."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pytest

from saloon.games import CHANCE, State, get_game
from saloon.sdk.bot import Decision
from saloon.sdk.errors import SearchError
from saloon.sdk.games import make_decision
from saloon.sdk.search import (
    InformationSetSearch,
    RolloutSearch,
    SearchBudget,
    determinize,
    play_out,
    random_playout,
    round_horizon,
    score_rewards,
)

GAME = "seas-of-strife-v1"


def a_decision(game: str = GAME, players: int = 4, skip: int = 6) -> tuple[int, Decision[Any, Any]]:
    """The seat to act and its decision, ``skip`` seat decisions into a seeded game."""
    state = get_game(game).new_game(players)
    rng = random.Random(7)
    while True:
        player = state.current_player()
        if player == CHANCE:
            state.apply_chance(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        if len(legal) > 1 and skip <= 0:
            raw = [state.action_to_json(a) for a in legal]
            return player, make_decision(
                game, state.decision_kind(), state.observation(player), raw
            )
        skip -= 1
        state.apply_action(legal[rng.randrange(len(legal))])


def test_same_seed_same_search() -> None:
    seat, decision = a_decision()
    runs = [
        InformationSetSearch(GAME, seat, random.Random(5), SearchBudget(60, 60_000)).run(decision)
        for _ in range(2)
    ]
    assert runs[0].iterations == runs[1].iterations == 60
    assert runs[0].index == runs[1].index
    assert [(s.action, s.visits) for s in runs[0].stats] == [
        (s.action, s.visits) for s in runs[1].stats
    ]
    assert sum(s.visits for s in runs[0].stats) == 60


def test_the_time_cap_stops_a_search_early() -> None:
    seat, decision = a_decision()
    result = InformationSetSearch(GAME, seat, random.Random(1), SearchBudget(10**6, 30)).run(
        decision
    )
    assert 1 <= result.iterations < 10**6
    assert result.elapsed_ms < 30 + 500  # one iteration past the cap, with a wide margin


def test_within_caps_the_time_to_a_share_of_the_clock() -> None:
    assert SearchBudget(100, 200).within(400).time_ms == 100
    assert SearchBudget(100, 200).within(10_000).time_ms == 200
    assert SearchBudget(100, 200).within(0).time_ms == 200


def test_determinize_matches_the_observation() -> None:
    seat, decision = a_decision()
    state = determinize(GAME, decision.raw_observation, random.Random(3))
    assert state.current_player() == seat
    assert state.observation(seat) == decision.raw_observation
    assert [state.action_to_json(a) for a in state.legal_actions()] == list(decision.raw_legal)


def test_a_custom_playout_and_evaluation_are_used() -> None:
    seat, decision = a_decision()
    calls = {"playout": 0, "evaluate": 0}

    def lowest(state: State, legal: Sequence[int], rng: random.Random) -> int:
        calls["playout"] += 1
        return min(legal)

    def evaluate(state: State, root_scores: Sequence[float]) -> list[float]:
        calls["evaluate"] += 1
        return score_rewards(state, root_scores)

    search = InformationSetSearch(
        GAME, seat, random.Random(2), SearchBudget(20, 60_000), playout=lowest, evaluate=evaluate
    )
    search.run(decision)
    assert calls["evaluate"] == 20
    assert calls["playout"] > 20


def test_a_prior_starts_with_virtual_visits() -> None:
    seat, decision = a_decision()
    favourite = decision.legal[-1]
    search = InformationSetSearch(
        GAME,
        seat,
        random.Random(2),
        SearchBudget(1, 60_000),
        prior=lambda d: favourite,
        prior_visits=50,
    )
    result = search.run(decision)
    assert decision.legal[result.index] == favourite


def test_a_decision_the_state_disagrees_with_is_an_error() -> None:
    seat, decision = a_decision()
    wrong = Decision(
        decision.kind,
        decision.observation,
        decision.legal[:1],
        None,
        decision.raw_observation,
        decision.raw_legal[:1],
    )
    with pytest.raises(SearchError):
        InformationSetSearch(GAME, seat, random.Random(0), SearchBudget(5, 1000)).run(wrong)


@pytest.mark.parametrize(("game", "players"), [("seizure-v1", 3), ("western-showdown-v1", 2)])
def test_every_game_searches(game: str, players: int) -> None:
    seat, decision = a_decision(game, players, skip=4)
    result = InformationSetSearch(game, seat, random.Random(0), SearchBudget(20, 60_000)).run(
        decision
    )
    assert 0 <= result.index < len(decision.legal)
    assert result.iterations == 20


def test_every_game_registers_search_and_its_grades() -> None:
    from saloon.games import game_ids
    from saloon.sdk.house import house_bot_class, house_bot_names
    from saloon.sdk.house.search import GRADES

    for game in game_ids():
        if get_game(game).from_observation is None:
            continue
        names = set(house_bot_names(game))
        assert {"search", *(f"search-{n}" for n in GRADES)} <= names
        budgets = [house_bot_class(game, f"search-{n}").BUDGET.iterations for n in GRADES]  # type: ignore[attr-defined]
        assert budgets == list(GRADES)


@pytest.mark.parametrize("searcher", [InformationSetSearch, RolloutSearch])
def test_a_rollout_replaces_the_generic_playout(searcher: type[Any]) -> None:
    """``rollout=`` plays every playout in place of play_out with ``playout`` and
    ``horizon``; given the generic loop itself, the search is the same as without it."""
    seat, decision = a_decision()
    calls: list[int | None] = []

    def loop(state: State, rng: random.Random, depth: int | None) -> None:
        calls.append(depth)
        play_out(state, random_playout, round_horizon, rng, depth)

    budget = SearchBudget(40, 60_000)
    plain = searcher(GAME, seat, random.Random(3), budget, playout_depth=7).run(decision)
    looped = searcher(GAME, seat, random.Random(3), budget, playout_depth=7, rollout=loop).run(
        decision
    )
    assert calls and set(calls) == {7}
    assert looped.index == plain.index
    assert [(s.action, s.visits, s.mean_reward) for s in looped.stats] == [
        (s.action, s.visits, s.mean_reward) for s in plain.stats
    ]


def test_rollout_search_budget_is_samples_times_legal_actions() -> None:
    """Issue 30 (the guide and the reference say so): RolloutSearch's iteration budget
    counts playouts, one per legal action per sample: 24 playouts with 12 legal actions
    is 2 samples; with more actions than playouts, still one sample (min_samples)."""
    state = get_game(GAME).new_game(3)
    rng = random.Random(3)
    while state.current_player() == CHANCE:
        state.apply_chance(state.sample_chance(rng))
    while len(state.legal_actions()) != 12:  # play on until a seat has 12 choices
        player = state.current_player()
        if player == CHANCE:
            state.apply_chance(state.sample_chance(rng))
            continue
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
    seat = state.current_player()
    legal = state.legal_actions()
    decision = make_decision(
        GAME,
        state.decision_kind(),
        state.observation(seat),
        [state.action_to_json(a) for a in legal],
    )
    for budget, samples in ((24, 2), (25, 2), (36, 3), (5, 1)):
        search = RolloutSearch(GAME, seat, random.Random(0), SearchBudget(budget, 1e9))
        result = search.run(decision)
        assert result.iterations == samples * 12 and result.budget == samples * 12
        assert {s.visits for s in result.stats} == {samples} and len(result.stats) == 12


def test_a_search_bot_s_clock_share_sets_its_time_cap() -> None:
    """SearchBot caps its searches at CLOCK_SHARE of the decision clock (a quarter by
    default); the guide's strongest examples set 1.0, a cap that is a safety only."""
    from saloon.sdk.bot import MatchInfo
    from saloon.sdk.search import SearchBot, Searcher

    assert SearchBudget(100, 2000).within(1000, 1.0).time_ms == 1000
    seen: list[float] = []

    class Default(SearchBot):
        BUDGET = SearchBudget(12, 1000)

        def make_search(self, info: MatchInfo, budget: SearchBudget) -> Searcher:
            seen.append(budget.time_ms)
            return super().make_search(info, budget)

    class Wide(Default):
        CLOCK_SHARE = 1.0

    for cls in (Wide, Default):
        cls().on_match_start(MatchInfo(GAME, {}, 0, 3, seed=1, decision_ms=1000))
    assert seen == [1000, 250]
