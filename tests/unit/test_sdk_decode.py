"""Every observation and legal action of random playouts decodes into the typed SDK values.

This is the schema check of the JSON the engines send: a game's SDK module must accept
everything its engine emits, and a decision's typed legal actions must be distinct.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import random

import pytest

from saloon.games import CHANCE, TERMINAL, game_ids, get_game
from saloon.sdk.games import decision_from_wire, make_decision


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
                # The runtime's decision from the wire bytes: the same Decision.
                wire = decision_from_wire(
                    game_id,
                    state.decision_kind(),
                    json.dumps(obs).encode(),
                    json.dumps(raw).encode(),
                )
                assert wire == decision and decision == wire
                assert wire.observation == decision.observation
                state.apply_action(rng.choice(legal))


def test_a_wire_decision_types_its_observation_when_first_read() -> None:
    """The observation is parsed and typed on first read (once); the legal actions at once."""
    game_id = "seas-of-strife-v1"
    bad = decision_from_wire(game_id, "CHOOSE_LEADER", b"not json", b'[{"seat": 1}]')
    assert bad.legal == (1,) and bad.index_of(1) == 0  # nothing read the observation yet
    with pytest.raises(ValueError):
        bad.observation  # noqa: B018
    spec = get_game(game_id)
    state = spec.new_game(spec.min_players)
    rng = random.Random(1)
    while state.current_player() == CHANCE:
        state.apply_chance(state.sample_chance(rng))
    player = state.current_player()
    obs = state.observation(player)
    raw = [state.action_to_json(a) for a in state.legal_actions()]
    wire = decision_from_wire(
        game_id, state.decision_kind(), json.dumps(obs).encode(), json.dumps(raw).encode()
    )
    assert "observation" not in vars(wire) and "raw_observation" not in vars(wire)
    assert wire.observation is wire.observation and wire.raw_observation == obs
    plain = make_decision(game_id, state.decision_kind(), obs, raw)
    assert repr(wire) == repr(plain)
    assert pickle.loads(pickle.dumps(wire)) == plain and copy.deepcopy(wire) == plain
    assert dataclasses.replace(wire, legal=wire.legal[:1]) == dataclasses.replace(
        plain, legal=plain.legal[:1]
    )
