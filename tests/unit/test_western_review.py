"""Western Legends: Showdown: a rules review, one test per RULINGS.md point not yet covered
by test_western_engine.py (hand-built positions), plus random-play invariants that restate
the activation, check and drawing rules independently of the engine's code."""

from __future__ import annotations

import random

import pytest

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.western_showdown import engine as ws
from saloon.games.western_showdown.cards import (
    DOCTOR,
    MINE,
    RANCH,
    SALOON,
    SHERIFF,
    VALUE,
    condition_met,
)
from saloon.games.western_showdown.engine import (
    DONE,
    NO,
    PASS,
    SKIP,
    YES,
    WesternShowdownState,
)
from tests.unit.western_positions import all_cards, black, place, red, table

GAME = get_game("western-showdown-v1")


def play_out(state: WesternShowdownState, rng: random.Random) -> None:
    while not state.is_terminal():
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))


# -- activation ------------------------------------------------------------------------


def test_equal_value_does_not_activate() -> None:
    # A red 5 on a black 5: not greater, so no STICK 'EM UP even with cards to move.
    state = table(stacks=([black(1), black(5)], [red(1)], []), hands=([red(5)], [black(7)]))
    state.apply_action(place(red(5), RANCH))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    assert state.stacks[0] == [black(1), black(5), red(5)]


def test_greater_than_the_previous_top_activates_even_over_a_higher_card_below() -> None:
    # Only the previous top counts: a 4 on [7, 1] activates (4 > 1).
    state = table(stacks=([black(7), black(1)], [], []), hands=([red(4)], [black(2)]))
    state.apply_action(place(red(4), RANCH))
    assert state.decision_kind() == "ACTIVATE"


def test_activation_is_optional() -> None:
    state = table(stacks=([black(1)], [red(1)], []), hands=([red(4)], [black(7)]))
    state.apply_action(place(red(4), RANCH))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(NO)
    assert state.stacks == [[black(1), red(4)], [red(1)], []]
    assert state.current_player() == 1


def test_a_seven_moved_by_stick_em_up_does_not_activate() -> None:
    # STICK 'EM UP moves the black 7 onto a stack topped by a 1: it takes nothing.
    state = table(
        locations=(DOCTOR, SHERIFF, MINE),
        stacks=([black(7)], [red(1)], []),
        hands=([red(5)], [black(2)]),
    )
    state.apply_action(place(red(5), MINE))
    state.apply_action(YES)
    state.apply_action(black(7))
    state.apply_action(SHERIFF)
    assert state.stacks == [[], [red(1), black(7)], [red(5)]]
    assert state.won == [[], []]
    assert state.current_player() == 1 and state.decision_kind() == "TURN"


def test_cards_moved_by_saddle_up_do_not_activate() -> None:
    # SADDLE UP carries a 7 and a 3 onto an empty stack: no LIVING LEGEND, no BULLETPROOF.
    state = table(
        locations=(DOCTOR, SHERIFF, MINE),
        stacks=([black(7), black(3)], [], []),
        hands=([red(4)], [black(2)]),
    )
    state.apply_action(place(red(4), DOCTOR))
    state.apply_action(YES)
    state.apply_action(SHERIFF)
    assert state.stacks == [[], [black(7), black(3), red(4)], []]
    assert state.bulletproof == 0 and state.won == [[], []]
    assert state.current_player() == 1


def test_a_card_swapped_by_cheat_does_not_activate() -> None:
    state = table(
        locations=(DOCTOR, SHERIFF, MINE),
        stacks=([black(1)], [red(7)], []),
        hands=([red(6)], [black(2)]),
    )
    state.apply_action(place(red(6), MINE))
    state.apply_action(YES)
    state.apply_action(red(7))
    state.apply_action(red(6))
    assert state.stacks == [[black(1)], [red(6)], [red(7)]]
    assert state.won == [[], []] and state.current_player() == 1


# -- ACTIVATE: asked only where the choice can change something ---------------------------


def test_bulletproof_and_saddle_up_are_always_asked_when_they_activate() -> None:
    for card in (red(3), red(4)):
        state = table(hands=([card], [black(7)]))  # alone on an empty table
        state.apply_action(place(card, RANCH))
        assert state.decision_kind() == "ACTIVATE" and state.legal_actions() == [NO, YES]


def test_wallop_and_determination_are_never_asked_activate() -> None:
    state = table(hands=([red(1), red(2)], [black(7)]))
    state.apply_action(place(red(1), RANCH))
    assert state.decision_kind() == "TURN" and state.current_player() == 1
    state = table(hands=([red(2), red(7)], [black(7)]))
    state.apply_action(place(red(2), RANCH))
    assert state.decision_kind() == "DETERMINATION_EXTRA"


def test_stick_em_up_is_asked_when_only_a_declined_bulletproof_may_move() -> None:
    state = table(stacks=([black(3)], [], []), hands=([red(5)], [black(7)]))
    state.apply_action(place(red(5), SALOON))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(YES)
    assert state.legal_actions() == [black(3)]


def test_stick_em_up_alone_on_the_table_is_not_asked() -> None:
    state = table(hands=([red(5)], [black(7)]))
    state.apply_action(place(red(5), SALOON))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"


def test_cheat_with_exactly_two_cards_asks_and_its_second_pick_is_still_a_decision() -> None:
    state = table(stacks=([black(1)], [], []), hands=([red(6)], [black(7)]))
    state.apply_action(place(red(6), SALOON))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(YES)
    assert state.legal_actions() == [red(6), black(1)]
    state.apply_action(black(1))
    # One legal action left: still a CHEAT_PICK decision of seat 0 (All games ruling).
    assert state.current_player() == 0 and state.decision_kind() == "CHEAT_PICK"
    assert state.legal_actions() == [red(6)]
    state.apply_action(red(6))
    assert state.stacks == [[red(6)], [black(1)], []]


def test_living_legend_over_a_six_is_asked_and_may_be_declined() -> None:
    state = table(
        locations=(DOCTOR, SALOON, MINE),
        stacks=([black(1), black(6)], [], []),
        hands=([red(7)], [black(2)]),
    )
    state.apply_action(place(red(7), DOCTOR))
    assert state.decision_kind() == "ACTIVATE"
    state.apply_action(NO)
    assert state.stacks[0] == [black(1), black(6), red(7)] and state.won == [[], []]


def test_living_legend_over_own_card_takes_the_stack() -> None:
    state = table(
        locations=(DOCTOR, SHERIFF, MINE), stacks=([red(6)], [], []), hands=([red(7)], [black(2)])
    )
    state.apply_action(place(red(7), DOCTOR))
    state.apply_action(YES)
    assert state.won[0] == [red(6), red(7)] and state.stacks[0] == []


# -- WALLOP ----------------------------------------------------------------------------


def test_wallop_pair_is_one_step_and_the_turn_then_draws_two() -> None:
    state = table(hands=([red(1, 0), red(1, 1), red(7)], [black(2)]))
    pile = list(state.draw[0])
    state.apply_action(place(red(1, 0), SALOON))
    assert state.decision_kind() == "WALLOP_SECOND" and state.current_player() == 0
    state.apply_action(YES)
    assert state.stacks[1] == [red(1, 0), red(1, 1)]
    assert state.played[0] == [red(1, 0), red(1, 1)]
    assert state.hands[0] == sorted([red(7), *pile[:2]])
    assert state.current_player() == 1 and state.decision_kind() == "TURN"


def test_wallop_second_declined_leaves_the_one_in_hand() -> None:
    state = table(hands=([red(1, 0), red(1, 1)], [black(2)]))
    state.apply_action(place(red(1, 0), SALOON))
    state.apply_action(NO)
    assert state.stacks[1] == [red(1, 0)] and red(1, 1) in state.hands[0]


def test_a_third_one_not_activating_wins_the_saloon_after_a_wallop_pair() -> None:
    # The pair (one step, one check) leaves two 1s; black's 1 on them does not activate
    # but its own check gives black the Saloon.
    state = table(
        locations=(SALOON, RANCH, MINE),
        hands=([red(1, 0), red(1, 1), red(7)], [black(1), black(7)]),
    )
    state.apply_action(place(red(1, 0), SALOON))
    state.apply_action(YES)
    assert state.stacks[0] == [red(1, 0), red(1, 1)] and state.current_player() == 1
    state.apply_action(place(black(1), SALOON))
    assert state.won[1] == [red(1, 0), red(1, 1), black(1)]


# -- DETERMINATION ---------------------------------------------------------------------


def test_determination_not_above_the_top_gives_no_extra_card() -> None:
    state = table(stacks=([black(3)], [], []), hands=([red(2), red(5)], [black(7)]))
    state.apply_action(place(red(2), RANCH))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"


def test_determination_with_an_empty_hand_checks_and_ends_the_turn() -> None:
    # The 2 is the last card in hand: no DETERMINATION_EXTRA; the check still runs.
    state = table(
        stacks=([black(6), black(4), black(1)], [], []),
        hands=([red(2)], [black(7)]),
        draw=([], [black(1, 1)]),
    )
    state.apply_action(place(red(2), RANCH))
    assert state.won[0][-4:] == [black(6), black(4), black(1), red(2)]
    assert state.current_player() == 1 and state.decision_kind() == "TURN"


def test_determination_extra_card_has_its_own_check_and_may_not_activate() -> None:
    # The 2 on a 1 activates (nothing met); the extra red 1 on the Ranch's 6 + 5 does not
    # activate (1 < 5) but its own check gives the Ranch (12 > 11) to seat 0.
    state = table(
        stacks=([black(6), black(5)], [black(1)], []),
        hands=([red(2), red(1)], [black(7)]),
    )
    state.apply_action(place(red(2), SALOON))
    assert state.decision_kind() == "DETERMINATION_EXTRA" and state.won == [[], []]
    state.apply_action(place(red(1), RANCH))
    assert state.won[0] == [black(6), black(5), red(1)]
    assert state.current_player() == 1 and state.decision_kind() == "TURN"


def test_determination_extra_may_not_cover_an_opponent_bulletproof() -> None:
    state = table(
        stacks=([black(3)], [], []),
        hands=([red(2), red(5)], [black(7)]),
        bulletproof=(black(3),),
    )
    state.apply_action(place(red(2), SALOON))
    legal = state.legal_actions()
    assert place(red(5), RANCH) not in legal
    assert place(red(5), SALOON) in legal and place(red(5), MINE) in legal
    assert legal[-1] == SKIP


def test_determination_check_frees_the_location_for_the_extra_card() -> None:
    # The check after the 2 wins the Ranch first; the extra 7 then lands on an empty Ranch
    # and (empty location) LIVING LEGEND does nothing and asks nothing.
    state = table(
        stacks=([black(6), black(4), black(1)], [], []),
        hands=([red(2), red(7)], [black(5)]),
    )
    state.apply_action(place(red(2), RANCH))
    assert state.stacks[0] == []
    state.apply_action(place(red(7), RANCH))
    assert state.stacks[0] == [red(7)] and state.current_player() == 1


# -- BULLETPROOF -----------------------------------------------------------------------


def test_bulletproof_protects_again_when_its_cover_is_moved_away() -> None:
    # Red's activated BULLETPROOF is covered by a red 4; black's STICK 'EM UP moves the 4
    # away: the BULLETPROOF tops the Ranch again and shuts black out.
    state = table(
        stacks=([red(3), red(4)], [], []),
        hands=([red(1)], [black(5), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    assert place(black(5), RANCH) in state.legal_actions()  # covered: open to black
    state.apply_action(place(black(5), SALOON))
    state.apply_action(YES)
    state.apply_action(red(4))
    state.apply_action(MINE)
    assert state.stacks == [[red(3)], [black(5)], [red(4)]]
    state.apply_action(place(red(1), MINE))  # red's turn
    assert state.current_player() == 1
    assert all(a % 7 != RANCH for a in state.legal_actions() if a != PASS)


def test_a_buried_activated_bulletproof_may_not_be_stuck_up() -> None:
    state = table(
        stacks=([red(3), red(4)], [], []),
        hands=([red(1)], [black(5), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    state.apply_action(place(black(5), SALOON))
    state.apply_action(YES)
    assert state.legal_actions() == [red(4)]


def test_bulletproof_placed_without_activation_protects_nothing() -> None:
    # A red 3 on a black 4 does not activate (no question); black may cover it.
    state = table(stacks=([black(4)], [], []), hands=([red(3)], [black(1)]))
    state.apply_action(place(red(3), RANCH))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    assert state.bulletproof == 0
    assert place(black(1), RANCH) in state.legal_actions()


def test_stick_em_up_may_put_a_card_on_a_bulletproof() -> None:
    state = table(
        stacks=([red(3)], [black(1)], []),
        hands=([red(1)], [black(5), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    state.apply_action(place(black(5), MINE))
    state.apply_action(YES)
    state.apply_action(black(1))
    assert RANCH in state.legal_actions()
    state.apply_action(RANCH)
    assert state.stacks == [[red(3), black(1)], [], [black(5)]]


def test_cheat_may_swap_an_activated_bulletproof() -> None:
    state = table(
        stacks=([red(1), red(3)], [], []),
        hands=([red(2)], [black(6), black(7)]),
        turn=1,
        bulletproof=(red(3),),
    )
    state.apply_action(place(black(6), SALOON))
    state.apply_action(YES)
    assert red(3) in state.legal_actions()
    state.apply_action(red(3))
    state.apply_action(red(1))
    assert state.stacks[0] == [red(3), red(1)]
    state.apply_action(place(red(2), MINE))  # last card in hand: no extra card asked
    # The BULLETPROOF is covered now: black may place on the Ranch again.
    assert state.current_player() == 1 and place(black(7), RANCH) in state.legal_actions()


def test_bulletproof_status_ends_when_the_card_is_won() -> None:
    state = table(
        stacks=([red(6), red(3)], [], []), hands=([red(4)], [black(7)]), bulletproof=(red(3),)
    )
    state.apply_action(place(red(4), RANCH))  # 4 > 3: SADDLE UP asked
    state.apply_action(NO)  # 6 + 3 + 4 = 13 > 11
    assert state.won[0] == [red(6), red(3), red(4)]
    assert state.bulletproof == 0


# -- SADDLE UP and STICK 'EM UP ---------------------------------------------------------


def test_saddle_up_onto_an_empty_stack_keeps_the_order_and_empties_its_location() -> None:
    state = table(
        locations=(DOCTOR, SHERIFF, MINE),
        stacks=([black(1), red(2)], [], [black(6)]),
        hands=([red(4)], [black(7)]),
    )
    state.apply_action(place(red(4), DOCTOR))
    state.apply_action(YES)
    assert state.legal_actions() == sorted([SHERIFF, MINE])
    state.apply_action(SHERIFF)
    assert state.stacks == [[], [black(1), red(2), red(4)], [black(6)]]


def test_stick_em_up_may_bring_a_card_onto_its_own_stack() -> None:
    # Source at another location; destination the STICK 'EM UP's own location.
    state = table(
        locations=(DOCTOR, SHERIFF, MINE),
        stacks=([], [black(1)], []),
        hands=([red(5)], [black(7)]),
    )
    state.apply_action(place(red(5), DOCTOR))
    state.apply_action(YES)
    state.apply_action(black(1))
    assert state.legal_actions() == sorted([DOCTOR, MINE])
    state.apply_action(DOCTOR)
    assert state.stacks == [[red(5), black(1)], [], []]


def test_stick_em_up_from_below_itself_must_leave_its_location() -> None:
    state = table(
        locations=(DOCTOR, SHERIFF, MINE),
        stacks=([black(1)], [], []),
        hands=([red(5)], [black(7)]),
    )
    state.apply_action(place(red(5), DOCTOR))
    state.apply_action(YES)
    assert state.legal_actions() == [black(1)]
    state.apply_action(black(1))
    assert state.legal_actions() == sorted([SHERIFF, MINE])
    assert state.action_to_json(SHERIFF) == {"location": SHERIFF}


def test_stick_em_up_never_offers_itself() -> None:
    state = table(stacks=([black(1)], [], []), hands=([red(5)], [black(7)]))
    state.apply_action(place(red(5), RANCH))
    state.apply_action(YES)
    assert red(5) not in state.legal_actions()


# -- CHEAT ------------------------------------------------------------------------------


def test_cheat_may_swap_two_cards_of_one_stack() -> None:
    state = table(
        locations=(SHERIFF, DOCTOR, MINE),
        stacks=([black(1), black(2), black(3)], [], []),
        hands=([red(6)], [black(7)]),
    )
    state.apply_action(place(red(6), SHERIFF))
    state.apply_action(YES)
    state.apply_action(black(1))
    state.apply_action(black(3))
    assert state.stacks[0] == [black(3), black(2), black(1), red(6)]
    assert state.current_player() == 1


# -- location checks ---------------------------------------------------------------


def test_checks_after_a_declined_ability() -> None:
    state = table(
        locations=(RANCH, SALOON, MINE),
        stacks=([black(6), black(2)], [], []),
        hands=([red(4)], [black(7)]),
    )
    state.apply_action(place(red(4), RANCH))  # 6+2+4 = 12
    state.apply_action(NO)
    assert state.won[0] == [black(6), black(2), red(4)]


def test_a_condition_met_with_the_opponents_cards_pays_the_player_on_turn() -> None:
    # Black's STICK 'EM UP moves a red 4 onto the Sheriff's Office (2 red, 2 black):
    # black wins it, red cards included.
    state = table(
        locations=(SHERIFF, DOCTOR, MINE),
        stacks=([red(1), black(1), black(2)], [red(4)], []),
        hands=([red(2)], [black(5), black(7)]),
        turn=1,
    )
    state.apply_action(place(black(5), MINE))
    state.apply_action(YES)
    state.apply_action(red(4))
    state.apply_action(SHERIFF)
    assert state.won[1] == [red(1), black(1), black(2), red(4)]
    assert state.stacks == [[], [], [black(5)]]


def test_two_locations_met_by_one_cheat_both_go_to_the_player_on_turn() -> None:
    # Black's CHEAT swaps the black 2 on the Saloon with the black 1 on the Ranch:
    # Saloon R1 R1 B1 (three 1s) and Ranch B2 R4 R6 (12 > 11) are both met: black takes
    # both in the one check, although most cards are red.
    state = table(
        locations=(SALOON, RANCH, MINE),
        stacks=([red(1, 0), red(1, 1), black(2)], [black(1), red(4), red(6)], []),
        hands=([red(7)], [black(6), black(7)]),
        turn=1,
    )
    state.apply_action(place(black(6), MINE))
    state.apply_action(YES)
    state.apply_action(black(2))
    state.apply_action(black(1))
    assert sorted(state.won[1]) == sorted(
        [red(1, 0), red(1, 1), black(1), black(2), red(4), red(6)]
    )
    assert state.stacks == [[], [], [black(6)]] and state.won[0] == []


# -- drawing, REPUTATION, turn order -----------------------------------------------------


def test_draw_fewer_than_three_when_the_pile_is_short() -> None:
    state = table(hands=([red(5), red(6)], [black(7)]), draw=([red(1)], [black(1)]))
    state.apply_action(place(red(6), SALOON))
    assert state.hands[0] == [red(1), red(5)] and state.draw[0] == []


def test_reputation_block_survives_until_the_receiver_places() -> None:
    # Seat 0 passes; seat 1 (blocked) places with DETERMINATION + extra: one turn; after
    # it, seat 1 may pass again on its following turn.
    state = table(hands=([red(5), red(6)], [black(2), black(6), black(7)]))
    state.apply_action(PASS)
    assert state.blocked == [False, True] and state.reputation == 1
    assert PASS not in state.legal_actions()
    state.apply_action(place(black(2), SALOON))
    assert PASS not in state.legal_actions()  # DETERMINATION_EXTRA has no pass
    state.apply_action(place(black(7), MINE))
    assert state.blocked == [False, False]
    assert state.current_player() == 0 and PASS not in state.legal_actions()
    state.apply_action(place(red(5), RANCH))
    state.apply_action(NO)
    assert state.current_player() == 1 and PASS in state.legal_actions()


def test_pass_to_an_empty_handed_opponent_keeps_the_blocked_flag_and_the_turn() -> None:
    state = table(hands=([red(5), red(6)], []), draw=([], []))
    state.apply_action(PASS)
    assert state.reputation == 1 and state.blocked[1]
    assert state.current_player() == 0 and state.decision_kind() == "TURN"


def test_the_player_with_cards_plays_on_alone() -> None:
    state = table(hands=([red(5), red(6)], []), draw=([], []), reputation=1)
    state.apply_action(place(red(5), SALOON))  # nothing to move: not asked
    assert state.current_player() == 0
    assert PASS not in state.legal_actions()  # seat 1 holds REPUTATION


# -- the end ----------------------------------------------------------------------------


def test_end_ties_on_the_highest_value_go_to_the_copy_nearer_the_top() -> None:
    # Red's last card, a 1 on Doctor [R7, B7] (no activation, 3 values), ends the game:
    # the Doctor goes to black (its 7 is nearer the top), the Sheriff [B6] to black.
    state = table(
        locations=(DOCTOR, SHERIFF, SALOON),
        stacks=([red(7), black(7)], [black(6)], []),
        hands=([red(1, 1)], []),
        draw=([], []),
    )
    assert [len(w) for w in state.won] == [7, 7]
    state.apply_action(place(red(1, 1), DOCTOR))
    assert state.current_player() == TERMINAL
    assert state.scores() == [7.0, 11.0] and state.ranks() == [1, 0]


def test_game_ends_only_when_both_players_are_out_of_cards() -> None:
    state = table(hands=([red(6)], [black(6)]), draw=([], []))
    state.apply_action(place(red(6), SALOON))  # alone on the table: CHEAT not asked
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    state.apply_action(place(black(6), RANCH))
    state.apply_action(NO)
    assert state.current_player() == TERMINAL


def test_nine_all_goes_to_the_reputation_holder_seat_one() -> None:
    won0 = [red(1, 0), red(1, 1), red(2), red(3), red(4), red(5), red(6), red(7)]
    won1 = [black(1, 0), black(1, 1), black(1, 2), black(2), black(3), black(4), black(5)]
    state = table(
        stacks=([], [], [black(7)]),
        hands=([red(1, 2)], []),
        draw=([], []),
        reputation=1,
    )
    state.won = [[*won0, black(6)], list(won1)]
    state.apply_action(place(red(1, 2), MINE))
    assert state.current_player() == TERMINAL
    assert state.scores() == [9.0, 9.0]
    assert state.ranks() == [1, 0]
    assert state.results[-1][1] == 1


def test_best_of_three_next_game_is_fresh_and_the_loser_starts_with_reputation() -> None:
    state = WesternShowdownState(best_of=3)
    st = table(hands=([red(1, 2)], []), draw=([], []), stacks=([], [], [black(7)]))
    # Copy the hand-built end position into the best-of-3 match state.
    state.locations, state.slot_of = st.locations, st.slot_of
    state.stacks, state.hands, state.draw, state.won = st.stacks, st.hands, st.draw, st.won
    state.won[0].append(black(6))  # seat 0 has won 9 cards, seat 1 has won 7
    state.won[1].remove(black(6))
    state.start_player = state.reputation = 0
    state.mulligans = [0, 0]
    state.turn = 0
    state._phase = ws._TURN
    assert all_cards(state) == list(range(18))
    state.apply_action(place(red(1, 2), MINE))  # Mine [B7, R1] -> black at the end
    # Seat 0: 8 red + B6 = 9; seat 1: 7 + 2 = 9; seat 0 holds REPUTATION and wins game 1.
    assert state.results == [(0, 0, 9, 9)]
    assert state.games_won == [1, 0] and state.scores() == [1.0, 0.0]
    # Game 2: locations drawn afresh, no START_PLAYER, decks fresh, loser (seat 1) starts.
    assert state.current_player() == CHANCE and state.decision_kind() == "LOCATIONS"
    assert state.game_number == 2
    assert state.stacks == [[], [], []] and state.won == [[], []] and state.bulletproof == 0
    assert state.draw == [list(range(9)), list(range(9, 18))]
    assert state.start_player == 1 and state.reputation == 1 and state.blocked == [False, False]
    state.apply_chance((6, 5, 4))
    assert state.decision_kind() == "SHUFFLE"
    state.apply_chance(tuple(range(9)))
    state.apply_chance(tuple(range(9, 18)))
    assert state.current_player() == 1 and state.decision_kind() == "MULLIGAN"
    state.apply_action(DONE)
    state.apply_chance(tuple(state.draw[1]))
    state.apply_action(DONE)
    assert state.decision_kind() == "RESHUFFLE"
    state.apply_chance(tuple(state.draw[0]))
    assert state.current_player() == 1 and state.decision_kind() == "TURN"
    assert PASS in state.legal_actions()


def test_best_of_three_ends_at_two_wins_and_ranks_by_games() -> None:
    state = WesternShowdownState(best_of=3)
    state.games_won = [1, 1]
    state.results = [(0, 1, 8, 10), (0, 0, 10, 8)]
    state.game_number = 3
    st = table(hands=([red(1, 2)], []), draw=([], []), stacks=([], [], [black(7)]), reputation=1)
    state.locations, state.slot_of = st.locations, st.slot_of
    state.stacks, state.hands, state.draw, state.won = st.stacks, st.hands, st.draw, st.won
    state.start_player = state.reputation = 1
    state.turn = 0
    state._phase = ws._TURN
    state.apply_action(place(red(1, 2), MINE))
    # Seat 0 won 8 red, seat 1: 8 black + Mine 2 = 10.
    assert state.current_player() == TERMINAL
    assert state.games_won == [1, 2] and state.scores() == [1.0, 2.0]
    assert state.ranks() == [1, 0]


# -- the mulligan -----------------------------------------------------------------------


def test_reshuffle_is_a_chance_event_for_both_seats_with_no_discards() -> None:
    state = GAME.new_game(2)
    assert isinstance(state, WesternShowdownState)
    for outcome in ((0, 1, 2), (0,), tuple(range(9)), tuple(range(9, 18))):
        state.apply_chance(outcome)
    for seat in (0, 1):
        assert state.current_player() == seat and state.decision_kind() == "MULLIGAN"
        state.apply_action(DONE)
        assert state.current_player() == CHANCE and state.decision_kind() == "RESHUFFLE"
        assert len(state.draw[seat]) == 6
        state.apply_chance(tuple(reversed(state.draw[seat])))
    assert state.current_player() == 0 and state.decision_kind() == "TURN"
    assert state.mulligans == [0, 0]


def test_mulligan_draws_before_the_discards_go_back() -> None:
    # The replacement cards come from the pile as it was; the discards cannot come back.
    state = GAME.new_game(2)
    assert isinstance(state, WesternShowdownState)
    for outcome in ((0, 1, 2), (0,), tuple(range(9)), tuple(range(9, 18))):
        state.apply_chance(outcome)
    state.apply_action(0)
    state.apply_action(1)
    state.apply_action(DONE)
    assert state.hands[0] == [2, 3, 4]
    assert sorted(state.draw[0]) == [0, 1, 5, 6, 7, 8]


# -- information -------------------------------------------------------------------------

PUBLIC_KEYS = {
    "seat",
    "num_players",
    "best_of",
    "game_number",
    "games_won",
    "previous_games",
    "start_player",
    "hand",
    "hand_sizes",
    "draw_pile",
    "draw_pile_sizes",
    "mulligan_discards",
    "locations",
    "won_sizes",
    "played",
    "reputation",
    "pass_blocked",
    "pending",
    "to_play",
    "decision",
}


def _random_states(seed: int, count: int) -> list[WesternShowdownState]:
    rng = random.Random(seed)
    state = GAME.new_game(2, {"best_of": 3})
    assert isinstance(state, WesternShowdownState)
    out = []
    while not state.is_terminal():
        out.append(state.clone())
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return out[:: max(1, len(out) // count)]


@pytest.mark.parametrize("seed", range(6))
def test_observation_never_depends_on_the_opponents_hidden_cards(seed: int) -> None:
    for state in _random_states(seed, 25):
        for seat in (0, 1):
            obs = state.observation(seat)
            assert set(obs) == PUBLIC_KEYS
            assert [c["id"] for c in obs["hand"]] == sorted(state.hands[seat])
            assert obs["draw_pile_sizes"] == [len(p) for p in state.draw]
            assert obs["won_sizes"] == [len(w) for w in state.won]
            assert obs["reputation"] == state.reputation
            # Own draw pile: contents only (sorted), never its order.
            assert [c["id"] for c in obs["draw_pile"]] == sorted(state.draw[seat])
            # Swapping the opponent's hand with its draw pile changes nothing it sees.
            other = state.clone()
            opp = 1 - seat
            pool = other.hands[opp] + other.draw[opp]
            random.Random(seed).shuffle(pool)
            if not (state._phase == ws._WALLOP2 and state.turn == opp):
                other.hands[opp] = sorted(pool[: len(state.hands[opp])])
                other.draw[opp] = pool[len(state.hands[opp]) :]
                assert other.observation(seat) == obs


@pytest.mark.parametrize("seed", range(6))
def test_resample_keeps_what_the_seat_knows(seed: int) -> None:
    rng = random.Random(seed)
    for state in _random_states(seed, 25):
        for seat in (0, 1):
            other = state.resample_hidden(seat, rng)
            assert isinstance(other, WesternShowdownState)
            assert other.observation(seat) == state.observation(seat)
            assert other.hands[seat] == state.hands[seat]
            assert sorted(other.draw[seat]) == sorted(state.draw[seat])
            assert other.discards[seat] == state.discards[seat]
            assert other.stacks == state.stacks and other.won == state.won
            assert other.bulletproof == state.bulletproof
            assert other.legal_actions() == state.legal_actions() or (
                other.current_player() == 1 - seat
            )
            opp = 1 - seat
            assert sorted(other.hands[opp] + other.draw[opp] + other.discards[opp]) == sorted(
                state.hands[opp] + state.draw[opp] + state.discards[opp]
            )


# -- random-play invariants: the rules restated ------------------------------------------


def _expected_after_placement(before: WesternShowdownState, card: int, location: int) -> str | None:
    """The ability decision a placement must open (None: the step ends at once)."""
    slot = before.slot_of[location]
    stack = before.stacks[slot]
    value = VALUE[card]
    if stack and value <= VALUE[stack[-1]]:
        return None
    hand = [c for c in before.hands[before.turn] if c != card]
    table_cards = [c for s in before.stacks for c in s] + [card]
    if value == 1:
        return "WALLOP_SECOND" if any(VALUE[c] == 1 for c in hand) else None
    if value == 2:
        return "DETERMINATION_EXTRA" if hand else None
    if value in (3, 4):
        return "ACTIVATE"
    if value == 5:
        movable = [c for c in table_cards if c != card and not (before.bulletproof >> c) & 1]
        return "ACTIVATE" if movable else None
    if value == 6:
        return "ACTIVATE" if len(table_cards) >= 2 else None
    return "ACTIVATE" if stack else None


@pytest.mark.parametrize("seed", range(40))
def test_random_play_follows_the_rules(seed: int) -> None:
    rng = random.Random(1000 + seed)
    state = GAME.new_game(2, {"best_of": 3} if seed % 2 else None)
    assert isinstance(state, WesternShowdownState)
    while not state.is_terminal():
        if state.is_chance():
            state.apply_chance(state.sample_chance(rng))
            continue
        kind = state.decision_kind()
        seat = state.current_player()
        legal = state.legal_actions()
        if kind in ("TURN", "DETERMINATION_EXTRA"):
            # Checks ran: no stack meets its condition when a placement is chosen.
            for slot, loc in enumerate(state.locations):
                assert not condition_met(loc, state.stacks[slot])
            # Placements: every card in hand at every location, except on top of an
            # opponent's activated BULLETPROOF.
            open_locs = [
                loc
                for slot, loc in enumerate(state.locations)
                if not state.stacks[slot]
                or not (state.bulletproof >> state.stacks[slot][-1]) & 1
                or state.stacks[slot][-1] // 9 == seat
            ]
            placements = sorted(c * 7 + loc for c in state.hands[seat] for loc in open_locs)
            extra = [SKIP] if kind == "DETERMINATION_EXTRA" else []
            if kind == "TURN" and state.reputation == seat and not state.blocked[seat]:
                extra = [PASS]
            assert legal == placements + extra
        if kind == "TURN":
            # Draw up to 3: both seats hold 3 cards or have an empty draw pile.
            for s in (0, 1):
                assert len(state.hands[s]) == 3 or not state.draw[s]
            assert state.hands[seat]
        on_table = sorted(c for stack in state.stacks for c in stack)
        pending = state.pending_card
        if kind == "STICK_SOURCE":
            # Any card but the STICK 'EM UP itself and activated BULLETPROOFs.
            assert legal == [
                c for c in on_table if c != pending and not (state.bulletproof >> c) & 1
            ]
        elif kind == "STICK_DEST":
            source = next(
                loc
                for slot, loc in enumerate(state.locations)
                if state.picked in state.stacks[slot]
            )
            assert legal == sorted(loc for loc in state.locations if loc != source)
        elif kind == "SADDLE_DEST":
            here = state.locations[state.pending_slot]
            assert state.stacks[state.pending_slot][-1] == pending
            assert legal == sorted(loc for loc in state.locations if loc != here)
        elif kind == "CHEAT_PICK":
            first = state.picked
            assert legal == [c for c in on_table if c != first]
        action = rng.choice(legal)
        before = state.clone()
        state.apply_action(action)
        if kind in ("TURN", "DETERMINATION_EXTRA") and action < PASS:
            card, location = divmod(action, 7)
            expected = _expected_after_placement(before, card, location)
            if expected is not None:
                assert state.current_player() == seat and state.decision_kind() == expected
            else:
                assert state.decision_kind() not in (
                    "ACTIVATE",
                    "WALLOP_SECOND",
                    "DETERMINATION_EXTRA",
                )
        assert all_cards(state) == list(range(18))
    assert state.ranks() in ([0, 1], [1, 0])
