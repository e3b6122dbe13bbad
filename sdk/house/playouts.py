"""Engine-level playout policies for ``house:search``: each game's ``house:greedy`` rules
read straight off the engine state (no observation to build or decode, a playout step
costs microseconds), so the search spends its time in the engine. They read only the
engines' public, typed state (each game's ``State`` class declares and documents the
attributes a playout reads: docs/reference/search.md), as an author's own playout would.

:func:`greedy_strife_playout` and :func:`greedy_western_playout` make exactly the choices
of :class:`saloon.sdk.house.seas_of_strife.GreedyBot` and
:class:`saloon.sdk.house.western_showdown.GreedyBot` (tests/unit/test_search_playouts.py
compares them decision by decision); :func:`greedy_seizure_playout` those of
:class:`saloon.sdk.house.seizure.GreedyBot` but between trade partners of equal hand size
(greedy breaks that tie by the points it saw go into their hands, the playout by seat
number). None draws from the rng: the
rollouts compare actions on identical futures, and greedy's own choices are the model of
every seat (the draws and the samples vary).
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from typing import cast

from saloon.games import State
from saloon.games.seas_of_strife.engine import (
    CHOOSE_LEADER,
    COLOUR_OF,
    RANGES,
    SeasOfStrifeState,
    trick_winner_index,
)
from saloon.games.seizure.cards import (
    ACTIVE,
    K_LEFT,
    K_MINUS,
    K_NUMBER,
    K_PLUS,
    K_RIGHT,
    KIND,
    NUM_CARDS,
    NUMBER,
    PAIR,
)
from saloon.games.seizure.engine import (
    DEAL_SIZE,
    GIVE_CARD,
    GIVE_TO,
    PLAY_CARD,
    TRADE_PARTNER,
    SeizureState,
)
from saloon.games.western_showdown.cards import (
    CABARET,
    CONDITIONS,
    DECKS,
    HIDEOUT,
    MIN_CARDS,
    OWNER,
    SALOON,
    VALUE,
    stack_winner,
)
from saloon.games.western_showdown.engine import (
    ACTIVATE,
    CHEAT_PICK,
    DETERMINATION_EXTRA,
    DONE,
    MULLIGAN,
    SADDLE_DEST,
    SKIP,
    STICK_DEST,
    STICK_SOURCE,
    TURN,
    WALLOP_SECOND,
    YES,
    WesternShowdownState,
)
from saloon.sdk.house.western_showdown import (
    LEGEND_RESERVE,
    PASS_BELOW,
    THREAT_WEIGHT,
    push_card,
    saddle_stack,
    stick_card,
    swap_cards,
)

# -- Seas of Strife -------------------------------------------------------------------

#: RANK[card]: the card's position within its colour (0 lowest), as Card.rank.
RANK: list[int] = [c - RANGES[COLOUR_OF[c]][0] if COLOUR_OF[c] >= 0 else 0 for c in range(75)]
#: LEAD_KEY[card]: greedy's lead order (lowest within its colour, then lowest number).
LEAD_KEY: list[int] = [RANK[c] * 75 + c for c in range(75)]


def greedy_strife_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """Seas of Strife: house:greedy's choices. Lead the lowest card within its colour;
    follow with the highest card that does not take the trick as it stands (else the
    highest); hand the lead to the opponent with the fewest points plus tricks."""
    s = cast(SeasOfStrifeState, state)
    trick = s.trick_cards
    if not trick:
        if s.decision_kind() == CHOOSE_LEADER:
            return _strife_leader(s, legal)
        return min(map(LEAD_KEY.__getitem__, legal)) % 75
    return _strife_follow(s, trick, legal)


def _strife_leader(state: SeasOfStrifeState, legal: Sequence[int]) -> int:
    """The opponent with the fewest points plus tricks (then the lowest seat)."""
    seat = state.current_player()
    points = state.points
    taken = state.taken
    best = -1
    fewest = 1 << 30
    for s in legal:  # ascending: a tie keeps the lower seat
        if s != seat and points[s] + taken[s] < fewest:
            best, fewest = s, points[s] + taken[s]
    return best


def _strife_follow(state: SeasOfStrifeState, trick: list[int], legal: Sequence[int]) -> int:
    """The highest card of ``legal`` that does not take the trick as it stands, else the
    highest. ``legal`` is in number order (the engine keeps hands sorted)."""
    high = max(trick)
    mask = state.colour_mask
    if not mask & (mask - 1):  # one colour in the trick
        if len(trick) == 1 or COLOUR_OF[legal[0]] == COLOUR_OF[high]:
            # Against one card, any higher card takes the trick (its colour ties the
            # lead's at one card each or beats it at two); against two or more of one
            # colour, only a higher card of it, and a seat holding that colour must play it.
            below = bisect_left(legal, high)
            return legal[below - 1] if below else legal[-1]
        return legal[-1]  # void in the one colour led: no card can take the trick
    # Several colours: ask the engine's trick rule, from the highest card down.
    last = len(trick)
    for card in reversed(legal):
        if trick_winner_index((*trick, card)) != last:
            return card
    return legal[-1]


def greedy_strife_rollout(state: State, rng: random.Random, depth: int | None = None) -> None:
    """Seas of Strife: ``play_out(state, greedy_strife_playout, round_horizon, rng, depth)``
    as one loop (the same choices, the same end; tests/unit/test_search_playouts.py): no
    policy call, horizon or chance dispatch per step. The hand's end is its only chance
    event (DEAL, where the round horizon stops), so the playout stops where no action is
    legal (a chance node or the end of the game)."""
    left = depth if depth is not None else -1
    s = cast(SeasOfStrifeState, state)
    legal_actions = s.legal_actions
    apply_action = s.apply_action
    lead_key = LEAD_KEY.__getitem__
    colour_of = COLOUR_OF
    while left:
        left -= 1
        legal = legal_actions()
        if not legal:  # TERMINAL, or the DEAL that starts the next hand
            return
        trick = s.trick_cards
        if not trick:
            if s.decision_kind() == CHOOSE_LEADER:
                apply_action(_strife_leader(s, legal))
            else:  # a forced opening lead is the one card of legal
                apply_action(min(map(lead_key, legal)) % 75)
            continue
        # _strife_follow inlined for its common case (one colour in the trick); a single
        # legal card comes out of either branch.
        mask = s.colour_mask
        if mask & (mask - 1):
            apply_action(_strife_follow(s, trick, legal))
            continue
        high = max(trick)
        if len(trick) == 1 or colour_of[legal[0]] == colour_of[high]:
            below = bisect_left(legal, high)
            apply_action(legal[below - 1] if below else legal[-1])
        else:
            apply_action(legal[-1])


# -- Seizure --------------------------------------------------------------------------


def _give_priority(card: int) -> tuple[int, int]:
    """Seizure: how much the greedy bot wants to be rid of a card (higher first)."""
    kind = KIND[card]
    if kind == K_PLUS:
        return (4, 0)
    if kind == K_MINUS:
        return (0, 0)
    if kind != K_NUMBER:
        return (3, 0)
    number = NUMBER[card]
    return (2, -11 if number == 10 else -number)


#: GIVE_KEY[card]: greedy's order for giving a card away (the highest goes first).
GIVE_KEY: list[tuple[tuple[int, int], int]] = [(_give_priority(c), -c) for c in range(NUM_CARDS)]


def greedy_seizure_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """Seizure: house:greedy's choices (saloon.sdk.house.seizure.GreedyBot)."""
    s = cast(SeizureState, state)
    kind = s.decision_kind()
    seat = s.current_player()
    hands = s.hands
    n = len(hands)
    if kind == PLAY_CARD:
        numbers = [c for c in legal if KIND[c] == K_NUMBER]
        if numbers:
            if sum(map(ACTIVE.__getitem__, hands[seat])) == 1:
                return numbers[0]
            ref = s.ref
            reset = s.reset
            ref_pair = PAIR[ref]
            ref_number = NUMBER[ref]
            best = -1
            best_score = -1
            for card in numbers:
                # greedy's (cards it makes us give, not a 10, number), as one integer.
                number = NUMBER[card]
                score = number if number == 10 else 100 + number
                if PAIR[card] == ref_pair:
                    score += 2000 if not reset and number == ref_number else 1000
                if score > best_score:
                    best, best_score = card, score
            return best
        sizes = [len(h) for h in hands]

        def after(card: int) -> tuple[int, int]:
            kind = KIND[card]
            if kind == K_LEFT:
                return (sizes[(seat - 1) % n], card)
            if kind == K_RIGHT:
                return (sizes[(seat + 1) % n], card)
            return (min(sizes[s] for s in range(n) if s != seat), card)

        return min(legal, key=after)
    if kind == GIVE_CARD:
        return max(legal, key=GIVE_KEY.__getitem__)
    if kind == GIVE_TO:
        totals = s.totals
        if KIND[s.gift] == K_PLUS:
            return min(legal, key=lambda s: (totals[s], s))
        return max(legal, key=lambda s: (len(hands[s]), -s))
    if kind == TRADE_PARTNER:
        return min(legal, key=lambda s: (len(hands[s]), s))
    if kind == DEAL_SIZE:
        totals = s.totals
        want = 15 if totals[seat] - min(totals) >= 10 else 7
        return min(legal, key=lambda a: (abs(a - want), a))
    return legal[int(rng.random() * len(legal))]


# -- Western Legends: Showdown --------------------------------------------------------

#: A board: one (location id, stack bottom first) per location, in table order.
Board = tuple[tuple[int, tuple[int, ...]], ...]
_NEG = float("-inf")


def _met(location: int, stack: tuple[int, ...]) -> bool:
    return len(stack) >= MIN_CARDS[location] and CONDITIONS[location](stack)


#: One stack's part of greedy's board score, by (location, stack, top guarded by our own
#: BULLETPROOF, our seat, the opponent's unseen cards one per value): (cards won now, our
#: end-scoring share of it, the stack the opponent could take next). A board's score is
#: the sums and the largest threat, so a stack is judged once however many boards hold it.
_STACK_TERMS: dict[
    tuple[int, tuple[int, ...], bool, int, tuple[int, ...]], tuple[int, int, int]
] = {}
_STACK_TERMS_MAX = 200_000


def _stack_terms(
    loc: int, stack: tuple[int, ...], guarded: bool, me: int, opponent: tuple[int, ...]
) -> tuple[int, int, int]:
    size = len(stack)
    if stack and size >= MIN_CARDS[loc] and CONDITIONS[loc](stack):
        return (size, 0, 0)
    share = 0
    if stack:
        share = size if stack_winner(stack) == me else -size
    if guarded:
        return (0, share, 0)
    low_top = bool(stack) and VALUE[stack[-1]] < 7
    condition = CONDITIONS[loc]
    reach = size + 1 >= MIN_CARDS[loc]
    for c in opponent:
        if (low_top and VALUE[c] == 7) or (reach and condition((*stack, c))):
            return (0, share, size + 1)
    return (0, share, 0)


class _WesternPlanner:
    """saloon.sdk.house.western_showdown's planner over engine card ids (same scores, same
    order of evaluation, so the same choices and the same ties)."""

    __slots__ = (
        "board",
        "end_weight",
        "hand",
        "late",
        "me",
        "opponent_cards",
        "shield",
    )

    def __init__(self, state: WesternShowdownState) -> None:
        me = state.turn
        self.me = me
        self.board: Board = tuple(
            (loc, tuple(stack)) for loc, stack in zip(state.locations, state.stacks, strict=True)
        )
        self.shield = state.bulletproof
        hands = state.hands
        self.hand = hands[me]
        opponent = 1 - me
        played = set(state.played[opponent])
        # greedy's opponent_cards: per value (ascending), the last unseen card of it.
        by_value = {VALUE[c]: c for c in DECKS[opponent] if c not in played}
        self.opponent_cards = tuple(by_value[v] for v in sorted(by_value))
        draw = state.draw
        remaining = len(hands[0]) + len(hands[1]) + len(draw[0]) + len(draw[1])
        self.late = remaining <= 6
        self.end_weight = 0.15 + 0.6 * (1 - remaining / 18)

    def score(self, board: Board, extra: int = 0) -> float:
        """Cards won by resolving ``board`` now, minus threat, plus end-scoring share
        (``extra``: a bulletproof mask added to the table's)."""
        shield = self.shield | extra
        me = self.me
        opponent = self.opponent_cards
        gained = worst = share = 0
        for loc, stack in board:
            guarded = False
            if stack:
                top = stack[-1]
                guarded = bool((shield >> top) & 1) and OWNER[top] == me
            key = (loc, stack, guarded, me, opponent)
            terms = _STACK_TERMS.get(key)
            if terms is None:
                terms = _stack_terms(loc, stack, guarded, me, opponent)
                if len(_STACK_TERMS) >= _STACK_TERMS_MAX:
                    _STACK_TERMS.clear()
                _STACK_TERMS[key] = terms
            gained += terms[0]
            share += terms[1]
            if terms[2] > worst:
                worst = terms[2]
        return gained - THREAT_WEIGHT * worst + self.end_weight * share

    def choose_placement(self, legal: Sequence[int], allow_extra: bool) -> int:
        best = -1
        best_value = _NEG
        fallback = -1
        for action in legal:
            if action >= 126:  # PASS or SKIP
                fallback = action
                continue
            value = self.place_value(self.board, action // 7, action % 7, allow_extra)
            if value > best_value:
                best, best_value = action, value
        if fallback == SKIP:
            if best < 0 or best_value < self.score(self.board):
                return SKIP
            return best
        if fallback >= 0 and (best < 0 or best_value < PASS_BELOW):
            return fallback
        return best

    def place_value(self, board: Board, played: int, location: int, allow_extra: bool) -> float:
        stack = next(s for loc, s in board if loc == location)
        after = push_card(board, location, played)
        value = VALUE[played]
        cost = LEGEND_RESERVE if value == 7 and not self.late else 0.0
        if stack and value <= VALUE[stack[-1]]:  # no activation
            return self.score(after) - cost
        if value == 1:
            base = self.score(after)
            ones = [c for c in self.hand if VALUE[c] == 1 and c != played]
            if ones:
                base = max(base, self.score(push_card(after, location, ones[0])))
            return base - cost
        if value == 2:
            base = self.score(after)
            if not allow_extra:
                return base
            gained = sum(len(s) for loc, s in after if s and _met(loc, s))
            rest: Board = tuple((loc, () if s and _met(loc, s) else s) for loc, s in after)
            me = self.me
            for c in self.hand:
                if c == played:
                    continue
                for loc, s in rest:
                    if s:
                        top = s[-1]
                        if OWNER[top] != me and (self.shield >> top) & 1:
                            continue
                    base = max(base, gained + self.place_value(rest, c, loc, False))
            return base
        return max(
            self.best_after(after, played, location, False),
            self.best_after(after, played, location, True),
        )

    def best_after(self, board: Board, played: int, source: int, yes: bool) -> float:
        value = VALUE[played]
        cost = LEGEND_RESERVE if value == 7 and not self.late else 0.0
        if not yes:
            return self.score(board) - cost
        if value == 3:
            return self.score(board, 1 << played)
        if value == 4:
            return max(self.score(saddle_stack(board, source, d)) for d, _ in board if d != source)
        if value == 5:
            best = _NEG
            shield = self.shield
            for loc, stack in board:
                for c in stack:
                    if c == played or (shield >> c) & 1:
                        continue
                    for d, _ in board:
                        if d != loc:
                            best = max(best, self.score(stick_card(board, c, d)))
            return best
        if value == 6:
            table = [c for _, stack in board for c in stack]
            best = _NEG
            for i, a in enumerate(table):
                for b in table[i + 1 :]:
                    best = max(best, self.score(swap_cards(board, a, b)))
            return best
        if value == 7:
            taken = next(len(s) for loc, s in board if loc == source)
            rest = tuple((loc, () if loc == source else s) for loc, s in board)
            return taken + self.score(rest) - cost
        return self.score(board)


#: greedy_western_playout's choices by everything they depend on (see _western_key): a
#: search's playouts meet the same positions again (the same first replies in every
#: sample, the same endings), and a choice costs some twenty board scores.
_WESTERN_CHOICES: dict[tuple[object, ...], int] = {}
_WESTERN_CHOICES_MAX = 50_000  # about 0.7 kB each


def clear_caches() -> None:
    """Forget every remembered choice and stack score (a benchmark's run starts cold: the
    same searches again would find every choice remembered)."""
    _WESTERN_CHOICES.clear()
    _STACK_TERMS.clear()


def _western_key(s: WesternShowdownState, kind: str) -> tuple[object, ...]:
    """What house:greedy's choice at ``s`` depends on: the decision (``kind``, and the
    picked card that tells CHEAT's two picks apart), the seat, the table (locations,
    stacks, BULLETPROOF mask), its own hand, what the opponent has played (its unseen
    cards), the cards left (how late it is), the pending card, slot and pick, and whether
    it may pass REPUTATION (the legal actions follow from these)."""
    turn = s.turn
    hands = s.hands
    draw = s.draw
    return (
        kind,
        turn,
        tuple(s.locations),
        tuple(map(tuple, s.stacks)),
        s.bulletproof,
        tuple(hands[turn]),
        tuple(s.played[1 - turn]),
        len(hands[1 - turn]) + len(draw[0]) + len(draw[1]),
        s.pending_card,
        s.pending_slot,
        s.picked,
        s.reputation == turn and not s.blocked[turn],
    )


def greedy_western_playout(state: State, legal: Sequence[int], rng: random.Random) -> int:
    """Western Legends: Showdown: house:greedy's choices (its one-turn lookahead with a
    guess at the opponent's reply) over engine card ids, remembered by position."""
    s = cast(WesternShowdownState, state)
    kind = s.decision_kind()
    key = _western_key(s, kind)
    choice = _WESTERN_CHOICES.get(key)
    if choice is None:
        choice = _greedy_western_choice(s, kind, legal)
        if len(_WESTERN_CHOICES) >= _WESTERN_CHOICES_MAX:
            _WESTERN_CHOICES.clear()
        _WESTERN_CHOICES[key] = choice
    return choice


def _greedy_western_choice(state: WesternShowdownState, kind: str, legal: Sequence[int]) -> int:
    if kind == MULLIGAN:
        if not {SALOON, CABARET, HIDEOUT} & set(state.locations):
            for c in legal:
                if c != DONE and VALUE[c] == 1:
                    return c
        return DONE
    plan = _WesternPlanner(state)
    if kind in (TURN, DETERMINATION_EXTRA):
        return plan.choose_placement(legal, kind == TURN)
    card = state.pending_card
    if card < 0:
        return legal[0]
    location = state.locations[state.pending_slot]
    board = plan.board
    picked = state.picked
    if kind == WALLOP_SECOND:
        one = next(c for c in plan.hand if VALUE[c] == 1)
        return max(
            legal,
            key=lambda yes: plan.score(push_card(board, location, one) if yes == YES else board),
        )
    if kind == ACTIVATE:
        return max(legal, key=lambda yes: plan.best_after(board, card, location, yes == YES))
    if kind == SADDLE_DEST:
        return max(legal, key=lambda dest: plan.score(saddle_stack(board, location, dest)))
    if kind == STICK_SOURCE:
        return max(
            legal,
            key=lambda pick: max(
                plan.score(stick_card(board, pick, d))
                for d, stack in board
                if pick not in stack  # greedy: every location but the card's own
            ),
        )
    if kind == STICK_DEST and picked >= 0:
        return max(legal, key=lambda dest: plan.score(stick_card(board, picked, dest)))
    if kind == CHEAT_PICK:
        if picked >= 0:
            return max(legal, key=lambda c: plan.score(swap_cards(board, picked, c)))
        table = [c for _, stack in board for c in stack]
        return max(
            legal,
            key=lambda a: max(plan.score(swap_cards(board, a, b)) for b in table if b != a),
        )
    return legal[0]
