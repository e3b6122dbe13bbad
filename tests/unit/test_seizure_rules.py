"""Seizure rules, one hand-built situation per ruling (docs/rules/seizure.md)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.errors import GameOptionError, IllegalActionError
from saloon.games.seizure.cards import (
    COLOURS,
    KIND,
    LEFT_FIRST,
    MINUS_FIRST,
    NUMBER,
    PAIR,
    PAIRS,
    PLUS_FIRST,
    RIGHT_FIRST,
    TRADE_FIRST,
)
from saloon.games.seizure.engine import (
    DEAL_SIZE,
    DRAW,
    DRAW_ACTION,
    GIVE_CARD,
    GIVE_TO,
    PASS_ACTION,
    PLAY_CARD,
    TRADE_PARTNER,
    SeizureState,
)
from tests.unit.seizure_positions import card, play

GAME = get_game("seizure-v1")

LEFT, RIGHT, TRADE = LEFT_FIRST, RIGHT_FIRST, TRADE_FIRST
LEFT2, TRADE2 = LEFT_FIRST + 1, TRADE_FIRST + 1
PLUS, MINUS = PLUS_FIRST, MINUS_FIRST


# -- the deck -------------------------------------------------------------------------
def test_deck_has_140_cards_of_the_ruled_kinds() -> None:
    kinds = Counter(KIND)
    assert sum(kinds.values()) == 140
    assert [kinds[k] for k in range(6)] == [120, 4, 4, 4, 4, 4]
    per_pair_number = Counter((PAIR[c], NUMBER[c]) for c in range(120))
    assert set(per_pair_number.values()) == {2}
    assert len(per_pair_number) == 6 * 10
    assert {frozenset(COLOURS[i] for i in p) for p in PAIRS} == {
        frozenset((a, b)) for a in COLOURS for b in COLOURS if a < b
    }


# -- the reference card and playability ------------------------------------------------
def test_colour_rule_and_equal_or_higher() -> None:
    ref = card("red/blue", 5)
    hand = [card("red/green", 5), card("red/green", 4), card("green/yellow", 9), LEFT]
    state = SeizureState.from_position([hand, [card("blue/yellow", 1)]], [ref])
    assert state.decision_kind() == PLAY_CARD
    assert state.legal_actions() == [card("red/green", 5)]


def test_ten_on_the_table_counts_zero() -> None:
    ref = card("red/blue", 10)
    hand = [card("blue/green", 1), card("green/yellow", 9)]
    state = SeizureState.from_position([hand, [card("red/yellow", 2)]], [ref])
    assert state.observation(0)["reference_value"] == 0
    assert state.legal_actions() == [card("blue/green", 1)]


def test_ten_from_hand_counts_ten() -> None:
    ref = card("red/blue", 9)
    hand = [card("red/green", 10), card("red/blue", 8)]
    state = SeizureState.from_position([hand, [card("red/yellow", 2)]], [ref])
    assert state.legal_actions() == [card("red/green", 10)]


def test_reference_is_the_last_number_card_under_seizure_cards() -> None:
    ref = card("red/blue", 6)
    hand = [card("red/yellow", 6), card("green/yellow", 7)]
    state = SeizureState.from_position([hand, [card("red/yellow", 2)]], [ref, LEFT2])
    assert state.legal_actions() == [card("red/yellow", 6)]


def test_seizure_card_only_when_no_number_card_fits() -> None:
    ref = card("red/blue", 5)
    fits = card("blue/green", 7)
    state = SeizureState.from_position([[fits, LEFT, TRADE, PLUS], [MINUS, LEFT2]], [ref])
    assert state.legal_actions() == [fits]
    stuck = SeizureState.from_position(
        [[card("green/yellow", 9), LEFT, TRADE, PLUS], [LEFT2]], [ref]
    )
    assert stuck.decision_kind() == PLAY_CARD
    assert stuck.legal_actions() == [LEFT, TRADE]


def test_no_playable_card_draws_one_and_passes() -> None:
    ref = card("red/blue", 5)
    top = card("green/yellow", 3)
    state = SeizureState.from_position(
        [[card("green/yellow", 9), PLUS], [LEFT2]], [ref], draw=None, to_play=0
    )
    state.draw.remove(top)
    state.draw.append(top)
    assert state.decision_kind() == DRAW
    assert state.legal_actions() == [DRAW_ACTION]
    assert state.action_to_json(DRAW_ACTION) == {"draw": True}
    state.apply_action(DRAW_ACTION)
    assert top in state.hands[0]
    assert state.current_player() == 1
    assert state.pile == [ref]


# -- give-aways -------------------------------------------------------------------------
def test_identical_number_same_pair_gives_two_cards_to_chosen_players() -> None:
    ref = card("red/blue", 7)
    same = card("red/blue", 7, 1)
    keep = card("green/yellow", 2)
    hands = [[same, PLUS, LEFT, keep], [card("red/green", 1)], [card("blue/yellow", 1)]]
    state = SeizureState.from_position(hands, [ref])
    state.apply_action(same)
    assert state.decision_kind() == GIVE_CARD
    assert state.legal_actions() == sorted([PLUS, LEFT, keep])
    state.apply_action(PLUS)
    assert PLUS in state.hands[0], "a chosen gift stays in hand until GIVE_TO"
    assert state.decision_kind() == GIVE_TO
    assert state.legal_actions() == [1, 2]
    state.apply_action(2)
    assert PLUS in state.hands[2]
    assert state.decision_kind() == GIVE_CARD
    play(state, LEFT, 2)  # both cards to the same player is allowed
    assert sorted(state.hands[2]) == sorted([card("blue/yellow", 1), PLUS, LEFT])
    assert state.current_player() == 1
    assert state.decision_kind() == DRAW  # 1 red/green does not fit a 7 red/blue


def test_higher_number_same_pair_gives_one_card() -> None:
    ref = card("red/blue", 4)
    higher = card("red/blue", 8)
    state = SeizureState.from_position([[higher, PLUS, LEFT], [card("red/green", 1)]], [ref])
    play(state, higher, PLUS, 1)
    assert state.current_player() == 1
    assert state.hands == [[LEFT], [card("red/green", 1), PLUS]]


def test_one_shared_colour_gives_nothing() -> None:
    ref = card("red/blue", 4)
    state = SeizureState.from_position(
        [[card("red/green", 4), LEFT], [card("red/green", 1)]], [ref]
    )
    state.apply_action(card("red/green", 4))
    assert state.current_player() == 1


@pytest.mark.parametrize(
    ("played", "gives"),
    [(card("red/blue", 10, 1), 2), (card("red/blue", 3), 1), (card("red/green", 10), 0)],
)
def test_plays_on_a_same_pair_ten(played: int, gives: int) -> None:
    ref = card("red/blue", 10)
    state = SeizureState.from_position([[played, PLUS, LEFT, TRADE], [LEFT2]], [ref])
    state.apply_action(played)
    for _ in range(gives):
        assert state.decision_kind() == GIVE_CARD
        play(state, state.legal_actions()[0], 1)
    assert state.current_player() == 1


def test_two_players_give_to_has_one_legal_action() -> None:
    ref = card("red/blue", 4)
    state = SeizureState.from_position(
        [[card("red/blue", 5), PLUS, LEFT], [card("red/green", 1)]], [ref]
    )
    play(state, card("red/blue", 5), PLUS)
    assert state.legal_actions() == [1]


# -- round end --------------------------------------------------------------------------
def test_round_ends_mid_give_away_and_the_second_gift_is_dropped() -> None:
    ref = card("red/blue", 7)
    same = card("red/blue", 7, 1)
    last = card("green/yellow", 2)
    hands = [[same, last, MINUS], [card("red/green", 1)], [card("blue/yellow", 1)]]
    state = SeizureState.from_position(hands, [ref])
    play(state, same, last, 1)  # gives 2, but after the first only Minus Three is left
    assert state.last_round is not None
    number, reason, points, _hands = state.last_round
    assert (number, reason) == (1, "out")
    assert points == [-3, 2, 1]
    assert state.totals == [-3, 2, 1]
    assert state.decision_kind() == DEAL_SIZE


def test_score_cards_do_not_keep_you_in() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    state = SeizureState.from_position([[last, PLUS, PLUS + 1], [card("red/green", 1)]], [ref])
    state.apply_action(last)
    assert state.last_round is not None
    assert state.last_round[1] == "out"
    assert state.totals == [6, 1]


def test_last_seizure_card_played_has_no_effect() -> None:
    ref = card("red/blue", 9)
    p0 = [LEFT, MINUS]
    p1 = [card("green/yellow", 1), card("green/yellow", 2), LEFT2]
    state = SeizureState.from_position([p0, p1], [ref])
    state.apply_action(LEFT)
    assert state.hands == [[MINUS], p1], "the hands did not move"
    assert state.totals == [-3, 4]


def test_scoring_counts_numbers_seizures_and_score_cards() -> None:
    ref = card("red/blue", 1)
    last = card("red/blue", 2)
    other = [card("green/yellow", 10), LEFT, RIGHT, TRADE, PLUS, MINUS, MINUS + 1]
    state = SeizureState.from_position([[last], other], [ref], totals=[10, -2])
    state.apply_action(last)
    assert state.last_round is not None
    assert state.last_round[2] == [0, 1 + 2 * 3 + 3 - 3 - 3]
    assert state.totals == [10, 2]


def test_round_ends_right_after_the_deal_when_a_hand_has_no_active_card() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    state = SeizureState.from_position([[last], [card("red/green", 1)]], [ref])
    play(state, last, 7)  # round 1 over; seat 1 deals 7 cards each
    scores = [PLUS, PLUS + 1, PLUS + 2, PLUS + 3, MINUS, MINUS + 1, MINUS + 2]
    rest = [c for c in range(140) if c not in scores]
    state.apply_chance(tuple(scores + rest))
    assert state.round == 2
    assert state.last_round is not None
    assert state.last_round[:3] == (2, "out", [12 - 9, 7])
    assert state.decision_kind() == DEAL_SIZE


# -- hands moving ---------------------------------------------------------------------
def test_to_the_left_and_to_the_right_move_every_hand() -> None:
    ref = card("red/blue", 9)
    h0 = [LEFT, RIGHT, card("green/yellow", 1)]
    h1 = [card("green/yellow", 2), PLUS]
    h2 = [card("green/yellow", 3)]
    state = SeizureState.from_position([h0, h1, h2], [ref])
    state.apply_action(LEFT)
    assert state.hands == [h2, [RIGHT, card("green/yellow", 1)], h1]
    assert state.current_player() == 1
    observed = state.observation(0)["known"]
    assert {(k["seat"], k["card"]["id"]) for k in observed} == {
        (1, RIGHT),
        (1, card("green/yellow", 1)),
    }, "the giver sees where its hand went"
    assert state.observation(2)["known"] == [{"seat": 0, "card": state.observation(0)["hand"][0]}]


def test_to_the_right_passes_to_the_previous_seat() -> None:
    ref = card("red/blue", 9)
    h0 = [RIGHT, card("green/yellow", 1)]
    h1 = [card("green/yellow", 2)]
    h2 = [card("green/yellow", 3)]
    state = SeizureState.from_position([h0, h1, h2], [ref])
    state.apply_action(RIGHT)
    assert state.hands == [h1, h2, [card("green/yellow", 1)]]


def test_direct_trade_swaps_with_the_chosen_player() -> None:
    ref = card("red/blue", 9)
    h0 = [TRADE, card("green/yellow", 1), card("green/yellow", 4)]
    h1 = [card("green/yellow", 2)]
    h2 = [card("green/yellow", 3), PLUS]
    state = SeizureState.from_position([h0, h1, h2], [ref])
    state.apply_action(TRADE)
    assert state.decision_kind() == TRADE_PARTNER
    assert state.legal_actions() == [1, 2]
    state.apply_action(2)
    assert state.hands == [h2, h1, [card("green/yellow", 1), card("green/yellow", 4)]]
    assert state.current_player() == 1
    assert state.observation(1)["known"] == []


# -- reset, reshuffle, stalemate, turn cap --------------------------------------------
def test_reset_after_everyone_drew() -> None:
    ref = card("red/blue", 9)
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)], [card("blue/green", 1)]]
    draw = [card("green/yellow", 5), card("green/yellow", 6), card("green/yellow", 7)]
    taken = {ref, *draw, *(c for h in hands for c in h)}
    rest = [c for c in range(140) if c not in taken]
    state = SeizureState.from_position(hands, [ref], draw=rest + draw)
    play(state, DRAW_ACTION, DRAW_ACTION)
    assert not state.reset
    assert state.legal_actions() == [DRAW_ACTION]
    state.apply_action(DRAW_ACTION)
    assert state.reset
    obs = state.observation(0)
    assert obs["reset_active"] and obs["reference_value"] == 0
    # Value 0, but the colour rule still holds: green/yellow shares nothing with red/blue.
    assert state.current_player() == 0
    assert state.decision_kind() == DRAW


def test_reset_lets_any_colour_match_play_and_ends_with_a_play() -> None:
    ref = card("red/blue", 9)
    low = card("red/blue", 2)
    hands = [[low, card("green/yellow", 1), LEFT], [card("red/green", 1), card("red/green", 2)]]
    state = SeizureState.from_position(hands, [ref], reset=True, streak=2)
    assert state.legal_actions() == [low]
    state.apply_action(low)  # same pair during a reset: exactly one card
    assert state.decision_kind() == GIVE_CARD
    play(state, card("green/yellow", 1), 1)
    assert state.observation(1)["reset_active"] is False
    assert state.observation(1)["reference_value"] == 2


def test_reset_identical_number_gives_only_one() -> None:
    ref = card("red/blue", 9)
    same = card("red/blue", 9, 1)
    hands = [[same, PLUS, LEFT], [card("red/green", 1)]]
    state = SeizureState.from_position(hands, [ref], reset=True, streak=2)
    play(state, same, PLUS, 1)
    assert state.current_player() == 1


def test_reshuffle_keeps_top_and_reference() -> None:
    ref = card("red/blue", 9)
    pile = [card("red/blue", 1), card("red/blue", 2), ref, LEFT2]
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    taken = {*pile, *(c for h in hands for c in h)}
    rest = [c for c in range(140) if c not in taken]
    hands[1] += rest  # nobody draws from an empty pile: the draw pile is empty
    state = SeizureState.from_position(hands, pile, draw=[])
    assert state.legal_actions() == [DRAW_ACTION]
    state.apply_action(DRAW_ACTION)
    assert state.current_player() == CHANCE
    assert state.decision_kind() == "RESHUFFLE"
    outcome = state.sample_chance(random.Random(1))
    assert sorted(outcome) == sorted(pile[:2])
    with pytest.raises(IllegalActionError):
        state.apply_chance((ref,))
    state.apply_chance(outcome)
    assert state.pile == [ref, LEFT2]
    assert outcome[0] in state.hands[0], "the first card of the outcome is the top"
    assert state.draw == [outcome[1]]
    assert state.current_player() == 1


def test_nothing_to_draw_passes_and_stalemate_ends_the_round() -> None:
    """A full deck cannot reach a stalemate (every Seizure card would have to be on the
    play pile, hence reshufflable), so this position leaves cards out."""
    ref = card("red/blue", 9)
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    state = SeizureState.from_position(hands, [ref], draw=[], strict=False)
    assert state.legal_actions() == [PASS_ACTION]
    assert state.action_to_json(PASS_ACTION) == {"pass": True}
    play(state, PASS_ACTION, PASS_ACTION)  # these turns began before the reset
    assert state.reset
    assert state.last_round is None
    play(state, PASS_ACTION)
    assert state.last_round is None
    state.apply_action(PASS_ACTION)
    assert state.last_round is not None
    assert state.last_round[1] == "stalemate"


def test_turn_cap_scores_the_round_after_turn_2000() -> None:
    ref = card("red/blue", 4)
    higher = card("red/blue", 8)
    state = SeizureState.from_position(
        [[higher, PLUS, LEFT], [card("red/green", 1), card("red/green", 2)]], [ref]
    )
    state.turns = 1999
    play(state, higher)
    assert state.decision_kind() == GIVE_CARD, "the give-away belongs to the turn"
    play(state, PLUS, 1)
    assert state.last_round is not None
    assert state.last_round[1] == "turn_cap"
    assert state.totals == [2, 5]


# -- opening, dealing, dealer choice, game end ----------------------------------------
def test_opening_flip_sends_non_number_cards_to_the_bottom() -> None:
    state = GAME.new_game(2)
    state.apply_chance((1,))
    deck = list(range(140))
    hands = deck[:18]
    specials = [LEFT, PLUS]
    rest = [c for c in deck[18:] if c not in specials]
    state.apply_chance(tuple(hands + specials + rest))
    assert state.pile == [rest[0]]
    assert state.draw[:2] == [PLUS, LEFT], "flipped cards at the bottom, in flip order"
    assert state.current_player() == 0, "the player left of the dealer starts"
    bottom = state.observation(0)["draw_pile_bottom"]
    assert [c["id"] for c in bottom] == [PLUS, LEFT]


def test_later_rounds_dealer_chooses_hand_size() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    state = SeizureState.from_position([[last], [card("red/green", 1), PLUS]], [ref])
    state.apply_action(last)
    assert state.current_player() == 1
    assert state.decision_kind() == DEAL_SIZE
    assert state.legal_actions() == list(range(7, 16))
    state.apply_action(12)
    assert state.current_player() == CHANCE
    state.apply_chance(tuple(range(140)))
    assert [len(h) for h in state.hands] == [12, 12]
    assert state.deals == [0, 2], "seat 1 dealt round 1 (from_position) and round 2"


@pytest.mark.parametrize(
    ("totals", "deals", "previous", "expected"),
    [
        ([3, 9, 1, 9], [1, 1, 1, 1], 0, 1),  # most points
        ([9, 3, 9, 9], [2, 1, 1, 1], 3, 2),  # tie: fewest deals (seat 0 dealt twice)
        ([9, 3, 9, 9], [1, 1, 1, 1], 2, 3),  # still tied: first clockwise after previous
        ([9, 3, 9, 9], [1, 1, 1, 1], 3, 0),
        ([9, 9, 3, 3], [1, 1, 0, 0], 0, 1),  # the previous dealer comes last
        ([9, 9], [1, 1], 1, 0),
    ],
)
def test_dealer_tie_break(
    totals: list[int], deals: list[int], previous: int, expected: int
) -> None:
    state = SeizureState(len(totals))
    state.totals, state.deals, state.dealer = list(totals), list(deals), previous
    assert state._next_dealer() == expected


def test_dealer_tie_break_after_a_real_round() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    hands = [[last], [card("red/green", 1), card("red/green", 2)], [card("red/green", 3)]]
    state = SeizureState.from_position(hands, [ref], to_play=0, totals=[0, 0, 1])
    # The round-1 dealer (seat 2) counts as having dealt once; seats 1 and 2 tie on
    # 2 points; seat 1 has dealt fewer times.
    state.apply_action(last)
    assert state.totals == [0, 2, 2]
    assert state.current_player() == 1


def _finish_round(state: SeizureState) -> None:
    """Play out the current round with the first legal action (chance seeded)."""
    rng = random.Random(7)
    start = state.round
    while state.round == start and state.current_player() != TERMINAL:
        if state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(rng))
        elif state.decision_kind() == DEAL_SIZE:
            return
        else:
            state.apply_action(state.legal_actions()[0])


def test_default_game_ends_after_five_rounds_ties_share() -> None:
    state = GAME.new_game(3)
    rng = random.Random(3)
    while state.current_player() != TERMINAL:
        if state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(rng))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.randrange(len(legal))])
    assert state.round == 5
    state.totals = [4, 4, 9]
    assert state.ranks() == [0, 0, 2]


def test_gap_mode_ends_on_a_25_point_spread_with_a_unique_leader() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    loser = [card("red/green", 1), *range(LEFT, LEFT + 4), *range(PLUS, PLUS + 4)]
    state = SeizureState.from_position([[last], loser], [ref], end_gap=True, totals=[0, 4])
    state.apply_action(last)
    assert state.totals == [0, 25]
    assert state.current_player() == TERMINAL
    assert state.ranks() == [0, 1]


def test_gap_mode_needs_a_unique_lowest_total() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    hands = [[last], [card("red/green", 1)], [*range(PLUS, PLUS + 4), *range(LEFT, LEFT + 4)]]
    state = SeizureState.from_position(hands, [ref], end_gap=True, totals=[1, 0, 0])
    state.apply_action(last)
    assert state.totals == [1, 1, 20]
    assert state.current_player() != TERMINAL, "spread 19"
    state2 = SeizureState.from_position(hands, [ref], end_gap=True, totals=[1, 0, 10])
    state2.apply_action(last)
    assert state2.totals == [1, 1, 30]
    assert state2.current_player() != TERMINAL, "two seats share the lowest total"
    assert state2.ranks() == [0, 0, 1]


def test_gap_mode_stops_at_round_50() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    state = SeizureState.from_position(
        [[last], [card("red/green", 1)]], [ref], end_gap=True, totals=[3, 3]
    )
    state.round = 50
    state.apply_action(last)
    assert state.current_player() == TERMINAL
    assert state.ranks() == [0, 1]


# -- options and errors ----------------------------------------------------------------
def test_options_are_documented_and_checked() -> None:
    assert GAME.parse_options() == {"end": "rounds"}
    assert GAME.parse_options({"end": "gap"}) == {"end": "gap"}
    with pytest.raises(GameOptionError, match="end"):
        GAME.parse_options({"end": "forever"})
    with pytest.raises(GameOptionError, match="no option"):
        GAME.parse_options({"rounds": 3})


def test_illegal_action_changes_nothing() -> None:
    ref = card("red/blue", 5)
    state = SeizureState.from_position([[card("red/green", 6), PLUS], [LEFT2]], [ref])
    before = state.render(), state.observation(0), state.observation(1)
    for bad in (PLUS, card("red/green", 1), 999, -1):
        with pytest.raises(IllegalActionError):
            state.apply_action(bad)
    assert (state.render(), state.observation(0), state.observation(1)) == before
