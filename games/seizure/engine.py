"""Seizure (``seizure-v1``): 2-6 players, play cards out, give the rest away, dodge points.

Rules as docs/rules/seizure.md states them (the rule text plus every ruling). Card ids are
laid out in :mod:`.cards` (``0..119`` number cards ``pair * 20 + (number - 1) * 2 + copy``,
``120..131`` Seizure cards, ``132..139`` score cards).

Decisions and their int actions:

* ``PLAY_CARD``: the card id of a playable card (numbers first; Seizure cards only when no
  number card fits).
* ``DRAW``: forced when nothing is playable; one legal action, :data:`DRAW_ACTION` (0)
  or :data:`PASS_ACTION` (1) when nothing can be drawn even after a reshuffle.
* ``GIVE_CARD``: a card id from the giver's hand; ``GIVE_TO``: the recipient seat.
* ``TRADE_PARTNER``: the seat to swap hands with.
* ``DEAL_SIZE``: the hand size 7..15 (the dealer, from round 2).

Chance: ``DEALER`` (round 1: ``(seat,)``), ``DEAL`` (a permutation of the 140 ids: seat
``i`` gets the ``i``-th block of ``hand_size`` cards, the rest is the draw pile, its first
card on top) and ``RESHUFFLE`` (a permutation of the reshuffled cards, first on top).

Information: every seat tracks, per card, whether it knows where that card is
(``_know[card]`` is a bit mask of seats). Knowledge is always true: a seat forgets what
could have changed without it seeing (a card of a hand that gave a card away to someone
else), so ``resample_hidden`` keeps known cards in place and redeals only the rest.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from saloon.games.base import (
    CHANCE,
    TERMINAL,
    GameSpec,
    Json,
    Options,
    OptionSpec,
    Outcome,
    State,
    competition_ranks,
)
from saloon.games.errors import IllegalActionError, NotChanceError
from saloon.games.seizure.cards import (
    ACTIVE,
    IS_SEIZURE,
    K_LEFT,
    K_NUMBER,
    K_RIGHT,
    KIND,
    NUM_CARDS,
    NUMBER,
    PAIR,
    PLAYABLE,
    POINTS,
    VALUE_ON_TABLE,
    card_json,
    card_label,
)

PLAY_CARD = "PLAY_CARD"
DRAW = "DRAW"
GIVE_CARD = "GIVE_CARD"
GIVE_TO = "GIVE_TO"
TRADE_PARTNER = "TRADE_PARTNER"
DEAL_SIZE = "DEAL_SIZE"
DEALER = "DEALER"
DEAL = "DEAL"
RESHUFFLE = "RESHUFFLE"

DRAW_ACTION = 0
PASS_ACTION = 1

FIRST_HAND_SIZE = 9
MIN_HAND_SIZE, MAX_HAND_SIZE = 7, 15
ROUNDS = 5
GAP = 25
GAP_ROUND_CAP = 50
TURN_CAP = 2000
#: How many of the most recent events (of the current round) an observation lists.
EVENT_WINDOW = 50

(
    _P_DEALER,
    _P_DEAL,
    _P_TURN,
    _P_GIVE_CARD,
    _P_GIVE_TO,
    _P_TRADE,
    _P_DEAL_SIZE,
    _P_RESHUFFLE,
    _P_OVER,
) = range(9)
_PHASE_KIND = (DEALER, DEAL, "", GIVE_CARD, GIVE_TO, TRADE_PARTNER, DEAL_SIZE, RESHUFFLE, "")
_PUBLIC_PHASE = ("CHANCE", "CHANCE", "TURN", "GIVE", "GIVE", "TRADE", "DEAL_SIZE", "CHANCE", "OVER")

# Event tuples: (type, a, b, card, seats that see the card as a bit mask).
(
    _E_DEAL,
    _E_FLIP,
    _E_PLAY,
    _E_DRAW,
    _E_PASS,
    _E_RESHUFFLE,
    _E_RESET,
    _E_GIVE,
    _E_LEFT,
    _E_RIGHT,
    _E_TRADE,
) = range(11)

_SIZE_ACTIONS = list(range(MIN_HAND_SIZE, MAX_HAND_SIZE + 1))
#: Phases inside a round: every hand holds at least one number or Seizure card.
_IN_ROUND = frozenset((_P_TURN, _P_GIVE_CARD, _P_GIVE_TO, _P_TRADE, _P_RESHUFFLE))


class SeizureState(State):
    """A game of Seizure in progress."""

    __slots__ = (
        "_active",
        "_all",
        "_end_gap",
        "_gives_left",
        "_know",
        "_limits",
        "_phase",
        "_player",
        "_turn_kind",
        "dealer",
        "deals",
        "draw",
        "end_reason",
        "events",
        "gift",
        "hand_size",
        "hands",
        "last_round",
        "num_players",
        "pile",
        "ref",
        "reset",
        "reshuffled",
        "round",
        "stale",
        "streak",
        "to_play",
        "totals",
        "turns",
    )

    spec: GameSpec

    # The state a playout reads (public, typed and documented: docs/reference/search.md).
    # Read it; change the state only through apply_action / apply_chance. Card ids 0..139
    # (saloon.games.seizure.cards: KIND, NUMBER, PAIR, POINTS ... by id).
    #: The seat count.
    num_players: int
    #: Each seat's hand, card ids ascending.
    hands: list[list[int]]
    #: The draw pile; its top is the LAST element.
    draw: list[int]
    #: The play pile, bottom first.
    pile: list[int]
    #: The reference card (most recent number card on the play pile), -1 before a deal.
    ref: int
    #: True while a reset is on (set when every seat in turn drew or passed with no card
    #: played; docs/rules/seizure.md says what then fits).
    reset: bool
    #: Consecutive draws/passes with no card played between.
    streak: int
    #: Consecutive nothing-to-draw passes in turns that began with the reset active.
    stale: int
    #: PLAY_CARD / DRAW turns completed (or under way) this round.
    turns: int
    #: The seat whose turn it is in the round (PLAY_CARD, DRAW).
    to_play: int
    #: This round's dealer (-1 before the first).
    dealer: int
    #: Cards dealt to each seat this round.
    hand_size: int
    #: The round being played, from 1.
    round: int
    #: Rounds each seat has dealt.
    deals: list[int]
    #: Each seat's points so far (fewest best): what its hands held at each round's end.
    totals: list[int]
    #: The public events of the match so far, as the engine keeps them (internal codes).
    events: list[tuple[int, int, int, int, int]]
    #: (round, reason, points per seat, hands at the end) of the last finished round.
    last_round: tuple[int, str, list[int], list[list[int]]] | None
    #: Why the game ended ("" while it goes on).
    end_reason: str
    #: The cards of this round's last reshuffle (public): the draw pile holds only
    #: these since (a reshuffle happens only when the draw pile is empty).
    reshuffled: list[int]
    #: The card being given away (GIVE_TO: the giver chose it), else -1.
    gift: int

    def __init__(self, num_players: int, end_gap: bool = False) -> None:
        n = num_players
        self.num_players = n
        self._end_gap = end_gap
        self._all = (1 << n) - 1
        self.hands = [[] for _ in range(n)]
        self._active = [0] * n
        self.draw = list(range(NUM_CARDS))
        self.pile = []
        self.ref = -1
        self.reset = False
        self.streak = 0
        self.stale = 0
        self.turns = 0
        self.to_play = 0
        self.dealer = -1
        self.hand_size = FIRST_HAND_SIZE
        self.round = 0
        self.deals = [0] * n
        self.totals = [0] * n
        self.events = []
        self.last_round = None
        self.end_reason = ""
        self._know = [0] * NUM_CARDS
        self.reshuffled = []
        #: Per seat, what its draws told everyone: (reference card, reference value, b) =
        #: "it drew (or passed) holding no card playable on that reference at that value
        #: (Seizure cards included); counting what entered and left its hand since, it
        #: holds at most b such cards". Tuples, shared between clones.
        self._limits: list[tuple[tuple[int, int, int], ...]] = [() for _ in range(n)]
        self._phase = _P_DEALER
        self._player = CHANCE
        self._gives_left = 0
        self.gift = -1
        self._legal: list[int] | None = None
        self._turn_kind = ""

    # -- hand-built positions (tests, puzzles) ---------------------------------------
    @classmethod
    def from_position(
        cls,
        hands: Sequence[Sequence[int]],
        pile: Sequence[int],
        draw: Sequence[int] | None = None,
        *,
        to_play: int = 0,
        reset: bool = False,
        streak: int = 0,
        end_gap: bool = False,
        totals: Sequence[int] | None = None,
        strict: bool = True,
    ) -> SeizureState:
        """A state in mid-round, at ``to_play``'s turn: given hands, play pile (bottom
        first, must hold a number card), draw pile (top LAST; default: every other card).
        Nothing is known about other hands. ``strict=False`` allows cards to be missing
        (positions a full deck cannot reach, for tests)."""
        state = cls(len(hands), end_gap)
        state.hands = [list(h) for h in hands]
        state.pile = list(pile)
        state.ref = next(c for c in reversed(state.pile) if KIND[c] == K_NUMBER)
        used = [c for h in hands for c in h] + list(pile)
        if draw is None:
            taken = set(used)
            draw = [c for c in range(NUM_CARDS) if c not in taken]
        state.draw = list(draw)
        everything = sorted(used + state.draw)
        if everything != sorted(set(everything)) or (
            strict and everything != list(range(NUM_CARDS))
        ):
            raise ValueError("hands, play pile and draw pile must hold the 140 cards once each")
        state._active = [sum(ACTIVE[c] for c in h) for h in state.hands]
        state.reset = reset
        state.streak = streak
        state.round = 1
        state.dealer = (to_play - 1) % len(hands)
        state.deals[state.dealer] = 1
        state.to_play = to_play
        if totals is not None:
            state.totals = list(totals)
        state._phase = _P_TURN
        state._player = to_play
        return state

    # -- whose turn -------------------------------------------------------------------
    def current_player(self) -> int:
        return self._player

    def decision_kind(self) -> str:
        phase = self._phase
        if phase == _P_TURN:
            if self._legal is None:
                self._legal = self._compute_legal()
            return self._turn_kind
        return _PHASE_KIND[phase]

    # -- seat decisions ---------------------------------------------------------------
    def _reference_value(self) -> int:
        return 0 if self.reset else VALUE_ON_TABLE[self.ref]

    def _reshufflable(self) -> int:
        pile = self.pile
        return len(pile) - (1 if pile[-1] == self.ref else 2)

    def _compute_legal(self) -> list[int]:
        phase = self._phase
        if phase == _P_TURN:
            hand = self.hands[self.to_play]
            ok = PLAYABLE[PAIR[self.ref] * 10 + (0 if self.reset else VALUE_ON_TABLE[self.ref])]
            legal = [c for c in hand if ok[c]]
            if not legal:
                legal = [c for c in hand if IS_SEIZURE[c]]
            if legal:
                legal.sort()
                self._turn_kind = PLAY_CARD
                return legal
            self._turn_kind = DRAW
            if self.draw or self._reshufflable() > 0:
                return [DRAW_ACTION]
            return [PASS_ACTION]
        if phase == _P_GIVE_CARD:
            return sorted(self.hands[self._player])
        if phase in (_P_GIVE_TO, _P_TRADE):
            me = self._player
            return [s for s in range(self.num_players) if s != me]
        if phase == _P_DEAL_SIZE:
            return list(_SIZE_ACTIONS)
        return []

    def _apply(self, action: int) -> None:
        phase = self._phase
        if phase == _P_TURN:
            if self._turn_kind == PLAY_CARD:
                self._play(action)
            else:
                self._draw()
        elif phase == _P_GIVE_CARD:
            self.gift = action
            self._phase = _P_GIVE_TO
        elif phase == _P_GIVE_TO:
            self._give(action)
        elif phase == _P_TRADE:
            self._trade(action)
        else:  # _P_DEAL_SIZE
            self.hand_size = action
            self.deals[self.dealer] += 1
            self._phase = _P_DEAL
            self._player = CHANCE

    def _play(self, card: int) -> None:
        seat = self.to_play
        if self._limits[seat]:
            self._limits[seat] = _after_leaving(self._limits[seat], card, len(self.hands[seat]) - 1)
        self.hands[seat].remove(card)
        self._active[seat] -= 1
        self.pile.append(card)
        self._know[card] = 0
        self.events.append((_E_PLAY, seat, 0, card, self._all))
        was_reset = self.reset
        self.reset = False
        self.streak = 0
        self.stale = 0
        self.turns += 1
        kind = KIND[card]
        if kind == K_NUMBER:
            ref = self.ref
            self.ref = card
            if self._active[seat] == 0:
                self._end_round("out")
                return
            if PAIR[card] == PAIR[ref]:
                self._gives_left = 2 if not was_reset and NUMBER[card] == NUMBER[ref] else 1
                self._phase = _P_GIVE_CARD
                self._player = seat
                return
            self._end_turn()
            return
        if self._active[seat] == 0:
            self._end_round("out")
            return
        if kind in (K_LEFT, K_RIGHT):
            n = self.num_players
            shift = 1 if kind == K_LEFT else n - 1
            self.events.append((_E_LEFT if kind == K_LEFT else _E_RIGHT, seat, 0, -1, self._all))
            if self._move_hands([(s + shift) % n for s in range(n)]):
                self._end_turn()
            return
        self._phase = _P_TRADE
        self._player = seat

    def _move_hands(self, dest: list[int]) -> bool:
        """Every seat ``s`` whose ``dest[s] != s`` passes its whole hand to ``dest[s]``;
        giver and receiver both see the cards moved. False if that ended the round."""
        hands = self.hands
        know = self._know
        new_hands: list[list[int]] = [[] for _ in hands]
        new_active = [0] * len(hands)
        for s, hand in enumerate(hands):
            d = dest[s]
            new_hands[d] = hand
            new_active[d] = self._active[s]
            if d != s:
                seen = (1 << s) | (1 << d)
                for c in hand:
                    know[c] |= seen
        self.hands = new_hands
        self._active = new_active
        limits: list[tuple[tuple[int, int, int], ...]] = [() for _ in hands]
        for s, d in enumerate(dest):
            limits[d] = self._limits[s]
        self._limits = limits
        if 0 in new_active:  # cannot happen (hands only move), kept as the rule says
            self._end_round("out")
            return False
        return True

    def _trade(self, partner: int) -> None:
        seat = self._player
        dest = list(range(self.num_players))
        dest[seat], dest[partner] = partner, seat
        self.events.append((_E_TRADE, seat, partner, -1, self._all))
        if self._move_hands(dest):
            self._end_turn()

    def _give(self, recipient: int) -> None:
        giver = self._player
        card = self.gift
        self.gift = -1
        hands = self.hands
        hands[giver].remove(card)
        hands[recipient].append(card)
        # Public view: the giver lost a card nobody else saw (its limits stand), the
        # recipient gained one that may be of any kind.
        if self._limits[giver]:
            self._limits[giver] = _pruned(self._limits[giver], len(hands[giver]))
        if self._limits[recipient]:
            self._limits[recipient] = _after_entering(
                self._limits[recipient], len(hands[recipient])
            )
        active = ACTIVE[card]
        self._active[giver] -= active
        self._active[recipient] += active
        seen = (1 << giver) | (1 << recipient)
        know = self._know
        know[card] = seen
        # Seats outside the exchange can no longer tell which of the giver's cards left.
        for c in hands[giver]:
            know[c] &= seen
        self.events.append((_E_GIVE, giver, recipient, card, seen))
        self._gives_left -= 1
        if self._active[giver] == 0:
            self._end_round("out")
            return
        if self._gives_left:
            self._phase = _P_GIVE_CARD
            return
        self._end_turn()

    def _draw(self) -> None:
        seat = self.to_play
        # Drawing (or passing) tells everyone the hand held nothing playable right now.
        limit = (self.ref, self._reference_value(), 0)
        self._limits[seat] = (*self._limits[seat], limit)
        self.turns += 1
        at_reset = self.reset
        if self.draw:
            self._take_top(seat)
        elif self._reshufflable() > 0:
            self._phase = _P_RESHUFFLE
            self._player = CHANCE
            return
        else:
            self.events.append((_E_PASS, seat, 0, -1, self._all))
            if at_reset:
                self.stale += 1
        self._after_draw()

    def _take_top(self, seat: int) -> None:
        card = self.draw.pop()
        self.hands[seat].append(card)
        if self._limits[seat]:
            public = card if self._know[card] == self._all else -1
            self._limits[seat] = _after_entering(self._limits[seat], len(self.hands[seat]), public)
        self._active[seat] += ACTIVE[card]
        # A card flipped to the bottom at the opening is public: its taker is known.
        vis = self._know[card] | (1 << seat)
        self.events.append((_E_DRAW, seat, 0, card, vis))
        self.stale = 0

    def _after_draw(self) -> None:
        self.streak += 1
        if not self.reset and self.streak >= self.num_players:
            self.reset = True
            self.events.append((_E_RESET, 0, 0, -1, self._all))
        if self.stale >= self.num_players:
            self._end_round("stalemate")
            return
        self._end_turn()

    def _end_turn(self) -> None:
        if self.turns >= TURN_CAP:
            self._end_round("turn_cap")
            return
        self.to_play = nxt = (self.to_play + 1) % self.num_players
        self._phase = _P_TURN
        self._player = nxt

    def _end_round(self, reason: str) -> None:
        points = [sum(POINTS[c] for c in hand) for hand in self.hands]
        totals = self.totals
        for s, p in enumerate(points):
            totals[s] += p
        self.last_round = (self.round, reason, points, [sorted(h) for h in self.hands])
        self._emit(
            "round_scored", round=self.round, reason=reason, points=points, totals=list(totals)
        )
        know, everyone = self._know, self._all
        for hand in self.hands:  # revealed for scoring
            for c in hand:
                know[c] = everyone
        self._gives_left = 0
        self.gift = -1
        low, high = min(totals), max(totals)
        if self._end_gap:
            over = (high - low >= GAP and totals.count(low) == 1) or self.round >= GAP_ROUND_CAP
        else:
            over = self.round >= ROUNDS
        if over:
            self._phase = _P_OVER
            self._player = TERMINAL
            self.end_reason = reason
            return
        self.dealer = self._next_dealer()
        self._phase = _P_DEAL_SIZE
        self._player = self.dealer

    def _next_dealer(self) -> int:
        """Most points; then fewest deals; then first clockwise from the previous dealer
        (previous dealer last)."""
        n = self.num_players
        high = max(self.totals)
        tied = [s for s in range(n) if self.totals[s] == high]
        fewest = min(self.deals[s] for s in tied)
        tied = [s for s in tied if self.deals[s] == fewest]
        prev = self.dealer
        for step in range(1, n + 1):
            seat = (prev + step) % n
            if seat in tied:
                return seat
        raise AssertionError("unreachable: some seat has the most points")

    def action_to_json(self, action: int) -> Json:
        phase = self._phase
        if phase == _P_TURN:
            if self.decision_kind() == DRAW:
                return {"pass": True} if action == PASS_ACTION else {"draw": True}
            return {"card": card_json(action)}
        if phase == _P_GIVE_CARD:
            return {"card": card_json(action)}
        if phase == _P_DEAL_SIZE:
            return {"hand_size": action}
        return {"seat": action}

    def action_to_string(self, action: int) -> str:
        phase = self._phase
        if phase == _P_TURN:
            if self.decision_kind() == DRAW:
                return "pass" if action == PASS_ACTION else "draw"
            return f"play {card_label(action)}" if 0 <= action < NUM_CARDS else str(action)
        if phase == _P_GIVE_CARD:
            return f"give {card_label(action)}" if 0 <= action < NUM_CARDS else str(action)
        if phase == _P_GIVE_TO:
            return f"to seat {action}"
        if phase == _P_TRADE:
            return f"trade with seat {action}"
        if phase == _P_DEAL_SIZE:
            return f"deal {action}"
        return str(action)

    # -- chance -----------------------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> Outcome:
        phase = self._phase
        if phase == _P_DEALER:
            return (rng.randrange(self.num_players),)
        if phase == _P_DEAL:
            deck = list(range(NUM_CARDS))
            rng.shuffle(deck)
            return tuple(deck)
        if phase == _P_RESHUFFLE:
            pool = sorted(self._reshuffle_pool())
            rng.shuffle(pool)
            return tuple(pool)
        raise NotChanceError("no chance event is pending")

    def _reshuffle_pool(self) -> list[int]:
        top, ref = self.pile[-1], self.ref
        return [c for c in self.pile if c != top and c != ref]

    def apply_chance(self, outcome: Sequence[int]) -> None:
        phase = self._phase
        values = tuple(outcome)
        self._legal = None  # legal_actions() at a chance node cached []
        if phase == _P_DEALER:
            if len(values) != 1 or not 0 <= values[0] < self.num_players:
                raise IllegalActionError("a DEALER outcome is one seat")
            self.dealer = values[0]
            self.deals[self.dealer] += 1
            self.hand_size = FIRST_HAND_SIZE
            self._phase = _P_DEAL
        elif phase == _P_DEAL:
            if sorted(values) != list(range(NUM_CARDS)):
                raise IllegalActionError("a DEAL outcome must be a permutation of the 140 cards")
            self._deal(values)
        elif phase == _P_RESHUFFLE:
            pool = self._reshuffle_pool()
            if sorted(values) != sorted(pool):
                raise IllegalActionError(
                    "a RESHUFFLE outcome must be a permutation of the play pile"
                    " without its top card and the reference card"
                )
            top, ref = self.pile[-1], self.ref
            self.pile = [ref] if top == ref else [ref, top]
            self.draw = list(reversed(values))
            self.reshuffled = sorted(values)
            for c in values:
                self._know[c] = 0
            self.events.append((_E_RESHUFFLE, len(values), 0, -1, self._all))
            self._take_top(self.to_play)
            self._after_draw()
        else:
            raise NotChanceError("no chance event is pending")

    def _deal(self, deck: tuple[int, ...]) -> None:
        n, size = self.num_players, self.hand_size
        self.round += 1
        self.hands = [list(deck[i * size : (i + 1) * size]) for i in range(n)]
        self._active = [sum(ACTIVE[c] for c in h) for h in self.hands]
        draw = list(reversed(deck[n * size :]))
        know = self._know = [0] * NUM_CARDS
        everyone = self._all
        self.events = [(_E_DEAL, self.dealer, size, -1, everyone)]
        self.reshuffled = []
        self._limits = [() for _ in range(n)]
        card = draw.pop()
        while KIND[card] != K_NUMBER:
            draw.insert(0, card)
            know[card] = everyone
            self.events.append((_E_FLIP, 1, 0, card, everyone))
            card = draw.pop()
        self.events.append((_E_FLIP, 0, 0, card, everyone))
        self.draw = draw
        self.pile = [card]
        self.ref = card
        self.reset = False
        self.streak = self.stale = self.turns = 0
        self._gives_left = 0
        self.gift = -1
        self.to_play = (self.dealer + 1) % n
        self._legal = None
        if 0 in self._active:
            self._end_round("out")
            return
        self._phase = _P_TURN
        self._player = self.to_play

    def outcome_to_string(self, outcome: Sequence[int]) -> str:
        if self._phase == _P_DEALER:
            return f"dealer {outcome[0]}" if outcome else ""
        if self._phase == _P_DEAL:
            size, n = self.hand_size, self.num_players
            blocks = [
                " ".join(str(c) for c in sorted(outcome[i * size : (i + 1) * size]))
                for i in range(n)
            ]
            return " | ".join(blocks) + f" | draw pile top {outcome[n * size]}"
        return " ".join(str(c) for c in outcome)

    # -- information ------------------------------------------------------------------
    def observation(self, seat: int) -> dict[str, Json]:
        bit = 1 << seat
        know = self._know
        player = self._player
        giving = self._phase in (_P_GIVE_CARD, _P_GIVE_TO)
        known = [
            {"seat": t, "card": card_json(c)}
            for t, hand in enumerate(self.hands)
            if t != seat
            for c in sorted(hand)
            if know[c] & bit
        ]
        events = [_event_json(e, bit) for e in self.events[-EVENT_WINDOW:]]
        last: dict[str, Any] | None = None
        if self.last_round is not None:
            number, reason, points, hands = self.last_round
            last = {
                "round": number,
                "reason": reason,
                "points": list(points),
                "hands": [[card_json(c) for c in h] for h in hands],
            }
        ref = self.ref
        return {
            "seat": seat,
            "num_players": self.num_players,
            "end": "gap" if self._end_gap else "rounds",
            "round": self.round,
            "dealer": self.dealer,
            "deal_size": self.hand_size,
            "deals": list(self.deals),
            "scores": list(self.totals),
            "phase": _PUBLIC_PHASE[self._phase],
            "to_play": player,
            "decision": self.decision_kind() if player == seat else None,
            "hand": [card_json(c) for c in sorted(self.hands[seat])],
            "hand_sizes": [len(h) for h in self.hands],
            "draw_pile_size": len(self.draw),
            "draw_pile_bottom": [card_json(c) for c in self.draw if know[c] & bit],
            "play_pile": [card_json(c) for c in self.pile],
            "reference": card_json(ref) if ref >= 0 else None,
            "reference_value": self._reference_value() if ref >= 0 else 0,
            "reset_active": self.reset,
            "turn": self.turns,
            "draws_in_a_row": self.streak,
            "stalemate_passes": self.stale,
            "giver": player if giving else None,
            "gives_left": self._gives_left if giving else 0,
            "gift": card_json(self.gift) if giving and player == seat and self.gift >= 0 else None,
            "known": known,
            "reshuffled": [card_json(c) for c in self.reshuffled],
            "nothing_playable": [
                [
                    {"reference": card_json(r), "value": v, "at_most": b}
                    for r, v, b in self._limits[t]
                ]
                for t in range(self.num_players)
            ],
            "events": events,
            "last_round": last,
        }

    def resample_hidden(self, seat: int, rng: random.Random) -> SeizureState:
        """Redeal every card ``seat`` cannot place at random among the places it could be,
        keeping exactly what the seat knows: hand and pile sizes, the cards it knows the
        place of, that the draw pile holds only cards of the round's last reshuffle, what
        every draw told (``nothing_playable``), and, during a round, that every hand holds
        a number or Seizure card. A gift chosen by another seat is re-picked from the
        giver's redealt hand. Every placement consistent with that knowledge can come
        out; none other does (when random attempts keep failing, the true placement is
        kept: it is consistent)."""
        other = self.clone()
        other._redeal(seat, rng, ATTEMPTS)
        return other

    def _redeal(self, seat: int, rng: random.Random, attempts: int) -> bool:
        """Redeal ``seat``'s unknown cards in place; False (nothing changed) when every
        attempt failed. Draw pile first (only reshuffled cards may be there), then the
        hands with limits, most limited first, each card drawn uniformly among those that
        keep every limit; the rest fills the other hands; a result leaving a hand in a
        round without a number or Seizure card is rejected."""
        bit = 1 << seat
        know = self._know
        n = self.num_players
        hidden = [c for t in range(n) if t != seat for c in self.hands[t] if not know[c] & bit]
        hidden += [c for c in self.draw if not know[c] & bit]
        draw_slots = sum(1 for c in self.draw if not know[c] & bit)
        only_reshuffled = frozenset(self.reshuffled) if self.reshuffled else None
        others = [t for t in range(n) if t != seat]
        others.sort(key=lambda t: -len(self._limits[t]))
        in_round = self._phase in _IN_ROUND
        for _attempt in range(attempts):
            dealt = _try_deal(self, seat, hidden, draw_slots, only_reshuffled, others, rng)
            if dealt is None:
                continue
            hands, draw_cards = dealt
            if in_round and any(not any(ACTIVE[c] for c in hands[t]) for t in others):
                continue
            for c in hidden:
                know[c] &= ~bit
            for t in others:
                self.hands[t] = hands[t]
            it = iter(draw_cards)
            self.draw = [c if know[c] & bit else next(it) for c in self.draw]
            self._active = [sum(ACTIVE[c] for c in h) for h in self.hands]
            if self._phase == _P_GIVE_TO and self._player != seat:
                # Only the giver knows the chosen gift, even a card others know of.
                hand = self.hands[self._player]
                self.gift = hand[rng.randrange(len(hand))]
            self._legal = None
            return True
        return False

    def cards(self) -> dict[str, list[int]]:
        zones = {f"hand{s}": list(h) for s, h in enumerate(self.hands)}
        zones["draw"] = list(self.draw)
        zones["pile"] = list(self.pile)
        return zones

    # -- results ----------------------------------------------------------------------
    def scores(self) -> list[float]:
        return [float(t) for t in self.totals]

    def ranks(self) -> list[int]:
        if not self._end_gap:
            return competition_ranks(self.totals, lower_is_better=True)
        low = min(self.totals)
        return [0 if t == low else 1 for t in self.totals]

    # -- misc -------------------------------------------------------------------------
    def clone(self) -> SeizureState:
        other = SeizureState.__new__(SeizureState)
        other.num_players = self.num_players
        other._end_gap = self._end_gap
        other._all = self._all
        other.hands = [list(h) for h in self.hands]
        other._active = list(self._active)
        other.draw = list(self.draw)
        other.pile = list(self.pile)
        other.ref = self.ref
        other.reset = self.reset
        other.streak = self.streak
        other.stale = self.stale
        other.turns = self.turns
        other.to_play = self.to_play
        other.dealer = self.dealer
        other.hand_size = self.hand_size
        other.round = self.round
        other.deals = list(self.deals)
        other.totals = list(self.totals)
        other.events = list(self.events)
        other.last_round = self.last_round
        other.end_reason = self.end_reason
        other._know = list(self._know)
        other.reshuffled = self.reshuffled  # replaced, never changed in place
        other._limits = list(self._limits)
        other._phase = self._phase
        other._player = self._player
        other._gives_left = self._gives_left
        other.gift = self.gift
        other._legal = self._legal
        other._turn_kind = self._turn_kind
        return other

    def render(self) -> str:
        lines = [
            f"round {self.round}  dealer {self.dealer}  deal size {self.hand_size}"
            f"  totals {self.totals}  turn {self.turns}",
        ]
        for seat, hand in enumerate(self.hands):
            cards = " ".join(str(c) for c in sorted(hand)) or "-"
            lines.append(f"  seat {seat}: {cards}")
        if self.ref >= 0:
            reset = "  RESET (value 0)" if self.reset else ""
            lines.append(
                f"  reference {card_label(self.ref)} value {self._reference_value()}{reset}"
                f"  pile {len(self.pile)}  draw {len(self.draw)}"
            )
        if self._phase in (_P_GIVE_CARD, _P_GIVE_TO):
            lines.append(f"  seat {self._player} gives {self._gives_left} more")
        player = self._player
        who = {CHANCE: "chance", TERMINAL: "game over"}.get(player, f"seat {player}")
        lines.append(f"  next: {who} {self.decision_kind()}".rstrip())
        return "\n".join(lines)


#: How many random redeals ``resample_hidden`` tries before it keeps the true placement.
ATTEMPTS = 50
#: NO_PLAY[pair * 10 + value]: bit mask of the cards a seat that draws must not hold with a
#: reference of that pair at that value: the playable number cards and the Seizure cards.
NO_PLAY: list[int] = [
    sum(1 << c for c in range(NUM_CARDS) if row[c] or IS_SEIZURE[c]) for row in PLAYABLE
]

Limits = tuple[tuple[int, int, int], ...]


def _no_play(ref: int, value: int) -> int:
    return NO_PLAY[PAIR[ref] * 10 + value]


def _after_leaving(limits: Limits, card: int, size: int) -> Limits:
    """A hand's limits once ``card`` (seen by everyone) left it, ``size`` cards remaining."""
    out = []
    for r, v, b in limits:
        b -= (_no_play(r, v) >> card) & 1
        if b < size:
            out.append((r, v, b))
    return tuple(out)


def _after_entering(limits: Limits, size: int, card: int = -1) -> Limits:
    """A hand's limits once a card entered it (``card`` when everyone knows which, else -1:
    it may be of any kind), ``size`` cards now."""
    out = []
    for r, v, b in limits:
        b += 1 if card < 0 else (_no_play(r, v) >> card) & 1
        if b < size:
            out.append((r, v, b))
    return tuple(out)


def _pruned(limits: Limits, size: int) -> Limits:
    """Drop the limits a hand of ``size`` cards meets whatever it holds."""
    return tuple(x for x in limits if x[2] < size)


def _try_deal(
    state: SeizureState,
    seat: int,
    hidden: list[int],
    draw_slots: int,
    only_reshuffled: frozenset[int] | None,
    others: list[int],
    rng: random.Random,
) -> tuple[dict[int, list[int]], list[int]] | None:
    """One random placement of ``hidden`` for ``seat`` (see SeizureState._redeal); None when
    it painted itself into a corner."""
    bit = 1 << seat
    know = state._know
    pool = list(hidden)
    rng.shuffle(pool)
    # Most constrained first: a reshuffled draw pile, then hands with limits (before an
    # unconstrained draw pile takes the cards they need), then the rest. Each card is
    # drawn among those that keep every constraint, so every consistent placement can
    # come out whatever the order.
    draw_cards: list[int] | None = None
    if only_reshuffled is not None:
        candidates = [c for c in pool if c in only_reshuffled]
        if len(candidates) < draw_slots:
            return None
        draw_cards = candidates[:draw_slots]
        taken = set(draw_cards)
        pool = [c for c in pool if c not in taken]
    hands: dict[int, list[int]] = {}
    free: list[tuple[int, list[int], int]] = []
    for t in others:
        hand = state.hands[t]
        kept = [c for c in hand if know[c] & bit]
        need = len(hand) - len(kept)
        limits = state._limits[t]
        if not limits:
            free.append((t, kept, need))
            continue
        masks = [_no_play(r, v) for r, v, _b in limits]
        room = [
            b - sum((m >> c) & 1 for c in kept)
            for m, (_r, _v, b) in zip(masks, limits, strict=True)
        ]
        if min(room) < 0:
            return None
        chosen: list[int] = []
        rest: list[int] = []
        for c in pool:
            if len(chosen) == need:
                rest.append(c)
                continue
            hits = [i for i, m in enumerate(masks) if (m >> c) & 1]
            if any(room[i] == 0 for i in hits):
                rest.append(c)
                continue
            for i in hits:
                room[i] -= 1
            chosen.append(c)
        if len(chosen) < need:
            return None
        hands[t] = kept + chosen
        pool = rest
    if draw_cards is None:
        draw_cards = pool[:draw_slots]
        del pool[:draw_slots]
    for t, kept, need in free:
        hands[t] = kept + pool[:need]
        del pool[:need]
    return hands, draw_cards


def _event_json(event: tuple[int, int, int, int, int], bit: int) -> dict[str, Json]:
    """One event as ``bit``'s seat sees it."""
    etype, a, b, card, vis = event
    shown = card_json(card) if card >= 0 and vis & bit else None
    if etype == _E_PLAY:
        return {"type": "play", "seat": a, "card": shown}
    if etype == _E_DRAW:
        return {"type": "draw", "seat": a, "card": shown}
    if etype == _E_PASS:
        return {"type": "pass", "seat": a}
    if etype == _E_GIVE:
        return {"type": "give", "seat": a, "to": b, "card": shown}
    if etype == _E_LEFT:
        return {"type": "hands_left", "seat": a}
    if etype == _E_RIGHT:
        return {"type": "hands_right", "seat": a}
    if etype == _E_TRADE:
        return {"type": "trade", "seat": a, "partner": b}
    if etype == _E_RESET:
        return {"type": "reset"}
    if etype == _E_RESHUFFLE:
        return {"type": "reshuffle", "cards": a}
    if etype == _E_FLIP:
        return {"type": "flip", "card": shown, "to_bottom": bool(a)}
    return {"type": "deal", "dealer": a, "hand_size": b}


_PHASE_OF_DECISION = {
    PLAY_CARD: _P_TURN,
    DRAW: _P_TURN,
    GIVE_CARD: _P_GIVE_CARD,
    GIVE_TO: _P_GIVE_TO,
    TRADE_PARTNER: _P_TRADE,
    DEAL_SIZE: _P_DEAL_SIZE,
}


def from_observation(obs: dict[str, Json], rng: random.Random) -> SeizureState:
    """A state the observing seat cannot tell apart from the true one, from its observation
    alone (the seat is to decide): every card it cannot place is dealt as
    ``resample_hidden`` deals them. The event log starts empty (it is not state), and what
    other seats know is not rebuilt (a search only asks what this seat knows)."""
    n = int(obs["num_players"])
    seat = int(obs["seat"])
    state = SeizureState(n, end_gap=obs["end"] == "gap")
    everyone = state._all
    state.round = int(obs["round"])
    state.dealer = int(obs["dealer"])
    state.hand_size = int(obs["deal_size"])
    state.deals = [int(d) for d in obs["deals"]]
    state.totals = [int(t) for t in obs["scores"]]
    state.turns = int(obs["turn"])
    state.streak = int(obs["draws_in_a_row"])
    state.stale = int(obs["stalemate_passes"])
    state.reset = bool(obs["reset_active"])
    state.pile = [int(c["id"]) for c in obs["play_pile"]]
    ref = obs["reference"]
    state.ref = int(ref["id"]) if ref is not None else -1
    state.reshuffled = sorted(int(c["id"]) for c in obs.get("reshuffled", []))
    state._limits = [
        tuple((int(x["reference"]["id"]), int(x["value"]), int(x["at_most"])) for x in limits)
        for limits in obs.get("nothing_playable", [[] for _ in range(n)])
    ]
    last = obs["last_round"]
    if last is not None:
        state.last_round = (
            int(last["round"]),
            str(last["reason"]),
            [int(p) for p in last["points"]],
            [[int(c["id"]) for c in h] for h in last["hands"]],
        )
    player = int(obs["to_play"])
    state._player = state.to_play = player
    state._phase = _PHASE_OF_DECISION[str(obs["decision"])]
    state._gives_left = int(obs["gives_left"])
    if obs["gift"] is not None:
        state.gift = int(obs["gift"]["id"])
    # Cards whose place the seat knows: its hand, the pile, others' known cards, and the
    # turned-up cards at the bottom of the draw pile.
    know = state._know
    mine = [int(c["id"]) for c in obs["hand"]]
    hands: list[list[int]] = [[] for _ in range(n)]
    hands[seat] = mine
    for entry in obs["known"]:
        card = int(entry["card"]["id"])
        hands[int(entry["seat"])].append(card)
        know[card] |= 1 << seat
    bottom = [int(c["id"]) for c in obs["draw_pile_bottom"]]
    for card in bottom:
        know[card] = everyone
    placed = set(mine) | set(state.pile) | set(bottom) | {c for h in hands for c in h}
    unseen = [c for c in range(NUM_CARDS) if c not in placed]
    # A first placement with the right sizes; the redeal below makes it a proper one.
    sizes = [int(k) for k in obs["hand_sizes"]]
    draw_size = int(obs["draw_pile_size"])
    reshuffled = set(state.reshuffled)
    unseen.sort(key=lambda c: c not in reshuffled)  # reshuffled cards first: the draw pile
    top = unseen[: draw_size - len(bottom)]
    unseen = unseen[draw_size - len(bottom) :]
    state.draw = bottom + top
    for t in range(n):
        if t != seat:
            extra = sizes[t] - len(hands[t])
            hands[t].extend(unseen[:extra])
            del unseen[:extra]
    state.hands = hands
    state._active = [sum(ACTIVE[c] for c in h) for h in hands]
    state._turn_kind = ""
    state._legal = None
    state._redeal(seat, rng, ATTEMPTS * 4)
    return state


def _new_game(num_players: int, options: Options) -> SeizureState:
    return SeizureState(num_players, end_gap=options.get("end") == "gap")


GAME = GameSpec(
    id="seizure-v1",
    name="Seizure",
    min_players=2,
    max_players=6,
    decision_kinds=(PLAY_CARD, DRAW, GIVE_CARD, GIVE_TO, TRADE_PARTNER, DEAL_SIZE),
    chance_kinds=(DEALER, DEAL, RESHUFFLE),
    lower_score_is_better=True,
    # Per turn at most 5 entries (play + two GIVE_CARD/GIVE_TO pairs), per round 2 more
    # (DEAL_SIZE or DEALER, DEAL); at most 50 rounds.
    max_length=GAP_ROUND_CAP * (5 * TURN_CAP + 2),
    factory=_new_game,
    from_observation=from_observation,
    options=(
        OptionSpec(
            name="end",
            default="rounds",
            choices=("rounds", "gap"),
            help="rounds: 5 rounds, lowest total wins (ties share); gap: play until the"
            " spread is >= 25 with a unique lowest total (cap 50 rounds), only the winner"
            " places",
        ),
    ),
    summary="shed cards on colour and number, give cards away, pass hands; fewest points wins",
)
SeizureState.spec = GAME
