"""Seizure rules review: the RULINGS.md points the first test files did not pin down yet,
one hand-built situation each, plus regressions for what the review found broken."""

from __future__ import annotations

import random

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.seizure.cards import (
    ACTIVE,
    LEFT_FIRST,
    MINUS_FIRST,
    PLUS_FIRST,
    RIGHT_FIRST,
    TRADE_FIRST,
    card_json,
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
from saloon.referee.match import play_local
from saloon.sdk.games import seizure as sdk
from tests.unit.seizure_positions import card, play

GAME = get_game("seizure-v1")

LEFT, RIGHT, TRADE = LEFT_FIRST, RIGHT_FIRST, TRADE_FIRST
PLUS, MINUS = PLUS_FIRST, MINUS_FIRST


def top_of_draw(hands: list[list[int]], pile: list[int], top: list[int]) -> list[int]:
    """A full draw pile whose last cards (top last) are ``top``."""
    taken = {*pile, *top, *(c for h in hands for c in h)}
    return [c for c in range(140) if c not in taken] + top


# -- reset (finer points) -------------------------------------------------------------
def test_reset_ends_with_a_seizure_card_and_the_value_reverts() -> None:
    ref = card("red/blue", 9)
    hands = [
        [card("green/yellow", 1), LEFT],
        [card("green/yellow", 2), card("red/green", 3)],
        [card("green/yellow", 4)],
    ]
    state = SeizureState.from_position(hands, [ref], reset=True, streak=3)
    assert state.legal_actions() == [LEFT], "no number card shares a colour"
    state.apply_action(LEFT)
    obs = state.observation(1)
    assert obs["reset_active"] is False
    assert obs["reference"]["id"] == ref and obs["reference_value"] == 9
    assert obs["draws_in_a_row"] == 0
    # Seat 1 now holds seat 0's old hand; the red/green 3 it had would have fitted during
    # the reset, but the value is 9 again: nothing fits, it must draw.
    assert state.current_player() == 1
    assert state.decision_kind() == DRAW


def test_reset_lower_same_pair_number_gives_one_card() -> None:
    ref = card("red/blue", 8)
    low = card("red/blue", 3)
    hands = [[low, PLUS, LEFT], [card("green/yellow", 1)]]
    state = SeizureState.from_position(hands, [ref], reset=True, streak=2)
    assert low in state.legal_actions()
    play(state, low)
    assert state.decision_kind() == GIVE_CARD
    assert state.observation(0)["gives_left"] == 1
    play(state, PLUS, 1)
    assert state.current_player() == 1


def test_reset_needs_every_player_in_a_row() -> None:
    """A play between the draws starts the count again."""
    ref = card("red/blue", 9)
    hands = [
        [card("green/yellow", 1)],
        [card("red/green", 9), card("green/yellow", 2)],
        [card("green/yellow", 3)],
    ]
    draw = top_of_draw(hands, [ref], [card("green/yellow", 6), card("green/yellow", 5)])
    state = SeizureState.from_position(hands, [ref], draw=draw, to_play=2)
    play(state, DRAW_ACTION, DRAW_ACTION)  # seats 2 and 0 draw
    assert state.streak == 2
    play(state, card("red/green", 9))  # seat 1 plays: the count restarts
    assert state.streak == 0 and not state.reset


# -- give-aways -----------------------------------------------------------------------
def test_ten_on_a_same_pair_nine_is_higher_and_gives_one() -> None:
    ref = card("red/blue", 9)
    ten = card("red/blue", 10)
    state = SeizureState.from_position([[ten, PLUS, LEFT], [card("green/yellow", 1)]], [ref])
    play(state, ten)
    assert state.observation(0)["gives_left"] == 1
    play(state, PLUS, 1)
    assert state.current_player() == 1
    assert state.observation(1)["reference_value"] == 0, "a 10 counts 0 once on the table"


def test_give_card_offers_every_card_in_hand_including_score_and_seizure_cards() -> None:
    ref = card("red/blue", 4)
    higher = card("red/blue", 6)
    rest = [card("green/yellow", 2), LEFT, RIGHT, TRADE, PLUS, MINUS]
    state = SeizureState.from_position([[higher, *rest], [card("green/yellow", 1)]], [ref])
    play(state, higher)
    assert state.legal_actions() == sorted(rest)


# -- two players ----------------------------------------------------------------------
def test_two_players_trade_partner_has_one_legal_action() -> None:
    ref = card("red/blue", 9)
    h0 = [TRADE, card("green/yellow", 1)]
    h1 = [card("green/yellow", 2), PLUS]
    state = SeizureState.from_position([h0, h1], [ref])
    play(state, TRADE)
    assert state.current_player() == 0, "still a decision, even with one legal action"
    assert state.decision_kind() == TRADE_PARTNER
    assert state.legal_actions() == [1]
    play(state, 1)
    assert state.hands == [h1, [card("green/yellow", 1)]]


def test_two_players_left_and_right_both_swap_hands() -> None:
    ref = card("red/blue", 9)
    for seizure in (LEFT, RIGHT):
        h0 = [seizure, card("green/yellow", 1)]
        h1 = [card("green/yellow", 2), PLUS]
        state = SeizureState.from_position([h0, h1], [ref])
        play(state, seizure)
        assert state.hands == [h1, [card("green/yellow", 1)]]


def test_single_legal_action_decisions_are_recorded() -> None:
    """DRAW (always one action) and 2-player GIVE_TO are seat decisions in the log."""
    record = play_local("seizure-v1", ["house:random", "house:random"], 4)
    kinds = {e.kind for e in record.log if not e.is_chance}
    assert {PLAY_CARD, DRAW, GIVE_CARD, GIVE_TO} <= kinds
    assert all(e.auto for e in record.log if e.kind in (DRAW, GIVE_TO))


# -- reshuffle, stalemate, turn cap -----------------------------------------------------
def test_no_reshuffle_when_the_draw_pile_runs_out() -> None:
    ref = card("red/blue", 9)
    pile = [card("red/blue", 1), card("red/blue", 2), ref]
    hands = [[card("green/yellow", 1)], [card("red/green", 9)]]
    last = card("green/yellow", 5)
    taken = {*pile, last, *(c for h in hands for c in h)}
    hands[1] += [c for c in range(140) if c not in taken]
    state = SeizureState.from_position(hands, pile, draw=[last])
    play(state, DRAW_ACTION)  # the last card: the pile is now empty, no reshuffle yet
    assert state.draw == [] and state.pile == pile
    assert state.current_player() == 1
    play(state, card("red/green", 9))
    assert state.draw == [] and len(state.pile) == 4


def test_reshuffle_with_a_seizure_card_on_top_keeps_both() -> None:
    ref = card("red/blue", 9)
    pile = [card("red/blue", 1), LEFT, card("red/blue", 2, 1), ref, RIGHT]
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    taken = {*pile, *(c for h in hands for c in h)}
    hands[1] += [c for c in range(140) if c not in taken]
    state = SeizureState.from_position(hands, pile, draw=[])
    play(state, DRAW_ACTION)
    assert state.current_player() == CHANCE
    outcome = state.sample_chance(random.Random(5))
    assert sorted(outcome) == sorted(pile[:3])
    state.apply_chance(outcome)
    assert state.pile == [ref, RIGHT]
    assert state.ref == ref


def test_stalemate_count_restarts_after_a_real_draw() -> None:
    ref = card("red/blue", 9)
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    extra = card("green/yellow", 3)
    state = SeizureState.from_position(
        hands, [ref], draw=[extra], reset=True, streak=2, strict=False
    )
    state.stale = 1  # one nothing-to-draw pass already counted
    play(state, DRAW_ACTION)  # a real draw
    assert state.stale == 0
    play(state, PASS_ACTION)
    assert state.last_round is None, "only one pass since the real draw"
    play(state, PASS_ACTION)
    assert state.last_round is not None and state.last_round[1] == "stalemate"


def test_turn_cap_counts_a_draw_turn() -> None:
    ref = card("red/blue", 9)
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    state = SeizureState.from_position(hands, [ref])
    state.turns = 1998
    play(state, DRAW_ACTION)
    assert state.last_round is None
    play(state, DRAW_ACTION)
    assert state.last_round is not None and state.last_round[1] == "turn_cap"


def test_turn_cap_the_trade_belongs_to_its_turn() -> None:
    ref = card("red/blue", 9)
    h0 = [TRADE, card("green/yellow", 1)]
    h1 = [card("green/yellow", 2)]
    h2 = [card("green/yellow", 3), PLUS]
    state = SeizureState.from_position([h0, h1, h2], [ref])
    state.turns = 1999
    play(state, TRADE)
    assert state.decision_kind() == TRADE_PARTNER
    play(state, 2)
    assert state.last_round is not None and state.last_round[1] == "turn_cap"
    assert state.last_round[2] == [1 + 3, 1, 1]


# -- dealing ----------------------------------------------------------------------------
def test_round_one_deals_nine_each_and_dealer_left_starts() -> None:
    state = GAME.new_game(4)
    assert state.decision_kind() == "DEALER"
    state.apply_chance((3,))
    assert state.deals == [0, 0, 0, 1]
    state.apply_chance(tuple(range(140)))
    assert [len(h) for h in state.hands] == [9, 9, 9, 9]
    assert state.current_player() == 0


def test_six_players_can_be_dealt_fifteen() -> None:
    ref = card("red/blue", 3)
    last = card("red/green", 5)
    hands = [[last], *([card("green/yellow", k)] for k in range(1, 6))]
    hands[5].append(PLUS)
    state = SeizureState.from_position(hands, [ref])
    play(state, last)
    assert state.current_player() == 5
    assert state.decision_kind() == DEAL_SIZE
    play(state, 15)
    state.apply_chance(state.sample_chance(random.Random(0)))
    assert [len(h) for h in state.hands] == [15] * 6
    assert len(state.draw) == 140 - 90 - len(state.pile)


# -- information -----------------------------------------------------------------------
def test_other_seats_cannot_tell_play_from_draw() -> None:
    ref = card("red/blue", 9)
    stuck = SeizureState.from_position(
        [[card("green/yellow", 1)], [card("green/yellow", 2)], [card("green/yellow", 3)]],
        [ref],
    )
    free = SeizureState.from_position(
        [[card("red/green", 9)], [card("green/yellow", 2)], [card("green/yellow", 3)]],
        [ref],
    )
    assert stuck.decision_kind() == DRAW and free.decision_kind() == PLAY_CARD
    for seat in (1, 2):
        a, b = stuck.observation(seat), free.observation(seat)
        assert a["decision"] is None and b["decision"] is None
        assert a["phase"] == b["phase"] == "TURN"


def test_other_seats_cannot_tell_give_card_from_give_to() -> None:
    ref = card("red/blue", 4)
    hands = [[card("red/blue", 8), PLUS, LEFT], [card("green/yellow", 1)], [card("blue/yellow", 1)]]
    state = SeizureState.from_position(hands, [ref])
    play(state, card("red/blue", 8))
    before = [state.observation(s) for s in (1, 2)]
    play(state, PLUS)
    assert [state.observation(s) for s in (1, 2)] == before


def test_draw_pile_order_is_hidden() -> None:
    ref = card("red/blue", 9)
    hands = [[card("green/yellow", 1)], [card("green/yellow", 2)]]
    a = SeizureState.from_position(hands, [ref])
    b = SeizureState.from_position(hands, [ref], draw=list(reversed(a.draw)))
    assert a.draw != b.draw
    for seat in (0, 1):
        assert a.observation(seat) == b.observation(seat)


def test_resample_keeps_every_hand_in_the_round() -> None:
    """Regression: resample_hidden could leave another seat holding only score cards, a
    position the seat knows is impossible (the round would have ended)."""
    ref = card("red/blue", 9)
    hands = [[card("green/yellow", 1), card("green/yellow", 2)], [card("green/yellow", 3)]]
    state = SeizureState.from_position(hands, [ref])
    obs = state.observation(0)
    for seed in range(300):
        twin = state.resample_hidden(0, random.Random(seed))
        assert twin.observation(0) == obs
        assert all(any(ACTIVE[c] for c in h) for h in twin.hands), f"seed {seed}"
        assert sorted(c for zone in twin.cards().values() for c in zone) == list(range(140))


def test_resample_keeps_every_hand_in_the_round_with_four_players() -> None:
    ref = card("red/blue", 9)
    hands = [
        [card("green/yellow", 1)],
        [card("green/yellow", 2)],
        [card("green/yellow", 3)],
        [card("green/yellow", 4), card("green/yellow", 5)],
    ]
    # Almost nothing left to draw: the unknown cards are mostly score cards.
    draw = [PLUS, PLUS + 1, MINUS, card("green/yellow", 6)]
    state = SeizureState.from_position(hands, [ref], draw=draw, strict=False)
    obs = state.observation(3)
    for seed in range(300):
        twin = state.resample_hidden(3, random.Random(seed))
        assert twin.observation(3) == obs
        assert all(any(ACTIVE[c] for c in h) for h in twin.hands), f"seed {seed}"


def test_random_playouts_agree_with_the_sdk_view_of_the_rules() -> None:
    """Random games of 2-6 players, checked decision by decision against the rules as
    computed from the deciding seat's observation alone (the SDK helpers): legal plays,
    give-away counts, turn order, reference card and value, reset, dealer, scoring."""
    for seed in range(10):
        n = 2 + seed % 5
        state = GAME.new_game(n, {"end": "gap"} if seed % 2 else None)
        rng = random.Random(seed)
        pending_gives = 0  # gives the last play must lead to
        last_turn: tuple[int, int] | None = None  # (round, seat) of the last turn
        rounds_scored = 0
        while state.current_player() != TERMINAL:
            seat = state.current_player()
            if seat == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            kind = state.decision_kind()
            legal = state.legal_actions()
            raw = state.observation(seat)
            obs = sdk.decode_observation(raw)
            if obs.last_round is not None and obs.last_round.round > rounds_scored:
                rounds_scored = obs.last_round.round
                assert list(obs.last_round.points) == [
                    sum(c.points for c in h) for h in obs.last_round.hands
                ]
                pending_gives = 0
            if kind == DEAL_SIZE:
                assert obs.scores[seat] == max(obs.scores)
                assert legal == list(range(7, 16))
                state.apply_action(legal[rng.randrange(len(legal))])
                continue
            assert all(any(ACTIVE[c] for c in h) for h in state.hands)
            numbers_on_pile = [c for c in obs.play_pile if c.is_number]
            assert obs.reference == numbers_on_pile[-1]
            assert obs.reset_active == (obs.draws_in_a_row >= n)
            assert obs.reference_value == (0 if obs.reset_active else obs.reference.table_value)
            if pending_gives:
                assert kind == GIVE_CARD and obs.gives_left == pending_gives
                pending_gives = 0
            if kind in (PLAY_CARD, DRAW):
                if last_turn is not None and last_turn[0] == obs.round:
                    assert seat == (last_turn[1] + 1) % n, "turn order never changes"
                else:
                    assert seat == (obs.dealer + 1) % n, "the dealer's left starts"
                last_turn = (obs.round, seat)
                numbers = sorted(c.id for c in obs.hand if obs.is_playable_number(c))
                seizures = sorted(c.id for c in obs.hand if c.is_seizure)
                expected = numbers or seizures
                assert (kind == PLAY_CARD) == bool(expected)
                if expected:
                    assert legal == expected
            elif kind == GIVE_CARD:
                assert legal == sorted(c.id for c in obs.hand)
            else:
                assert kind in (GIVE_TO, TRADE_PARTNER)
                assert legal == [s for s in range(n) if s != seat]
            action = legal[rng.randrange(len(legal))]
            if kind == PLAY_CARD:
                played = next(c for c in obs.hand if c.id == action)
                still_in = sum(1 for c in obs.hand if not c.is_score and c.id != action)
                pending_gives = obs.gives_for(played) if still_in else 0
            state.apply_action(action)
        totals = state.totals
        if seed % 2 == 0:
            assert state.round == 5
        else:
            low = min(totals)
            assert state.round == 50 or (max(totals) - low >= 25 and totals.count(low) == 1)


def test_resample_does_not_keep_a_chosen_gift_the_seat_cannot_see() -> None:
    """Regression: when the giver chose a card another seat knows it holds, resample_hidden
    for that seat kept the true choice every time (a determinizing bot learned it)."""
    ref = card("red/blue", 4)
    h0 = [card("red/blue", 6), LEFT, card("green/yellow", 1), card("green/yellow", 2)]
    h1 = [card("red/blue", 8), card("green/yellow", 3), card("green/yellow", 4)]
    state = SeizureState.from_position([h0, h1], [ref])
    play(state, card("red/blue", 6), LEFT, 1)  # seat 0 gives To the Left to seat 1
    play(state, card("red/blue", 8), LEFT)  # seat 1 chooses to give it back
    assert state.decision_kind() == GIVE_TO
    assert state.observation(0)["known"] == [{"seat": 1, "card": card_json(LEFT)}]
    gifts = set()
    for seed in range(60):
        twin = state.resample_hidden(0, random.Random(seed))
        assert twin.observation(0) == state.observation(0)
        assert twin.gift in twin.hands[1]
        gifts.add(twin.gift)
    assert len(gifts) > 1, "seat 0 cannot know which card seat 1 chose"
    assert state.resample_hidden(1, random.Random(0)).gift == LEFT, "the giver knows it"
