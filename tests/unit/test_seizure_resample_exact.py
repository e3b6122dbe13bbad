"""Seizure's resample_hidden deals exactly what a seat knows: on small hand-built
positions, the placements it produces over many seeds are exactly the placements of the
seat's information set, found by brute force (every start consistent with what the seat
saw, every chance outcome, the same actions replayed, kept when the seat's observation
comes out the same). Neither narrower (a seat would know more than it saw: a leak) nor
wider (it would forget what it saw). Plus, over random playouts, the knowledge
``resample_hidden`` keeps (reshuffled cards, nothing_playable) always holds of the true
state: what the engine tells a seat is never false."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from saloon.games import CHANCE, TERMINAL, get_game
from saloon.games.seizure.cards import LEFT_FIRST, MINUS_FIRST, PLUS_FIRST
from saloon.games.seizure.engine import (
    DRAW_ACTION,
    NO_PLAY,
    PAIR,
    SeizureState,
)
from tests.unit.seizure_positions import card

Placement = tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]
#: A script step: an action to apply, or None for "every outcome of the pending chance".
Step = int | None


def placement(state: SeizureState, seat: int) -> Placement:
    """Where the cards ``seat`` cannot see are: other hands (as sets) and the draw pile."""
    hands = tuple(tuple(sorted(h)) for t, h in enumerate(state.hands) if t != seat)
    return hands, tuple(state.draw)


def run_script(state: SeizureState, script: Sequence[Step]) -> list[SeizureState]:
    """Every state the script can lead to (one per chance outcome); [] if an action of the
    script is illegal on the way (the start was not consistent with it)."""
    states = [state]
    for step in script:
        nxt = []
        for s in states:
            if step is None:
                if s.current_player() != CHANCE:
                    return []
                pool = s._reshuffle_pool()
                for perm in itertools.permutations(pool):
                    t = s.clone()
                    t.apply_chance(perm)
                    nxt.append(t)
            else:
                if step not in s.legal_actions():
                    continue
                s.apply_action(step)
                nxt.append(s)
        states = nxt
    return states


def information_set(
    hands: list[list[int]],
    pile: list[int],
    draw: list[int],
    hidden_seats: Sequence[int],
    seat: int,
    to_play: int,
    script: Sequence[Step],
) -> tuple[SeizureState, set[Placement]]:
    """The true end state, and by brute force every placement ``seat`` cannot tell apart
    from it: the cards of ``hidden_seats``' hands and of the draw pile permuted every way."""
    true_start = SeizureState.from_position(hands, pile, draw, to_play=to_play, strict=False)
    truth = run_script(true_start, script)[0]
    seen = truth.observation(seat)
    hidden = [c for t in hidden_seats for c in hands[t]] + list(draw)
    sizes = [len(hands[t]) for t in hidden_seats]
    out: set[Placement] = set()
    for perm in itertools.permutations(hidden):
        alt = [list(h) for h in hands]
        start = 0
        for t, size in zip(hidden_seats, sizes, strict=True):
            alt[t] = list(perm[start : start + size])
            start += size
        alt_draw = list(perm[start:])
        begin = SeizureState.from_position(alt, pile, alt_draw, to_play=to_play, strict=False)
        for end in run_script(begin, script):
            if end.observation(seat) == seen:
                out.add(placement(end, seat))
    return truth, out


def resampled(state: SeizureState, seat: int, draws: int = 400) -> set[Placement]:
    return {placement(state.resample_hidden(seat, random.Random(s)), seat) for s in range(draws)}


def test_a_draw_tells_the_drawer_held_nothing_playable() -> None:
    """Seat 1 draws on a 5 red/blue: it held no red or blue card of 5 or more and no
    Seizure card. Seat 0 can tell which two cards it held before; only the drawn card is
    open (one of the two cards that were in the draw pile)."""
    ref = card("red/blue", 5)
    seven = card("red/blue", 7)  # playable on the reference
    three = card("green/yellow", 3)  # no shared colour
    two = card("blue/green", 2)  # shares blue, but 2 < 5
    mine = [card("green/yellow", 9), card("green/yellow", 8)]
    hands = [mine, [three, two]]
    truth, expected = information_set(
        hands, [ref], [seven, LEFT_FIRST], [1], seat=0, to_play=1, script=[DRAW_ACTION]
    )
    assert len(expected) == 2
    assert resampled(truth, 0) == expected


def test_the_draw_pile_holds_only_reshuffled_cards() -> None:
    """Seat 1 must draw from an empty pile: the play pile but its top (the reference) is
    reshuffled and seat 1 takes the top card. Seat 0 knows the draw pile now holds two of
    those three cards, in an order it does not know, and seat 1 the third."""
    ref = card("red/blue", 9)
    played = [card("red/green", 9), card("blue/yellow", 9), card("red/blue", 6)]
    h1 = [card("green/yellow", 2), PLUS_FIRST]
    mine = [card("green/yellow", 7), card("green/yellow", 8)]
    truth, expected = information_set(
        [mine, h1], [*played, ref], [], [1], seat=0, to_play=1, script=[DRAW_ACTION, None]
    )
    assert len(expected) == 6  # which card seat 1 took x the order of the other two
    assert resampled(truth, 0) == expected


def test_three_seats_a_draw_and_a_pass_on() -> None:
    """Three seats, seat 2 observing: seat 0 draws on a 4 red/blue, then seat 1 draws too
    (two limits, two unseen draws). Every placement the brute force finds, and no other,
    comes out."""
    ref = card("red/blue", 4)
    h0 = [card("green/yellow", 1), card("green/yellow", 5)]
    h1 = [card("green/yellow", 2), MINUS_FIRST]
    draw = [card("red/green", 6), card("blue/green", 3), card("red/yellow", 8)]
    mine = [card("green/yellow", 9), card("green/yellow", 10)]
    script: list[Step] = [DRAW_ACTION, DRAW_ACTION]
    truth, expected = information_set(
        [h0, h1, mine], [ref], draw, [0, 1], seat=2, to_play=0, script=script
    )
    assert len(expected) > 1
    assert resampled(truth, 2, 1500) == expected


def test_what_resample_keeps_always_holds_of_the_true_state() -> None:
    """Random 3- and 4-seat games: at every step the draw pile holds only cards of the
    round's last reshuffle, and every seat's hand meets every nothing_playable limit."""
    spec = get_game("seizure-v1")
    checked = 0
    for seed, n in [(1, 3), (2, 4)]:
        rng = random.Random(seed)
        state = spec.new_game(n)
        assert isinstance(state, SeizureState)
        while state.current_player() != TERMINAL:
            if state.reshuffled:
                assert set(state.draw) <= set(state.reshuffled)
            for t in range(n):
                for ref, value, at_most in state._limits[t]:
                    mask = NO_PLAY[PAIR[ref] * 10 + value]
                    assert sum((mask >> c) & 1 for c in state.hands[t]) <= at_most
                    checked += 1
            if state.current_player() == CHANCE:
                state.apply_chance(state.sample_chance(rng))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.randrange(len(legal))])
    assert checked > 100
