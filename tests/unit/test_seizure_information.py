"""Seizure: what each seat sees (a given card or a moved hand: giver and receiver only)."""

from __future__ import annotations

import random

from saloon.games import get_game
from saloon.games.seizure.cards import (
    LEFT_FIRST,
    PLUS_FIRST,
    TRADE_FIRST,
    card_json,
)
from saloon.games.seizure.engine import DRAW_ACTION, SeizureState
from saloon.sdk.games import seizure as sdk
from tests.unit.seizure_positions import card

PLUS, LEFT, TRADE = PLUS_FIRST, LEFT_FIRST, TRADE_FIRST


def known(state: SeizureState, seat: int) -> set[tuple[int, int]]:
    return {(k["seat"], k["card"]["id"]) for k in state.observation(seat)["known"]}


def give_plus_to_seat_1() -> SeizureState:
    ref = card("red/blue", 4)
    higher = card("red/blue", 8)
    hands = [[higher, PLUS, LEFT], [card("green/yellow", 1)], [card("green/yellow", 2)]]
    state = SeizureState.from_position(hands, [ref])
    state.apply_action(higher)
    state.apply_action(PLUS)
    return state


def test_the_chosen_gift_is_seen_by_the_giver_only() -> None:
    state = give_plus_to_seat_1()
    assert state.observation(0)["gift"]["id"] == PLUS
    assert state.observation(1)["gift"] is None
    assert state.observation(2)["giver"] == 0
    assert state.observation(0)["decision"] == "GIVE_TO"
    assert state.observation(1)["decision"] is None, "others do not see the decision kind"


def test_a_given_card_is_seen_by_giver_and_receiver_only() -> None:
    state = give_plus_to_seat_1()
    state.apply_action(1)
    assert known(state, 0) == {(1, PLUS)}
    assert known(state, 2) == set()
    gives = [[e for e in state.observation(s)["events"] if e["type"] == "give"] for s in range(3)]
    assert gives[0][0]["card"]["id"] == PLUS
    assert gives[1][0]["card"]["id"] == PLUS
    assert gives[2] == [{"type": "give", "seat": 0, "to": 1, "card": None}]


def test_resample_keeps_known_cards_in_place() -> None:
    state = give_plus_to_seat_1()
    state.apply_action(1)
    obs = state.observation(0)
    for seed in range(20):
        twin = state.resample_hidden(0, random.Random(seed))
        assert PLUS in twin.hands[1]
        assert twin.observation(0) == obs
        assert [len(h) for h in twin.hands] == [len(h) for h in state.hands]


def test_resample_redeals_unknown_cards() -> None:
    state = give_plus_to_seat_1()
    state.apply_action(1)
    seen = {tuple(sorted(state.resample_hidden(2, random.Random(s)).hands[1])) for s in range(20)}
    assert len(seen) > 1, "seat 2 cannot know seat 1's hand"


def test_moved_hands_are_known_to_giver_and_receiver() -> None:
    ref = card("red/blue", 9)
    h0 = [TRADE, card("green/yellow", 1)]
    h1 = [card("green/yellow", 2)]
    h2 = [card("green/yellow", 3), card("green/yellow", 4)]
    state = SeizureState.from_position([h0, h1, h2], [ref])
    state.apply_action(TRADE)
    state.apply_action(2)
    assert known(state, 0) == {(2, card("green/yellow", 1))}
    assert known(state, 2) == {(0, card("green/yellow", 3)), (0, card("green/yellow", 4))}
    assert known(state, 1) == set()


def test_an_unseen_gift_makes_onlookers_forget_the_givers_hand() -> None:
    ref = card("red/blue", 4)
    h0 = [card("red/green", 7), card("green/yellow", 1)]
    h1 = [card("red/green", 9), card("blue/yellow", 5), card("green/yellow", 8)]
    h2 = [card("red/blue", 6), PLUS, LEFT]
    state = SeizureState.from_position([h0, h1, h2], [ref], to_play=2)
    for action in (card("red/blue", 6), PLUS, 1):  # seat 2 gives Plus Three to seat 1
        state.apply_action(action)
    assert known(state, 2) == {(1, PLUS)}
    state.apply_action(card("red/green", 7))  # seat 0: one shared colour, no gift
    for action in (card("red/green", 9), card("blue/yellow", 5), 0):  # seat 1 gives to 0
        state.apply_action(action)
    assert known(state, 1) == {(0, card("blue/yellow", 5))}
    assert known(state, 2) == set(), "seat 2 cannot tell which card seat 1 gave away"
    assert known(state, 0) == set()
    assert state.last_round is None


def test_hands_are_revealed_at_the_round_end() -> None:
    ref = card("red/blue", 4)
    h0 = [card("red/blue", 6)]
    h1 = [card("green/yellow", 8), PLUS]
    state = SeizureState.from_position([h0, h1], [ref])
    state.apply_action(card("red/blue", 6))
    assert known(state, 0) == {(1, card("green/yellow", 8)), (1, PLUS)}
    assert state.observation(0)["last_round"]["points"] == [0, 4]


def test_a_draw_is_seen_by_the_drawer_only() -> None:
    ref = card("red/blue", 9)
    top = card("green/yellow", 7)
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    rest = [c for c in range(140) if c not in (ref, top, *hands[0], *hands[1])]
    state = SeizureState.from_position(hands, [ref], draw=[*rest, top])
    state.apply_action(DRAW_ACTION)
    mine = state.observation(0)["events"][-1]
    theirs = state.observation(1)["events"][-1]
    assert mine == {"type": "draw", "seat": 0, "card": card_json(top)}
    assert theirs == {"type": "draw", "seat": 0, "card": None}


def test_sdk_decodes_observations_and_every_action_kind() -> None:
    state = give_plus_to_seat_1()
    obs = sdk.decode_observation(state.observation(0))
    assert obs.gift is not None and obs.gift.kind == sdk.PLUS_THREE and obs.gift.points == 3
    assert obs.hand_points() == 2 + 3
    assert sdk.decode_action("GIVE_TO", state.action_to_json(1)) == sdk.GiveTo(1)
    assert sdk.decode_action("DRAW", {"draw": True}) == sdk.Draw()
    assert sdk.decode_action("DRAW", {"pass": True}) == sdk.Pass()
    assert sdk.decode_action("DEAL_SIZE", {"hand_size": 9}) == sdk.DealSize(9)
    assert sdk.decode_action("TRADE_PARTNER", {"seat": 2}) == sdk.TradePartner(2)
    ten = sdk.decode_card(card_json(card("red/blue", 10)))
    assert (ten.colours, ten.number, ten.table_value, ten.points) == (("red", "blue"), 10, 0, 1)
    fresh = get_game("seizure-v1").new_game(3)
    assert sdk.decode_observation(fresh.observation(1)).reference is None


def test_sdk_helpers_agree_with_the_engine() -> None:
    ref = card("red/blue", 7)
    hand = [card("red/blue", 7, 1), card("red/blue", 9), card("red/green", 8), card("red/green", 2)]
    state = SeizureState.from_position([hand, [card("green/yellow", 1)]], [ref])
    obs = sdk.decode_observation(state.observation(0))
    playable = sorted(c.id for c in obs.hand if obs.is_playable_number(c))
    assert playable == state.legal_actions()
    assert [obs.gives_for(c) for c in obs.hand] == [2, 1, 0, 0]
