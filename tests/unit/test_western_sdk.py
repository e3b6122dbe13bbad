"""The Western Legends: Showdown SDK module: decoding and the bot-author helpers."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from saloon.games import get_game
from saloon.games.western_showdown import cards as engine_cards
from saloon.sdk.games import make_decision
from saloon.sdk.games import western_showdown as sdk

GAME = get_game("western-showdown-v1")

STACKS = st.lists(st.integers(min_value=0, max_value=17), max_size=12, unique=True)


@settings(max_examples=400, deadline=None)
@given(stack=STACKS, location=st.integers(min_value=0, max_value=6))
def test_condition_met_agrees_with_the_engine(stack: list[int], location: int) -> None:
    typed = [sdk.card(c) for c in stack]
    assert sdk.condition_met(location, typed) == engine_cards.condition_met(location, stack)


@settings(max_examples=200, deadline=None)
@given(stack=STACKS.filter(bool))
def test_stack_winner_agrees_with_the_engine(stack: list[int]) -> None:
    assert sdk.stack_winner([sdk.card(c) for c in stack]) == engine_cards.stack_winner(stack)


def test_cards_follow_the_id_layout() -> None:
    assert [sdk.card(c).value for c in range(18)] == [1, 1, 1, 2, 3, 4, 5, 6, 7] * 2
    assert {c.colour for c in sdk.deck_of(0)} == {"red"}
    assert sdk.card(16) == sdk.Card(16, "black", 6, sdk.Ability.CHEAT, 1)
    assert sdk.LOCATION_NAMES == engine_cards.LOCATION_NAMES


def test_every_decision_decodes_to_typed_actions() -> None:
    """Random games: every kind's JSON actions decode to the documented types."""
    seen: set[str] = set()
    for seed in range(60):
        rng = random.Random(seed)
        state = GAME.new_game(2)
        while not state.is_terminal():
            if state.is_chance():
                state.apply_chance(state.sample_chance(rng))
                continue
            seat = state.current_player()
            kind = state.decision_kind()
            legal = state.legal_actions()
            decision = make_decision(
                GAME.id, kind, state.observation(seat), [state.action_to_json(a) for a in legal]
            )
            obs = decision.observation
            assert isinstance(obs, sdk.Observation) and obs.seat == seat
            assert obs.decision == kind and obs.to_play == seat
            assert len(set(decision.legal)) == len(legal)
            for action in decision.legal:
                if kind in (sdk.TURN, sdk.DETERMINATION_EXTRA):
                    assert isinstance(action, sdk.Place | sdk.Pass | sdk.Skip)
                    if isinstance(action, sdk.Place):
                        assert obs.location(action.location).open_to(seat)
                        assert action.card in obs.hand
                elif kind == sdk.MULLIGAN:
                    assert action == sdk.DONE or action in obs.hand
                elif kind in (sdk.ACTIVATE, sdk.WALLOP_SECOND):
                    assert isinstance(action, bool)
                elif kind in (sdk.STICK_SOURCE, sdk.CHEAT_PICK):
                    assert isinstance(action, sdk.Pick)
                    assert obs.location(action.location).stack[action.position] == action.card
                else:
                    assert isinstance(action, int) and action in [loc.id for loc in obs.locations]
            if obs.pending is not None and kind != sdk.DETERMINATION_EXTRA:
                # (the DETERMINATION card may already be won by the check before the extra)
                assert obs.pending.card in obs.location(obs.pending.location).stack
            assert (
                len(obs.opponent_unseen())
                == obs.hand_sizes[1 - seat] + (obs.draw_pile_sizes[1 - seat])
                or kind == sdk.MULLIGAN
            )
            seen.add(kind)
            state.apply_action(rng.choice(legal))
    assert seen == set(GAME.decision_kinds)


def test_open_to_respects_an_activated_bulletproof() -> None:
    loc = sdk.Location(4, "Ranch", "", (sdk.card(4),), frozenset({4}))
    assert loc.open_to(0) and not loc.open_to(1)
    declined = sdk.Location(4, "Ranch", "", (sdk.card(4),), frozenset())
    assert declined.open_to(1)


def test_activates_follows_the_placement_rule() -> None:
    assert sdk.activates(sdk.card(0), [])
    assert sdk.activates(sdk.card(17), [sdk.card(7)])
    assert not sdk.activates(sdk.card(14), [sdk.card(5)])


def test_ability_is_an_enum_that_the_card_field_has() -> None:
    from saloon.sdk.games.western_showdown import (
        BULLETPROOF,
        LIVING_LEGEND,
        Ability,
        card,
        deck_of,
    )

    legend = next(c for c in deck_of(0) if c.value == 7)
    assert legend.ability is LIVING_LEGEND and legend.ability == LIVING_LEGEND
    assert isinstance(card(2).ability, Ability)
    assert [c.ability for c in deck_of(1)].count(BULLETPROOF) == 1
    assert Ability.STICK_EM_UP.label == "STICK 'EM UP"
    assert "LIVING LEGEND" in str(legend)
