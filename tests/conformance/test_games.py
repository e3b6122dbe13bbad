"""The conformance suite: the same checks over every registered game (and seat count, option).

Properties (hypothesis draws the seeds): random playouts end within the game's max_length;
the same seed gives the same trajectory; terminal states offer no legal actions; the log
alone replays to the same final state; cards are conserved at every step; an illegal action
changes nothing; every observation is JSON and equal on a state the seat cannot tell apart
(no leak: checked at each decision kind's first occurrence and a sample of the other steps,
and the hidden cards must vary across resamples); every observation and legal action decodes
through the game's SDK module.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from saloon.games import CHANCE, TERMINAL, State
from saloon.games.errors import IllegalActionError
from saloon.sdk.games import adapter_for

from .playout import Case, all_cases, card_multiset, playout, replay_log

CASES = all_cases()
SEEDS = st.integers(min_value=0, max_value=2**32)
FAST = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def quick_view(state: State) -> tuple[object, ...]:
    """The cheaper part of full_view, for checks made at every step of long games."""
    player = state.current_player()
    return (
        player,
        state.decision_kind(),
        state.legal_actions(),
        state.render(),
        state.observation(player) if player >= 0 else None,
        card_multiset(state),
    )


def full_view(state: State) -> tuple[object, ...]:
    """Everything observable about a state, for equality checks."""
    return (
        state.current_player(),
        state.decision_kind(),
        state.legal_actions(),
        state.render(),
        [state.observation(s) for s in range(state.num_players)],
        state.scores(),
        card_multiset(state),
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@FAST
@given(seed=SEEDS)
def test_playout_terminates_and_replays(case: Case, seed: int) -> None:
    final, log = playout(case, seed)
    assert final.is_terminal()
    assert final.legal_actions() == []
    assert final.decision_kind() == ""
    ranks = final.ranks()
    assert len(ranks) == case.players and min(ranks) == 0
    assert all(0 <= r < case.players for r in ranks)
    again, log2 = playout(case, seed)
    assert log2 == log, "same seed, different trajectory"
    assert full_view(again) == full_view(final)
    assert full_view(replay_log(case, log)) == full_view(final)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@SLOW
@given(seed=SEEDS)
def test_cards_conserved_and_actions_well_formed(case: Case, seed: int) -> None:
    deck: list[int] = []

    def check(state: State, rng: random.Random) -> None:
        cards = card_multiset(state)
        if not deck:
            deck.extend(cards)
        assert cards == deck, "a card appeared or vanished"
        assert len(set(cards)) == len(cards), "card ids must be unique"
        player = state.current_player()
        legal = state.legal_actions()
        if player in (CHANCE, TERMINAL):
            assert legal == []
            return
        assert legal, "a seat to act must have a legal action"
        assert legal == sorted(set(legal)), "legal actions must be sorted and unique"
        assert state.decision_kind() in state.spec.decision_kinds
        for action in legal:
            json.dumps(state.action_to_json(action))
            assert state.action_to_string(action)
        illegal = max(legal) + 1000
        before = quick_view(state)
        with pytest.raises(IllegalActionError):
            state.apply_action(illegal)
        assert quick_view(state) == before, "an illegal action changed the state"
        clone = state.clone()
        clone.apply_action(legal[0])
        assert quick_view(state) == before, "applying to a clone changed the original"

    playout(case, seed, check)


#: Share of the steps the leak check examines after each decision kind's first occurrence
#: (always examined): Seizure's long games made an every-step check ~90 s of the suite.
LEAK_SAMPLE = 0.15


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@SLOW
@given(seed=SEEDS)
def test_observations_leak_nothing(case: Case, seed: int) -> None:
    adapter = adapter_for(case.game)
    seen_kinds: set[str] = set()
    varied: list[bool] = []

    def check(state: State, rng: random.Random) -> None:
        player = state.current_player()
        kind = state.decision_kind()
        first = player >= 0 and kind not in seen_kinds
        seen_kinds.add(kind)
        if not first and rng.random() >= LEAK_SAMPLE:
            return
        seats = list(range(state.num_players))
        # Every seat at every step would be slow: the seat to act and one other at random.
        chosen = {player, rng.choice(seats)} if player >= 0 else {rng.choice(seats)}
        for seat in sorted(chosen):
            obs = state.observation(seat)
            assert json.loads(json.dumps(obs)) == obs, "observations must be plain JSON"
            twin = state.resample_hidden(seat, random.Random(rng.random()))
            assert twin.observation(seat) == obs, (
                f"seat {seat}'s observation depends on something it cannot know"
            )
            assert card_multiset(twin) == card_multiset(state)
            # A plain clone would pass the checks above: the hidden cards must move.
            varied.append(twin.cards() != state.cards())
            if adapter is not None:
                adapter.decode_observation(obs)
        if player >= 0 and adapter is not None:
            for action in state.legal_actions():
                adapter.decode_action(kind, state.action_to_json(action))

    playout(case, seed, check)
    assert any(varied), "resample_hidden never redealt a hidden card (a plain clone?)"
