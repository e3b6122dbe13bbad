"""Every observation and legal action of random playouts decodes into the typed SDK values.

This is the schema check of the JSON the engines send: a game's SDK module must accept
everything its engine emits, and a decision's typed legal actions must be distinct.
"""

from __future__ import annotations

import json
import random

import pytest

from saloon.referee.games import CHANCE, TERMINAL, game_ids, get_game
from saloon.sdk.games import make_decision


@pytest.mark.parametrize("game_id", game_ids())
def test_every_observation_decodes(game_id: str) -> None:
    spec = get_game(game_id)
    for players in sorted({spec.min_players, spec.max_players}):
        for seed in range(3):
            rng = random.Random(seed)
            state = spec.new_game(players)
            while (player := state.current_player()) != TERMINAL:
                if player == CHANCE:
                    state.apply_chance(state.sample_chance(rng))
                    continue
                legal = state.legal_actions()
                # Through JSON text, as on the wire.
                obs = json.loads(json.dumps(state.observation(player)))
                raw = json.loads(json.dumps([state.action_to_json(a) for a in legal]))
                decision = make_decision(game_id, state.decision_kind(), obs, raw)
                assert len(set(decision.legal)) == len(legal)
                state.apply_action(rng.choice(legal))
