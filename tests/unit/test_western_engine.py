"""Western Legends: Showdown engine: setup, abilities, locations, turns, scoring."""

from __future__ import annotations

import itertools
import random

import pytest

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.errors import GameOptionError, IllegalActionError
from saloon.games.western_showdown.cards import (
    CABARET,
    DOCTOR,
    HIDEOUT,
    MINE,
    RANCH,
    SALOON,
    SHERIFF,
    VALUE,
    condition_met,
    stack_winner,
)
from saloon.games.western_showdown.engine import (
    DONE,
    NO,
    PASS,
    SKIP,
    YES,
    WesternShowdownState,
)
from tests.unit.western_positions import all_cards, black, new_game, place, red, table

GAME = get_game("western-showdown-v1")


# -- setup ------------------------------------------------------------------------------


def test_setup_deals_three_and_mulligan_reshuffles_for_both_seats() -> None:
    state = new_game()
    assert state.current_player() == CHANCE
    assert state.decision_kind() == "LOCATIONS"
    state.apply_chance((4, 0, 6))
    assert state.decision_kind() == "START_PLAYER"
    state.apply_chance((1,))
    assert state.decision_kind() == "SHUFFLE"
    state.apply_chance(tuple(range(9)))
    state.apply_chance(tuple(range(17, 8, -1)))
    assert state.hands == [[0, 1, 2], [15, 16, 17]]
    assert state.reputation == 1
    # Seat 1 (the start player) mulligans first: discards two, one at a time.
    assert state.current_player() == 1 and state.decision_kind() == "MULLIGAN"
    assert state.legal_actions() == [15, 16, 17, DONE]
    state.apply_action(17)
    state.apply_action(15)
    assert state.hands[1] == [16]
    state.apply_action(DONE)
    assert state.hands[1] == [13, 14, 16]  # drew the top two of 14,13,12,...
    assert state.decision_kind() == "RESHUFFLE" and state.current_player() == CHANCE
    assert sorted(state.draw[1]) == [9, 10, 11, 12, 15, 17]
    state.apply_chance((9, 10, 11, 12, 15, 17))
    # Seat 0 keeps its hand; the reshuffle is a chance event all the same.
    assert state.current_player() == 0 and state.decision_kind() == "MULLIGAN"
    state.apply_action(DONE)
    assert state.decision_kind() == "RESHUFFLE"
    state.apply_chance((8, 7, 6, 5, 4, 3))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    assert state.mulligans == [0, 2]
    assert all_cards(state) == list(range(18))


def test_after_a_third_discard_done_is_the_only_legal_mulligan_decision() -> None:
    # A decision with a single legal action is still a decision in the log (RULINGS).
    state = new_game()
    for outcome in ((0, 1, 2), (0,), tuple(range(9)), tuple(range(9, 18))):
        state.apply_chance(outcome)
    for card in (0, 1, 2):
        state.apply_action(card)
    assert state.decision_kind() == "MULLIGAN"
    assert state.legal_actions() == [DONE]
    state.apply_action(DONE)
    assert state.hands[0] == [3, 4, 5]
    assert state.decision_kind() == "RESHUFFLE"


def test_bad_chance_outcomes_change_nothing() -> None:
    state = new_game()
    for bad in ((0, 0, 1), (0, 1), (0, 1, 7)):
        with pytest.raises(IllegalActionError):
            state.apply_chance(bad)
    assert state.decision_kind() == "LOCATIONS"
    state.apply_chance((0, 1, 2))
    with pytest.raises(IllegalActionError):
        state.apply_chance((2,))
    state.apply_chance((0,))
    with pytest.raises(IllegalActionError):
        state.apply_chance(tuple(range(1, 10)))
    assert state.decision_kind() == "SHUFFLE" and state.hands == [[], []]


def test_best_of_must_be_one_or_three() -> None:
    with pytest.raises(GameOptionError):
        new_game({"best_of": 2})
    with pytest.raises(GameOptionError):
        new_game({"best_of": 5})


# -- placement and activation -----------------------------------------------------------


def test_placement_not_above_the_top_does_not_activate() -> None:
    state = table(stacks=([black(5)], [], []), hands=([red(4), red(1)], [black(1)]))
    state.apply_action(place(red(4), RANCH))  # 4 on 5: no SADDLE UP
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    assert state.stacks[0] == [black(5), red(4)]


def test_turn_offers_every_card_at_every_open_location_and_pass_to_the_holder() -> None:
    state = table(hands=([red(2), red(6)], [black(1)]))
    legal = state.legal_actions()
    expected = sorted(place(c, loc) for c in (red(2), red(6)) for loc in (RANCH, SALOON, MINE))
    assert legal == [*expected, PASS]
    assert state.action_to_json(place(red(6), MINE)) == {"card": red(6), "location": MINE}
    assert state.action_to_json(PASS) == {"pass": True}


def test_draw_back_up_to_three_after_a_turn() -> None:
    state = table(hands=([red(2), red(6), red(7)], [black(1)]))
    pile = list(state.draw[0])
    state.apply_action(place(red(6), SALOON))  # alone on the table: CHEAT is not asked
    assert state.hands[0] == sorted([red(2), red(7), pile[0]])
    assert state.draw[0] == pile[1:]


def test_illegal_action_changes_nothing() -> None:
    state = table(hands=([red(2)], [black(1)]))
    before = state.render()
    with pytest.raises(IllegalActionError):
        state.apply_action(place(black(1), RANCH))
    with pytest.raises(IllegalActionError):
        state.apply_action(9999)
    assert state.render() == before


# -- abilities --------------------------------------------------------------------------


def test_wallop_second_wallop_goes_on_the_same_stack() -> None:
    state = table(hands=([red(1, 0), red(1, 1), red(7)], [black(2)]))
    state.apply_action(place(red(1, 0), SALOON))
    assert state.decision_kind() == "WALLOP_SECOND"
    assert state.legal_actions() == [NO, YES]
    assert state.action_to_json(YES) == {"yes": True}
    state.apply_action(YES)
    assert state.stacks[1] == [red(1, 0), red(1, 1)]
    assert state.current_player() == 1


def test_wallop_without_a_second_one_or_on_a_stack_asks_nothing() -> None:
    state = table(hands=([red(1, 0), red(7)], [black(2)]))
    state.apply_action(place(red(1, 0), SALOON))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    state = table(stacks=([], [black(2)], []), hands=([red(1, 0), red(1, 1)], [black(3)]))
    state.apply_action(place(red(1, 0), SALOON))  # 1 on a 2: no activation
    assert state.current_player() == 1


def test_determination_checks_first_then_offers_an_extra_card() -> None:
    # Ranch 6+4+1 = 11 is not > 11; the 2 (above the 1) makes 13: won before the extra.
    state = table(
        stacks=([black(6), black(4), black(1)], [], []),
        hands=([red(2), red(5), red(3)], [black(7)]),
    )
    state.apply_action(place(red(2), RANCH))
    assert state.won[0] == [black(6), black(4), black(1), red(2)]
    assert state.stacks[0] == []
    assert state.decision_kind() == "DETERMINATION_EXTRA" and state.current_player() == 0
    legal = state.legal_actions()
    assert legal[-1] == SKIP and place(red(5), RANCH) in legal
    assert state.action_to_json(SKIP) == {"skip": True}
    # The extra card activates by the normal rule: a 3 at an empty location asks ACTIVATE.
    state.apply_action(place(red(3), MINE))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(NO)
    assert state.current_player() == 1


def test_determination_skip_ends_the_turn_and_draws() -> None:
    state = table(hands=([red(2), red(5)], [black(7)]))
    state.apply_action(place(red(2), SALOON))
    state.apply_action(SKIP)
    assert state.current_player() == 1 and len(state.hands[0]) == 3


def test_bulletproof_only_its_owner_may_cover_it() -> None:
    state = table(hands=([red(3), red(5)], [black(6), black(7)]))
    state.apply_action(place(red(3), RANCH))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(YES)
    assert state.current_player() == 1
    assert all(a % 7 != RANCH for a in state.legal_actions())
    state.apply_action(place(black(6), SALOON))
    state.apply_action(NO)  # CHEAT declined
    # Seat 0 may still cover its own BULLETPROOF.
    assert place(red(5), RANCH) in state.legal_actions()


def test_declined_bulletproof_protects_nothing() -> None:
    state = table(hands=([red(3)], [black(6)]))
    state.apply_action(place(red(3), RANCH))
    state.apply_action(NO)
    assert place(black(6), RANCH) in state.legal_actions()


def test_saddle_up_moves_the_whole_stack_onto_a_bulletproof() -> None:
    state = table(
        stacks=([red(3)], [red(1), black(2)], []),
        hands=([red(2)], [black(4), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    state.apply_action(place(black(4), SALOON))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(YES)
    assert state.decision_kind() == "SADDLE_DEST"
    assert state.legal_actions() == sorted([RANCH, MINE])
    assert state.action_to_json(RANCH) == {"location": RANCH}
    state.apply_action(RANCH)
    assert state.stacks == [[red(3), red(1), black(2), black(4)], [], []]


def test_stick_em_up_moves_one_card_but_never_a_bulletproof() -> None:
    state = table(
        stacks=([red(3), black(1)], [red(1)], []),
        hands=([red(2)], [black(5), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    state.apply_action(place(black(5), SALOON))
    state.apply_action(YES)
    assert state.decision_kind() == "STICK_SOURCE"
    # Not itself, not the activated BULLETPROOF; cards below the 5 may move.
    assert state.legal_actions() == [red(1), black(1)]
    assert state.action_to_json(red(1)) == {"card": red(1), "location": SALOON, "position": 0}
    state.apply_action(red(1))
    assert state.decision_kind() == "STICK_DEST"
    assert state.legal_actions() == sorted([RANCH, MINE])
    state.apply_action(MINE)
    assert state.stacks == [[red(3), black(1)], [black(5)], [red(1)]]


def test_stick_em_up_is_not_asked_when_nothing_may_move() -> None:
    state = table(
        stacks=([red(3)], [], []), hands=([red(2)], [black(5)]), turn=1, bulletproof=(red(3),)
    )
    state.apply_action(place(black(5), SALOON))
    assert state.current_player() == 0 and state.decision_kind() == "TURN"
    assert state.stacks[1] == [black(5)]


def test_cheat_swaps_two_cards_and_a_moved_bulletproof_protects_where_it_lands() -> None:
    state = table(
        stacks=([red(3), red(4)], [black(1)], []),
        hands=([red(1)], [black(6), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    state.apply_action(place(black(6), MINE))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(YES)
    assert state.decision_kind() == "CHEAT_PICK"
    assert state.legal_actions() == sorted([red(3), red(4), black(1), black(6)])
    state.apply_action(red(3))
    assert state.decision_kind() == "CHEAT_PICK"
    assert red(3) not in state.legal_actions()
    state.apply_action(black(6))  # CHEAT itself may be picked
    assert state.stacks == [[black(6), red(4)], [black(1)], [red(3)]]
    # The BULLETPROOF now tops the Mine: seat 0 (its owner) may play there, seat 1 not.
    assert state.current_player() == 0
    assert place(red(1), MINE) in state.legal_actions()


def test_cheat_needs_two_cards_on_the_table() -> None:
    state = table(hands=([red(6)], [black(1)]))
    state.apply_action(place(red(6), RANCH))
    assert state.current_player() == 1


def test_living_legend_takes_its_stack() -> None:
    state = table(stacks=([black(6), black(1)], [], []), hands=([red(7)], [black(2)]))
    state.apply_action(place(red(7), RANCH))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(YES)
    assert state.won[0] == [black(6), black(1), red(7)]
    assert state.stacks[0] == []


def test_living_legend_on_an_empty_location_does_nothing() -> None:
    state = table(hands=([red(7)], [black(2)]))
    state.apply_action(place(red(7), RANCH))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    assert state.stacks[0] == [red(7)] and state.won == [[], []]


def test_living_legend_on_a_seven_does_not_activate() -> None:
    state = table(
        locations=(DOCTOR, SALOON, MINE), stacks=([black(7)], [], []), hands=([red(7)], [black(2)])
    )
    state.apply_action(place(red(7), DOCTOR))
    assert state.current_player() == 1 and state.stacks[0] == [black(7), red(7)]


# -- location conditions ----------------------------------------------------------------

CONDITION_CASES = [
    # (location, stack before, card placed by seat 0 that completes it)
    (SALOON, [black(1, 0), red(1, 0)], red(1, 1)),
    (SHERIFF, [black(5), red(6), black(1)], red(4)),
    (DOCTOR, [black(1), red(4), black(5)], red(3)),
    (MINE, [black(6), red(4), red(1)], red(5)),
    (RANCH, [black(6), red(4)], red(5)),
    (CABARET, [black(1), red(5)], red(6)),
    (HIDEOUT, [black(3), black(1), red(1)], red(2)),
]


@pytest.mark.parametrize(("location", "stack", "card"), CONDITION_CASES)
def test_location_condition_gives_the_stack_to_the_player_on_turn(
    location: int, stack: list[int], card: int
) -> None:
    others = [loc for loc in range(7) if loc != location][:2]
    state = table(
        locations=(location, others[0], others[1]),
        stacks=(stack, [], []),
        hands=([card], [black(7)] if black(7) not in stack else [black(2)]),
    )
    assert not condition_met(location, stack)
    state.apply_action(place(card, location))
    if state.decision_kind() == "ACTIVATE":
        state.apply_action(NO)
    assert state.won[0] == [*stack, card]
    assert state.stacks[0] == []
    assert state.locations[0] == location  # the location stays


@pytest.mark.parametrize(
    ("location", "stack"),
    [
        (SALOON, [red(1, 0), red(1, 1), red(2)]),
        (SHERIFF, [red(1), red(2), black(3)]),
        (DOCTOR, [red(1, 0), black(1), red(2), black(3)]),
        (MINE, [red(1), black(2), red(3), red(4), black(5)]),
        (RANCH, [red(7), black(4)]),
        (CABARET, [red(1), red(5), black(7)]),
        (HIDEOUT, [red(1), red(2), black(7)]),
        (HIDEOUT, [red(1), red(2), black(3), black(5)]),
    ],
)
def test_location_condition_not_met(location: int, stack: list[int]) -> None:
    assert not condition_met(location, stack)


def test_one_ability_meets_two_locations_at_once() -> None:
    # The red 5 tops the Ranch (6+1+5 = 12 > 11) and STICK 'EM UP moves a black 1 onto
    # the Saloon's two 1s: both stacks go to seat 0 in the same check.
    state = table(
        locations=(RANCH, SALOON, MINE),
        stacks=([black(6), red(1, 0)], [red(1, 1), black(1, 0)], [black(1, 1)]),
        hands=([red(5)], [black(7)]),
    )
    state.apply_action(place(red(5), RANCH))
    state.apply_action(YES)
    state.apply_action(black(1, 1))
    state.apply_action(SALOON)
    assert sorted(state.won[0]) == sorted(
        [black(6), red(1, 0), red(5), red(1, 1), black(1, 0), black(1, 1)]
    )
    assert state.stacks == [[], [], []]


def test_checks_run_after_an_unactivated_placement() -> None:
    state = table(stacks=([black(7), black(5)], [], []), hands=([red(1)], [black(2)]))
    state.apply_action(place(red(1), RANCH))  # 7+5+1 = 13 > 11, no activation
    assert state.won[0] == [black(7), black(5), red(1)]


# -- REPUTATION and turn order ----------------------------------------------------------


def test_reputation_pass_blocks_the_receiver_until_it_completes_a_turn() -> None:
    state = table(hands=([red(5)], [black(5), black(6)]))
    pile = list(state.draw[0])
    state.apply_action(PASS)
    assert state.reputation == 1 and state.hands[0] == [red(5)]  # a pass draws nothing
    assert state.draw[0] == pile
    assert state.current_player() == 1 and PASS not in state.legal_actions()
    state.apply_action(place(black(5), SALOON))  # alone on the table: nothing to move
    assert state.current_player() == 0 and PASS not in state.legal_actions()
    state.apply_action(place(red(5), MINE))
    state.apply_action(NO)
    assert state.current_player() == 1 and PASS in state.legal_actions()


def test_a_player_without_cards_is_skipped_and_may_still_receive_reputation() -> None:
    state = table(
        hands=([red(6), red(5)], []),
        draw=([], []),
    )
    assert PASS in state.legal_actions()
    state.apply_action(PASS)
    assert state.current_player() == 0 and PASS not in state.legal_actions()
    state.apply_action(place(red(5), RANCH))  # alone on the table: nothing to stick up
    assert state.current_player() == 0 and state.decision_kind() == "TURN"


# -- end of the game --------------------------------------------------------------------


def test_stack_winner_highest_card_then_nearer_the_top() -> None:
    assert stack_winner([red(7), black(5)]) == 0
    assert stack_winner([red(4), black(4)]) == 1
    assert stack_winner([black(4), red(4), red(1)]) == 0


def test_end_scoring_and_nine_all_goes_to_the_reputation_holder() -> None:
    # Seat 0 has won 9 cards, seat 1 has won 7. The last card, a red 1 on the black 7 at
    # the Mine (no condition met), ends the game; that stack goes to seat 1 (highest
    # card): 9-9, and seat 0 holds REPUTATION.
    won0 = [red(1, 0), red(1, 1), red(2), red(3), red(4), red(5), red(6), red(7)]
    won1 = [black(1, 0), black(1, 1), black(1, 2), black(2), black(3), black(4), black(5)]
    state = table(
        locations=(RANCH, SALOON, MINE),
        stacks=([], [], [black(7)]),
        hands=([red(1, 2)], []),
        draw=([], []),
        reputation=0,
    )
    state.won = [[*won0, black(6)], list(won1)]
    assert all_cards(state) == list(range(18))
    state.apply_action(place(red(1, 2), MINE))
    assert state.current_player() == TERMINAL
    assert state.scores() == [9.0, 9.0]
    assert state.ranks() == [0, 1]
    assert state.legal_actions() == []


def test_best_of_three_loser_starts_and_scores_are_games_won() -> None:
    rng = random.Random(3)
    state = new_game({"best_of": 3})
    starters = []
    seen_games = 0
    while not state.is_terminal():
        assert isinstance(state, WesternShowdownState)
        if state.game_number != seen_games:
            seen_games = state.game_number
            assert state.decision_kind() == "LOCATIONS"
        if state.is_chance():
            if state.decision_kind() == "SHUFFLE" and state._shuffle_seat == 0:
                starters.append(state.start_player)
            state.apply_chance(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert isinstance(state, WesternShowdownState)
    results = state.results
    assert 2 <= len(results) <= 3
    for previous, following in itertools.pairwise(results):
        assert following[0] == 1 - previous[1]
    assert [r[0] for r in results] == starters
    wins = [sum(1 for r in results if r[1] == s) for s in range(2)]
    assert state.scores() == [float(w) for w in wins] and max(wins) == 2
    assert state.ranks() == ([0, 1] if wins[0] == 2 else [1, 0])


# -- information ------------------------------------------------------------------------


def _random_midgame(seed: int) -> WesternShowdownState:
    rng = random.Random(seed)
    state = new_game()
    for _ in range(rng.randrange(5, 60)):
        if state.is_terminal():
            break
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    assert isinstance(state, WesternShowdownState)
    return state


@pytest.mark.parametrize("seed", range(40))
def test_resample_hidden_keeps_the_observation_and_the_cards(seed: int) -> None:
    state = _random_midgame(seed)
    rng = random.Random(seed)
    for seat in (0, 1):
        other = state.resample_hidden(seat, rng)
        assert other.observation(seat) == state.observation(seat)
        assert all_cards(other) == list(range(18))
        if not other.is_chance() and not other.is_terminal():
            rng2 = random.Random(seed)
            while not other.is_terminal():  # the redealt state plays on
                if other.is_chance():
                    other.apply_chance(other.sample_chance(rng2))
                else:
                    other.apply_action(rng2.choice(other.legal_actions()))


def test_observation_shows_own_hand_only_and_describes_cards_fully() -> None:
    state = table(
        stacks=([red(3)], [], []),
        hands=([red(2)], [black(6)]),
        bulletproof=(red(3),),
    )
    obs = state.observation(1)
    assert [c["id"] for c in obs["hand"]] == [black(6)]
    assert obs["hand_sizes"] == [1, 1]
    assert obs["hand"][0] == {
        "id": black(6),
        "colour": "black",
        "value": 6,
        "ability": "CHEAT",
        "owner": 1,
    }
    ranch = obs["locations"][0]
    assert ranch["id"] == RANCH and ranch["name"] == "Ranch"
    assert ranch["stack"][0]["bulletproof"] is True
    assert "draw" not in obs and len(obs["draw_pile"]) == obs["draw_pile_sizes"][1]


def test_values_follow_the_id_layout() -> None:
    assert [VALUE[c] for c in range(18)] == [1, 1, 1, 2, 3, 4, 5, 6, 7] * 2


def test_resample_during_the_opponents_wallop_second_keeps_a_one_in_its_hand() -> None:
    # Being asked WALLOP_SECOND reveals that the player holds another 1.
    state = table(hands=([red(1, 0), red(1, 1), red(7)], [black(2)]))
    state.apply_action(place(red(1, 0), SALOON))
    for seed in range(30):
        other = state.resample_hidden(1, random.Random(seed))
        assert isinstance(other, WesternShowdownState)
        assert any(VALUE[c] == 1 for c in other.hands[0])
        other.apply_action(YES)
        assert len(other.stacks[1]) == 2
