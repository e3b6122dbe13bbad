"""Seas of Strife: the rule text's worked examples and every ruling, with hand-built cards.

The rule text names five players; here Katrin=0, Christian=1, Beate=2, Holger=3, Alexa=4
(clockwise order as the examples play).
"""

from __future__ import annotations

import random

import pytest

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.errors import IllegalActionError
from saloon.games.seas_of_strife.engine import (
    CHOOSE_LEADER,
    FULL_DECK,
    PLAY_CARD,
    THREE_PLAYER_DECK,
    SeasOfStrifeState,
    colour_name,
    trick_winner_index,
)

GAME = get_game("seas-of-strife-v1")
KATRIN, CHRISTIAN, BEATE, HOLGER, ALEXA = range(5)


def deal(state: SeasOfStrifeState, hands: list[list[int]]) -> None:
    """Apply a DEAL chance outcome that gives exactly these hands."""
    state.apply_chance(tuple(c for hand in hands for c in hand))


def play(state: SeasOfStrifeState, *cards: int) -> None:
    for card in cards:
        state.apply_action(card)


# -- the deck -----------------------------------------------------------------------------
def test_deck_has_sixty_cards_in_eight_colours() -> None:
    assert len(FULL_DECK) == 60
    counts = {}
    for card in FULL_DECK:
        counts[colour_name(card)] = counts.get(colour_name(card), 0) + 1
    assert counts == {
        "black": 11,
        "red": 10,
        "blue": 9,
        "brown": 8,
        "green": 7,
        "yellow": 6,
        "purple": 5,
        "grey": 4,
    }


def test_three_players_leave_out_black_and_grey() -> None:
    assert len(THREE_PLAYER_DECK) == 45
    assert {colour_name(c) for c in THREE_PLAYER_DECK}.isdisjoint({"black", "grey"})


@pytest.mark.parametrize(("players", "hand_size"), [(3, 15), (4, 15), (5, 12), (6, 10)])
def test_hand_sizes(players: int, hand_size: int) -> None:
    state = GAME.new_game(players)
    assert state.current_player() == CHANCE
    state.apply_chance(state.sample_chance(random.Random(1)))
    obs = state.observation(0)
    assert obs["hand_sizes"] == [hand_size] * players


# -- the rule text's examples ------------------------------------------------------------
def example_one_hands() -> list[list[int]]:
    """Five hands of 12 with: Katrin 0, Christian no black but 42, Beate 2 (no green),
    Holger 6, Alexa 1."""
    hands = [
        [0, 3, 11, 12, 21, 22, 31, 32, 51, 52, 61, 71],  # Katrin
        [42, 13, 14, 23, 24, 33, 34, 53, 54, 62, 72, 15],  # Christian: no black
        [2, 4, 16, 17, 25, 26, 35, 36, 55, 63, 73, 18],  # Beate: no green
        [6, 5, 43, 19, 20, 27, 28, 37, 56, 64, 74, 44],  # Holger
        [1, 7, 8, 9, 10, 41, 45, 46, 47, 29, 38, 65],  # Alexa
    ]
    assert sorted(c for h in hands for c in h) == list(FULL_DECK)
    return hands


def test_rule_example_one_black_majority_highest_black_wins() -> None:
    state = GAME.new_game(5)
    assert isinstance(state, SeasOfStrifeState)
    deal(state, example_one_hands())
    # The holder of 0 opens the first trick, with the 0.
    assert state.current_player() == KATRIN
    assert state.legal_actions() == [0]
    play(state, 0)
    # Christian has no black: he may play anything, and plays the 42.
    assert state.current_player() == CHRISTIAN
    assert state.legal_actions() == sorted(example_one_hands()[CHRISTIAN])
    play(state, 42)
    # Beate must match black or green; she has no green, so black only.
    assert state.legal_actions() == [2, 4]
    play(state, 2)
    # Holger must match black or green (he holds both).
    assert state.legal_actions() == [5, 6, 43, 44]
    play(state, 6)
    play(state, 1)
    # Black is the majority, the highest black is Holger's 6: he takes it and leads.
    assert state.observation(0)["completed_tricks"] == [
        {"leader": KATRIN, "cards": [0, 42, 2, 6, 1], "winner": HOLGER}
    ]
    assert state.observation(0)["tricks_taken"] == [0, 0, 0, 1, 0]
    assert state.current_player() == HOLGER
    assert state.decision_kind() == PLAY_CARD


def test_rule_example_two_tied_colours_highest_of_either_wins() -> None:
    # This example plays clockwise Holger, Alexa, Beate, Christian, Katrin (another seating
    # than example one): seats 0..4 in that order. Holger leads the 43, not the first trick.
    holger, alexa, beate, christian, katrin = range(5)
    state = SeasOfStrifeState.position(
        [
            [43, 25, 26],  # Holger
            [41, 27, 28],  # Alexa: green
            [8, 23, 24],  # Beate: no green
            [11, 21, 22],  # Christian: neither green nor black
            [13, 20, 29],  # Katrin: red
        ],
        leader=holger,
    )
    play(state, 43)
    # Only green is in the trick: Alexa must play green (the rule sentence wins over the
    # example's "green, red, or black").
    assert state.current_player() == alexa
    assert state.legal_actions() == [41]
    play(state, 41)
    # Beate has no green: any card.
    assert state.current_player() == beate
    assert state.legal_actions() == [8, 23, 24]
    play(state, 8)
    # Green and black are in the trick; Christian has neither: any card.
    assert state.current_player() == christian
    assert state.legal_actions() == [11, 21, 22]
    play(state, 11)
    # Green, black, red in the trick: Katrin must play one of them, plays the 13.
    assert state.current_player() == katrin
    assert state.legal_actions() == [13, 20]
    play(state, 13)
    # Red 2, green 2, black 1: red and green tie; the 43 is the highest of either.
    assert state.observation(0)["completed_tricks"][-1]["winner"] == holger
    assert state.current_player() == holger


@pytest.mark.parametrize(
    ("cards", "winner"),
    [
        ([0, 42, 2, 6, 1], 3),  # rule example one
        ([43, 41, 8, 11, 13], 0),  # rule example two
        ([21, 55, 56], 2),  # all colours tied at one: the highest card overall
        ([12, 29, 28, 13], 1),  # red 2, blue 2: the 29 is the highest of either
        ([12, 29, 28, 13, 25], 1),  # blue majority: highest blue
    ],
)
def test_trick_winner(cards: list[int], winner: int) -> None:
    assert trick_winner_index(cards) == winner


# -- rulings ------------------------------------------------------------------------------
def test_three_player_hand_opens_with_the_11() -> None:
    state = GAME.new_game(3)
    state.apply_chance(state.sample_chance(random.Random(5)))
    holder = state.current_player()
    assert 11 in state.observation(holder)["hand"]
    assert state.legal_actions() == [11]


def test_every_hand_opens_with_the_forced_card() -> None:
    state = GAME.new_game(4)
    rng = random.Random(9)
    hands_seen = 0
    while not state.is_terminal():
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
            hands_seen += 1
            assert state.legal_actions() == [0]
            continue
        legal = state.legal_actions()
        state.apply_action(rng.choice(legal))
    assert hands_seen >= 2


def test_follow_any_colour_already_in_the_trick() -> None:
    state = SeasOfStrifeState.position(
        [[12, 21, 31], [22, 41, 42], [32, 43, 51], [52, 53, 54]], leader=0, trick=[12, 41]
    )
    # Red and green are in the trick; seat 2 holds green (43) but not red.
    assert state.legal_actions() == [43]
    with pytest.raises(IllegalActionError):
        state.apply_action(32)


def test_later_leads_are_free() -> None:
    state = SeasOfStrifeState.position([[12, 21, 31], [22, 41], [32, 43], [52, 53]], leader=0)
    assert state.legal_actions() == [12, 21, 31]


def test_winning_with_a_top_card_chooses_the_next_leader_self_included() -> None:
    # Seat 1 wins with 20, the top red.
    state = SeasOfStrifeState.position([[12, 31], [20, 32], [13, 33], [14, 34]], leader=0)
    play(state, 12, 20, 13, 14)
    assert state.current_player() == 1
    assert state.decision_kind() == CHOOSE_LEADER
    assert state.legal_actions() == [0, 1, 2, 3]
    assert state.action_to_json(3) == {"seat": 3}
    state.apply_action(3)
    assert state.current_player() == 3
    assert state.legal_actions() == [34]  # the chosen seat leads freely


def test_top_card_is_fixed_not_highest_unplayed() -> None:
    # 19 is the highest red left (20 played earlier), but only the 20 gives the choice.
    state = SeasOfStrifeState.position([[12, 31], [19, 32], [13, 33], [14, 34]], leader=0)
    play(state, 12, 19, 13, 14)
    assert state.decision_kind() == PLAY_CARD
    assert state.current_player() == 1


def test_a_top_card_that_does_not_win_gives_no_choice() -> None:
    # Blue majority (21, 22) beats the lone 20 (top red).
    state = SeasOfStrifeState.position([[21, 31], [20, 32], [22, 33]], leader=0)
    play(state, 21, 20, 22)
    assert state.decision_kind() == PLAY_CARD
    assert state.current_player() == 2


def test_no_leader_choice_after_the_last_trick_of_a_hand() -> None:
    state = SeasOfStrifeState.position([[12], [20], [13], [14]], leader=0)
    play(state, 12, 20, 13, 14)
    # The hand is over: next is the deal (or the end), not a CHOOSE_LEADER.
    assert state.current_player() == CHANCE
    assert state.scores() == [0.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize(("players", "threshold"), [(3, 15), (4, 15), (5, 12), (6, 10)])
def test_game_ends_after_the_hand_that_reaches_the_threshold(players: int, threshold: int) -> None:
    hands = [[12 + i] for i in range(players)]
    # Seat 0 is one below the threshold: losing the last trick of the hand ends the game.
    points = [threshold - 1] + [0] * (players - 1)
    state = SeasOfStrifeState.position(hands, leader=1, points=points)
    # Seat 0 plays last with 12 vs. higher reds; seat players-1 holds the highest red.
    for _ in range(players):
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() == CHANCE  # nobody reached it: seat players-1 took it
    state = SeasOfStrifeState.position(
        [[20]] + [[12 + i] for i in range(1, players)], leader=0, points=points
    )
    for _ in range(players):
        state.apply_action(state.legal_actions()[0])
    assert state.current_player() == TERMINAL
    assert state.scores()[0] == threshold


def test_fewest_points_win_and_ties_share_ranks() -> None:
    state = SeasOfStrifeState.position([[20], [12], [13], [14]], leader=0, points=[14, 3, 3, 5])
    for _ in range(4):
        state.apply_action(state.legal_actions()[0])
    assert state.is_terminal()
    assert state.scores() == [15.0, 3.0, 3.0, 5.0]
    assert state.ranks() == [3, 0, 0, 2]


def test_observation_hides_other_hands() -> None:
    state = GAME.new_game(4)
    state.apply_chance(state.sample_chance(random.Random(2)))
    obs = state.observation(1)
    assert set(obs) >= {"hand", "hand_sizes", "trick", "points", "tricks_taken"}
    others = {c for s in (0, 2, 3) for c in state.observation(s)["hand"]}
    assert others.isdisjoint(obs["hand"])
    assert "hands" not in obs


def test_bad_deal_outcome_changes_nothing() -> None:
    state = GAME.new_game(4)
    with pytest.raises(IllegalActionError):
        state.apply_chance((1, 2, 3))
    assert state.current_player() == CHANCE


def test_voids_are_public_and_resampling_respects_them() -> None:
    # Seat 1 did not follow red: it is void in red from then on.
    state = SeasOfStrifeState.position(
        [[12, 21, 31], [41, 42, 43], [13, 22, 32], [14, 23, 33]], leader=0, trick=[]
    )
    play(state, 12, 41)
    assert state.voids() == [0, 1 << 1, 0, 0]
    rng = random.Random(3)
    for _ in range(50):
        twin = state.resample_hidden(0, rng)
        assert not any(colour_name(c) == "red" for c in twin.hands[1])
        assert [len(h) for h in twin.hands] == [len(h) for h in state.hands]
        assert twin.observation(0) == state.observation(0)


def test_resampling_keeps_the_forced_opening_card_with_its_holder() -> None:
    state = GAME.new_game(4)
    state.apply_chance(state.sample_chance(random.Random(4)))
    holder = state.current_player()
    viewer = (holder + 1) % 4
    for seed in range(20):
        twin = state.resample_hidden(viewer, random.Random(seed))
        assert 0 in twin.observation(holder)["hand"]
        assert twin.legal_actions() == [0]
