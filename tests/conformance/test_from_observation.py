"""Every game that builds a state from an observation (``GameSpec.from_observation``, what
``saloon.sdk.search`` determinizes with) builds one the seat cannot tell apart from the
true state: over random playouts, at decisions of the seat to act, the built state shows
that seat the same observation, offers the same legal actions (same JSON), and its cards
are the game's cards. Seizure's ``events`` (a log window kept for bots' convenience, not
state) are the one key left out."""

from __future__ import annotations

import random

import pytest

from saloon.games import State

from .playout import Case, all_cases, card_multiset, playout

#: One seat count per game keeps this quick; the property does not depend on it.
CASES = [
    c
    for c in all_cases()
    if c.spec.from_observation is not None
    and not c.options
    and c.players == max(c.spec.min_players, 3 if c.spec.max_players >= 3 else 2)
]
#: Keys of an observation that are a convenience log rather than what the seat knows.
LOG_KEYS = frozenset({"events"})


def _strip(obs: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in obs.items() if k not in LOG_KEYS}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("seed", [1, 2])
def test_state_from_observation_is_indistinguishable(case: Case, seed: int) -> None:
    build = case.spec.from_observation
    assert build is not None
    checked = 0

    def check(state: State, rng: random.Random) -> None:
        nonlocal checked
        player = state.current_player()
        if player < 0 or rng.random() > 0.3:
            return
        obs = state.observation(player)
        built = build(obs, random.Random(rng.random()))
        assert _strip(built.observation(player)) == _strip(obs)
        assert built.current_player() == player
        assert built.decision_kind() == state.decision_kind()
        assert [built.action_to_json(a) for a in built.legal_actions()] == [
            state.action_to_json(a) for a in state.legal_actions()
        ]
        assert card_multiset(built) == card_multiset(state)
        checked += 1

    playout(case, seed, check)
    assert checked > 0
