"""Western Legends: Showdown (``western-showdown-v1``): exactly 2 players.

Rules as docs/rules/western-showdown.md states them (RULINGS.md decides the open points).

Ids (see :mod:`.cards`): cards 0..17, seat 0 red = 0..8, seat 1 black = 9..17, values
1,1,1,2,3,4,5,6,7 in id order within a colour; locations 0..6 = Saloon, Sheriff's Office,
Doctor's Office, Mine, Ranch, Cabaret, Bandit Hideout. Three of them are on the table, in
the order drawn (the "slots"); actions always name locations by id.

Actions by decision kind (ints; JSON as bots see it):

* MULLIGAN: a card id from hand to discard -> ``{"card": c}``; ``DONE`` (128) ->
  ``{"done": true}``. After a third discard the mulligan ends by itself.
* TURN: ``card * 7 + location`` -> ``{"card": c, "location": l}``; ``PASS`` (126) ->
  ``{"pass": true}`` (REPUTATION holder only, not on the turn right after receiving it).
* ACTIVATE, WALLOP_SECOND: ``NO`` (0) / ``YES`` (1) -> ``{"yes": false}`` / ``{"yes": true}``.
* DETERMINATION_EXTRA: ``card * 7 + location`` as TURN, or ``SKIP`` (127) -> ``{"skip": true}``.
* SADDLE_DEST, STICK_DEST: a location id -> ``{"location": l}``.
* STICK_SOURCE, CHEAT_PICK: a card id on the table ->
  ``{"card": c, "location": l, "position": p}`` (position 0 = bottom of the stack).

Chance events: LOCATIONS (3 distinct location ids, table order), START_PLAYER (``(seat,)``,
first game only), SHUFFLE (a permutation of one seat's 9 cards, first element on top; seat
0 then seat 1; the top 3 are dealt), RESHUFFLE (after each seat's mulligan, even with no
discards: a permutation of that seat's draw pile). In best-of-3 each new game starts again
with LOCATIONS, and the loser of the previous game starts and takes REPUTATION.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from saloon.games.base import (
    CHANCE,
    TERMINAL,
    GameSpec,
    Json,
    Options,
    OptionSpec,
    Outcome,
    State,
)
from saloon.games.errors import GameOptionError, IllegalActionError, NotChanceError
from saloon.games.western_showdown.cards import (
    CONDITIONS,
    DECKS,
    LOCATION_CONDITIONS,
    LOCATION_NAMES,
    MIN_CARDS,
    OWNER,
    VALUE,
    card_json,
    card_label,
    stack_winner,
)

NO = 0
YES = 1
PASS = 126
SKIP = 127
DONE = 128

(
    _LOCATIONS,
    _START,
    _SHUFFLE,
    _RESHUFFLE,
    _MULLIGAN,
    _TURN,
    _ACTIVATE,
    _WALLOP2,
    _DETERMINATION,
    _SADDLE,
    _STICK_SOURCE,
    _STICK_DEST,
    _CHEAT1,
    _CHEAT2,
    _OVER,
) = range(15)

MULLIGAN = "MULLIGAN"
TURN = "TURN"
ACTIVATE = "ACTIVATE"
WALLOP_SECOND = "WALLOP_SECOND"
DETERMINATION_EXTRA = "DETERMINATION_EXTRA"
SADDLE_DEST = "SADDLE_DEST"
STICK_SOURCE = "STICK_SOURCE"
STICK_DEST = "STICK_DEST"
CHEAT_PICK = "CHEAT_PICK"
_KINDS = (
    "LOCATIONS",
    "START_PLAYER",
    "SHUFFLE",
    "RESHUFFLE",
    MULLIGAN,
    TURN,
    ACTIVATE,
    WALLOP_SECOND,
    DETERMINATION_EXTRA,
    SADDLE_DEST,
    STICK_SOURCE,
    STICK_DEST,
    CHEAT_PICK,
    CHEAT_PICK,
    "",
)
#: Phases whose pending card (the one whose ability resolves) observations show.
_RESOLVING = frozenset(
    (_ACTIVATE, _WALLOP2, _DETERMINATION, _SADDLE, _STICK_SOURCE, _STICK_DEST, _CHEAT1, _CHEAT2)
)


class WesternShowdownState(State):
    """A match (one game, or best-of-3) of Western Legends: Showdown in progress."""

    __slots__ = (
        "_phase",
        "_shuffle_seat",
        "best_of",
        "blocked",
        "bulletproof",
        "discards",
        "draw",
        "game_number",
        "games_won",
        "hands",
        "locations",
        "mulligans",
        "num_players",
        "pending_card",
        "pending_slot",
        "picked",
        "played",
        "reputation",
        "results",
        "slot_of",
        "stacks",
        "start_player",
        "turn",
        "won",
    )

    spec: GameSpec

    # The state a playout reads (public, typed and documented: docs/reference/search.md).
    # Read it; change the state only through apply_action / apply_chance. Card ids 0..17
    # (cards.VALUE[c], cards.OWNER[c]), location ids 0..6 (the table holds three).
    #: Always 2.
    num_players: int
    #: 1, or 3 for best-of-3.
    best_of: int
    #: Games won by each seat (best-of-3).
    games_won: list[int]
    #: Finished games: (start player, winner, cards won by seat 0, by seat 1).
    results: list[tuple[int, int, int, int]]
    #: The game being played, from 1.
    game_number: int
    #: Location ids on the table, in slot order.
    locations: list[int]
    #: slot_of[location] -> its slot on the table, or -1.
    slot_of: list[int]
    #: Each slot's stack, bottom first (its top card is the last).
    stacks: list[list[int]]
    #: Each seat's hand, card ids ascending.
    hands: list[list[int]]
    #: Draw piles, top first (before SHUFFLE: the deck in id order).
    draw: list[list[int]]
    #: Cards set aside during a seat's mulligan, until they are shuffled back.
    discards: list[list[int]]
    #: Cards each seat discarded in its mulligan (-1: not done yet).
    mulligans: list[int]
    #: Cards each seat has won this game (the score).
    won: list[list[int]]
    #: Cards each seat placed from hand this game (public knowledge), in order.
    played: list[list[int]]
    #: Bit mask of activated BULLETPROOF cards on the table (bit c: card c).
    bulletproof: int
    #: The seat that started this game.
    start_player: int
    #: The seat holding REPUTATION.
    reputation: int
    #: blocked[seat]: received REPUTATION and has not completed a turn since (it may not pass).
    blocked: list[bool]
    #: The seat to decide (-1 once the match is over).
    turn: int
    #: The card whose ability is being resolved (ACTIVATE, WALLOP_SECOND,
    #: DETERMINATION_EXTRA, SADDLE_DEST, STICK_SOURCE, STICK_DEST, CHEAT_PICK), else -1.
    pending_card: int
    #: The slot that card was placed on (locations[pending_slot]), else -1.
    pending_slot: int
    #: The card chosen first in a two-step choice (STICK 'EM UP's card before STICK_DEST,
    #: CHEAT's first card before its second CHEAT_PICK), else -1.
    picked: int

    def __init__(self, best_of: int = 1) -> None:
        self.num_players = 2
        self.best_of = best_of
        self.games_won = [0, 0]
        self.results = []
        self.game_number = 0
        self._reset_game(-1)

    def _reset_game(self, starter: int) -> None:
        self.game_number += 1
        self.locations = []
        self.slot_of = [-1] * 7
        self.stacks = [[], [], []]
        self.hands = [[], []]
        self.draw = [list(DECKS[0]), list(DECKS[1])]
        self.discards = [[], []]
        self.mulligans = [-1, -1]
        self.won = [[], []]
        self.played = [[], []]
        self.bulletproof = 0
        self.start_player = starter
        self.reputation = starter
        self.blocked = [False, False]
        self.turn = starter
        self._phase = _LOCATIONS
        self._shuffle_seat = 0
        self.pending_card = -1
        self.pending_slot = -1
        self.picked = -1
        self._legal: list[int] | None = None

    # -- whose turn -------------------------------------------------------------------
    def current_player(self) -> int:
        phase = self._phase
        if phase >= _MULLIGAN:
            return TERMINAL if phase == _OVER else self.turn
        return CHANCE

    def decision_kind(self) -> str:
        return _KINDS[self._phase]

    # -- seat decisions ---------------------------------------------------------------
    def _placements(self) -> list[int]:
        seat = self.turn
        shield = self.bulletproof
        open_locations = []
        for slot, stack in enumerate(self.stacks):
            if stack:
                top = stack[-1]
                if (shield >> top) & 1 and OWNER[top] != seat:
                    continue
            open_locations.append(self.locations[slot])
        open_locations.sort()
        return [c * 7 + loc for c in self.hands[self.turn] for loc in open_locations]

    def _table_cards(self) -> list[int]:
        stacks = self.stacks
        return sorted(stacks[0] + stacks[1] + stacks[2])

    def _stick_sources(self) -> list[int]:
        shield = self.bulletproof
        pending = self.pending_card
        return [c for c in self._table_cards() if c != pending and not (shield >> c) & 1]

    def _compute_legal(self) -> list[int]:
        phase = self._phase
        if phase == _TURN:
            legal = self._placements()
            if self.reputation == self.turn and not self.blocked[self.turn]:
                legal.append(PASS)
            return legal
        if phase in (_ACTIVATE, _WALLOP2):
            return [NO, YES]
        if phase == _DETERMINATION:
            legal = self._placements()
            legal.append(SKIP)
            return legal
        if phase == _MULLIGAN:
            return [*self.hands[self.turn], DONE]
        if phase == _SADDLE:
            return sorted(loc for loc in self.locations if self.slot_of[loc] != self.pending_slot)
        if phase == _STICK_SOURCE:
            return self._stick_sources()
        if phase == _STICK_DEST:
            source = self._slot_of_card(self.picked)
            return sorted(loc for loc in self.locations if self.slot_of[loc] != source)
        if phase == _CHEAT1:
            return self._table_cards()
        if phase == _CHEAT2:
            return [c for c in self._table_cards() if c != self.picked]
        return []

    def _apply(self, action: int) -> None:
        phase = self._phase
        if phase in (_TURN, _DETERMINATION):
            if action == PASS:
                self._pass()
            elif action == SKIP:
                self._end_turn()
            else:
                self._place(action // 7, self.slot_of[action % 7])
        elif phase == _ACTIVATE:
            self._activate(action == YES)
        elif phase == _WALLOP2:
            if action == YES:
                hand = self.hands[self.turn]
                second = next(c for c in hand if c % 9 < 3)
                hand.remove(second)
                self.played[self.turn].append(second)
                self.stacks[self.pending_slot].append(second)
            self._finish_step()
        elif phase == _MULLIGAN:
            self._mulligan(action)
        elif phase == _SADDLE:
            source = self.stacks[self.pending_slot]
            self.stacks[self.slot_of[action]].extend(source)
            source.clear()
            self._finish_step()
        elif phase == _STICK_SOURCE:
            self.picked = action
            self._phase = _STICK_DEST
        elif phase == _STICK_DEST:
            card = self.picked
            self.stacks[self._slot_of_card(card)].remove(card)
            self.stacks[self.slot_of[action]].append(card)
            self._finish_step()
        elif phase == _CHEAT1:
            self.picked = action
            self._phase = _CHEAT2
        else:  # _CHEAT2
            self._swap(self.picked, action)
            self._finish_step()

    # -- the rules --------------------------------------------------------------------
    def _slot_of_card(self, card: int) -> int:
        for slot, stack in enumerate(self.stacks):
            if card in stack:
                return slot
        return -1

    def _swap(self, a: int, b: int) -> None:
        sa = self.stacks[self._slot_of_card(a)]
        sb = self.stacks[self._slot_of_card(b)]
        ia = sa.index(a)
        ib = sb.index(b)
        sa[ia] = b
        sb[ib] = a

    def _mulligan(self, action: int) -> None:
        seat = self.turn
        hand = self.hands[seat]
        if action != DONE:
            # After a third discard the hand is empty and DONE is the only legal action: a
            # decision of its own, recorded like any other (RULINGS, all games).
            hand.remove(action)
            self.discards[seat].append(action)
            return
        discards = self.discards[seat]
        pile = self.draw[seat]
        count = len(discards)
        hand.extend(pile[:count])
        del pile[:count]
        hand.sort()
        pile.extend(discards)
        discards.clear()
        self.mulligans[seat] = count
        self._shuffle_seat = seat
        self._phase = _RESHUFFLE

    def _place(self, card: int, slot: int) -> None:
        """Place ``card`` from hand at ``slot``; resolve activation or finish the step."""
        seat = self.turn
        hand = self.hands[seat]
        hand.remove(card)
        self.played[seat].append(card)
        stack = self.stacks[slot]
        previous = stack[-1] if stack else -1
        stack.append(card)
        self.pending_card = card
        self.pending_slot = slot
        value = VALUE[card]
        if previous < 0 or value > VALUE[previous]:
            if value == 1:
                if any(c % 9 < 3 for c in hand):
                    self._phase = _WALLOP2
                    return
            elif value == 2:
                self._check_locations()
                if hand:
                    self._phase = _DETERMINATION
                else:
                    self._end_turn()
                return
            elif value <= 4:
                self._phase = _ACTIVATE
                return
            elif value == 5:
                if self._stick_sources():
                    self._phase = _ACTIVATE
                    return
            elif value == 6:
                if len(self.stacks[0]) + len(self.stacks[1]) + len(self.stacks[2]) >= 2:
                    self._phase = _ACTIVATE
                    return
            elif previous >= 0:  # LIVING LEGEND does nothing at an empty location
                self._phase = _ACTIVATE
                return
        self._finish_step()

    def _activate(self, yes: bool) -> None:
        if not yes:
            self._finish_step()
            return
        card = self.pending_card
        value = VALUE[card]
        if value == 3:
            self.bulletproof |= 1 << card
            self._finish_step()
        elif value == 4:
            self._phase = _SADDLE
        elif value == 5:
            self._phase = _STICK_SOURCE
        elif value == 6:
            self._phase = _CHEAT1
        else:  # LIVING LEGEND takes its stack
            self._take(self.turn, self.pending_slot, "living_legend")
            self._finish_step()

    def _take(self, seat: int, slot: int, why: str) -> None:
        stack = self.stacks[slot]
        self._emit(
            "stack_taken", seat=seat, location=self.locations[slot], cards=list(stack), why=why
        )
        self.won[seat].extend(stack)
        if self.bulletproof:
            for c in stack:
                self.bulletproof &= ~(1 << c)
        stack.clear()

    def _check_locations(self) -> None:
        seat = self.turn
        stacks = self.stacks
        for slot, location in enumerate(self.locations):
            stack = stacks[slot]
            if len(stack) >= MIN_CARDS[location] and CONDITIONS[location](stack):
                self._take(seat, slot, "condition")

    def _finish_step(self) -> None:
        self._check_locations()
        self._end_turn()

    def _end_turn(self) -> None:
        seat = self.turn
        self.blocked[seat] = False
        hand = self.hands[seat]
        need = 3 - len(hand)
        pile = self.draw[seat]
        if need > 0 and pile:
            hand.extend(pile[:need])
            del pile[:need]
            hand.sort()
        self._next_turn(seat)

    def _pass(self) -> None:
        seat = self.turn
        self.reputation = 1 - seat
        self.blocked[1 - seat] = True
        self._next_turn(seat)

    def _next_turn(self, seat: int) -> None:
        self.pending_card = -1
        self.pending_slot = -1
        self.picked = -1
        hands = self.hands
        if hands[1 - seat]:
            self.turn = 1 - seat
        elif not hands[seat]:
            self._end_game()
            return
        self._phase = _TURN

    def _end_game(self) -> None:
        for slot, stack in enumerate(self.stacks):
            if stack:
                self._take(stack_winner(stack), slot, "end_of_game")
        counts = (len(self.won[0]), len(self.won[1]))
        winner = (0 if counts[0] > counts[1] else 1) if counts[0] != counts[1] else self.reputation
        self._emit("game_won", winner=winner, cards_won=list(counts), game=len(self.results) + 1)
        self.results.append((self.start_player, winner, counts[0], counts[1]))
        self.games_won[winner] += 1
        if self.games_won[winner] * 2 > self.best_of:
            self._phase = _OVER
            self.turn = -1
        else:
            self._reset_game(1 - winner)
            self._phase = _LOCATIONS

    # -- JSON and labels --------------------------------------------------------------
    def action_to_json(self, action: int) -> Json:
        phase = self._phase
        if phase in (_TURN, _DETERMINATION):
            if action == PASS:
                return {"pass": True}
            if action == SKIP:
                return {"skip": True}
            return {"card": action // 7, "location": action % 7}
        if phase in (_ACTIVATE, _WALLOP2):
            return {"yes": action == YES}
        if phase == _MULLIGAN:
            return {"done": True} if action == DONE else {"card": action}
        if phase in (_STICK_SOURCE, _CHEAT1, _CHEAT2):
            slot = self._slot_of_card(action)
            position = self.stacks[slot].index(action) if slot >= 0 else -1
            location = self.locations[slot] if slot >= 0 else -1
            return {"card": action, "location": location, "position": position}
        return {"location": action}

    def action_to_string(self, action: int) -> str:
        phase = self._phase
        if phase in (_TURN, _DETERMINATION):
            if action == PASS:
                return "pass REPUTATION"
            if action == SKIP:
                return "skip"
            if 0 <= action < 126:
                return f"{card_label(action // 7)} at {LOCATION_NAMES[action % 7]}"
            return str(action)
        if phase in (_ACTIVATE, _WALLOP2):
            return "yes" if action == YES else "no"
        if phase == _MULLIGAN:
            return "done" if action == DONE else f"discard {_label(action)}"
        if phase in (_STICK_SOURCE, _CHEAT1, _CHEAT2):
            return f"pick {_label(action)}"
        return f"to {LOCATION_NAMES[action]}" if 0 <= action < 7 else str(action)

    # -- chance -----------------------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> Outcome:
        phase = self._phase
        if phase == _LOCATIONS:
            return tuple(rng.sample(range(7), 3))
        if phase == _START:
            return (rng.randrange(2),)
        if phase in (_SHUFFLE, _RESHUFFLE):
            pile = list(self.draw[self._shuffle_seat])
            rng.shuffle(pile)
            return tuple(pile)
        raise NotChanceError("no chance event is pending")

    def apply_chance(self, outcome: Sequence[int]) -> None:
        phase = self._phase
        values = tuple(outcome)
        if phase == _LOCATIONS:
            if len(values) != 3 or len(set(values)) != 3 or not all(0 <= v < 7 for v in values):
                raise IllegalActionError("a LOCATIONS outcome is 3 distinct location ids 0..6")
            self.locations = list(values)
            for slot, location in enumerate(values):
                self.slot_of[location] = slot
            if self.start_player < 0:
                self._phase = _START
            else:
                self._shuffle_seat = 0
                self._phase = _SHUFFLE
        elif phase == _START:
            if values not in ((0,), (1,)):
                raise IllegalActionError("a START_PLAYER outcome is (0,) or (1,)")
            self.start_player = self.reputation = self.turn = values[0]
            self._shuffle_seat = 0
            self._phase = _SHUFFLE
        elif phase in (_SHUFFLE, _RESHUFFLE):
            seat = self._shuffle_seat
            if sorted(values) != sorted(self.draw[seat]):
                raise IllegalActionError(
                    f"a {_KINDS[phase]} outcome is a permutation of seat {seat}'s draw pile"
                )
            pile = self.draw[seat] = list(values)
            if phase == _SHUFFLE:
                self.hands[seat] = sorted(pile[:3])
                del pile[:3]
                if seat == 0:
                    self._shuffle_seat = 1
                else:
                    self.turn = self.start_player
                    self._phase = _MULLIGAN
            elif seat == self.start_player:
                self.turn = 1 - seat
                self._phase = _MULLIGAN
            else:
                self.turn = self.start_player
                self._phase = _TURN
        else:
            raise NotChanceError("no chance event is pending")
        self._legal = None

    def outcome_to_string(self, outcome: Sequence[int]) -> str:
        phase = self._phase
        if phase == _LOCATIONS:
            return ", ".join(LOCATION_NAMES[v] for v in outcome if 0 <= v < 7)
        if phase == _START:
            return f"seat {outcome[0]} starts" if outcome else ""
        return " ".join(_label(c) for c in outcome)

    # -- information ------------------------------------------------------------------
    def observation(self, seat: int) -> dict[str, Json]:
        phase = self._phase
        shield = self.bulletproof
        locations = []
        for slot, location in enumerate(self.locations):
            stack = []
            for c in self.stacks[slot]:
                entry = card_json(c)
                entry["bulletproof"] = bool((shield >> c) & 1)
                stack.append(entry)
            locations.append(
                {
                    "id": location,
                    "name": LOCATION_NAMES[location],
                    "condition": LOCATION_CONDITIONS[location],
                    "stack": stack,
                }
            )
        pending: dict[str, Json] | None = None
        if phase in _RESOLVING:
            pending = {
                "card": card_json(self.pending_card),
                "location": self.locations[self.pending_slot],
            }
            if phase in (_STICK_DEST, _CHEAT2):
                pending["picked"] = card_json(self.picked)
        return {
            "seat": seat,
            "num_players": 2,
            "best_of": self.best_of,
            "game_number": self.game_number,
            "games_won": list(self.games_won),
            "previous_games": [
                {"start_player": s, "winner": w, "cards_won": [a, b]} for s, w, a, b in self.results
            ],
            "start_player": self.start_player,
            "hand": [card_json(c) for c in self.hands[seat]],
            "hand_sizes": [len(h) for h in self.hands],
            "draw_pile": [card_json(c) for c in sorted(self.draw[seat])],
            "draw_pile_sizes": [len(p) for p in self.draw],
            "mulligan_discards": [
                d if d >= 0 else len(self.discards[s]) for s, d in enumerate(self.mulligans)
            ],
            "locations": locations,
            "won_sizes": [len(w) for w in self.won],
            "played": [list(p) for p in self.played],
            "reputation": self.reputation,
            "pass_blocked": list(self.blocked),
            "pending": pending,
            "to_play": self.current_player(),
            "decision": self.decision_kind(),
        }

    def resample_hidden(self, seat: int, rng: random.Random) -> WesternShowdownState:
        """Redeal the opponent's unknown cards (hand, draw pile, mulligan discards) among
        those places, and reshuffle the seat's own draw pile (its contents are known, its
        order is not). Sizes are kept. While the opponent answers WALLOP_SECOND, one of its
        1s stays in its hand (the question itself reveals it)."""
        other = self.clone()
        opponent = 1 - seat
        hand = self.hands[opponent]
        pinned = -1
        if self._phase == _WALLOP2 and self.turn == opponent:
            pinned = next(c for c in hand if c % 9 < 3)
        pool = [c for c in hand if c != pinned]
        pool += self.draw[opponent] + self.discards[opponent]
        rng.shuffle(pool)
        free = len(hand) - (1 if pinned >= 0 else 0)
        new_hand = pool[:free]
        if pinned >= 0:
            new_hand.append(pinned)
        other.hands[opponent] = sorted(new_hand)
        rest = pool[free:]
        size = len(self.draw[opponent])
        other.draw[opponent] = rest[:size]
        other.discards[opponent] = rest[size:]
        rng.shuffle(other.draw[seat])
        other._legal = None
        return other

    def cards(self) -> dict[str, list[int]]:
        zones: dict[str, list[int]] = {}
        for s in range(2):
            zones[f"hand{s}"] = list(self.hands[s])
            zones[f"draw{s}"] = list(self.draw[s])
            zones[f"discards{s}"] = list(self.discards[s])
            zones[f"won{s}"] = list(self.won[s])
        for slot in range(3):
            zones[f"stack{slot}"] = list(self.stacks[slot])
        return zones

    # -- results ----------------------------------------------------------------------
    def scores(self) -> list[float]:
        """Games won in best-of-3; in a single game the cards won so far."""
        if self.best_of > 1:
            return [float(g) for g in self.games_won]
        return [float(len(w)) for w in self.won]

    def ranks(self) -> list[int]:
        """Never tied: the match winner (9-9 goes to the REPUTATION holder) ranks 0."""
        if self.results and self._phase == _OVER:
            winner = self.results[-1][1]
            return [0 if s == winner else 1 for s in range(2)]
        scores = self.scores()
        if scores[0] != scores[1]:
            return [0, 1] if scores[0] > scores[1] else [1, 0]
        holder = max(self.reputation, 0)
        return [0 if s == holder else 1 for s in range(2)]

    # -- misc -------------------------------------------------------------------------
    def clone(self) -> WesternShowdownState:
        other = WesternShowdownState.__new__(WesternShowdownState)
        other.num_players = 2
        other.best_of = self.best_of
        other.games_won = list(self.games_won)
        other.results = list(self.results)
        other.game_number = self.game_number
        other.locations = list(self.locations)
        other.slot_of = list(self.slot_of)
        other.stacks = [list(s) for s in self.stacks]
        other.hands = [list(h) for h in self.hands]
        other.draw = [list(p) for p in self.draw]
        other.discards = [list(d) for d in self.discards]
        other.mulligans = list(self.mulligans)
        other.won = [list(w) for w in self.won]
        other.played = [list(p) for p in self.played]
        other.bulletproof = self.bulletproof
        other.start_player = self.start_player
        other.reputation = self.reputation
        other.blocked = list(self.blocked)
        other.turn = self.turn
        other._phase = self._phase
        other._shuffle_seat = self._shuffle_seat
        other.pending_card = self.pending_card
        other.pending_slot = self.pending_slot
        other.picked = self.picked
        other._legal = self._legal
        return other

    def render(self) -> str:
        games = f"  games won {self.games_won}" if self.best_of > 1 else ""
        lines = [
            f"game {self.game_number}{games}  REPUTATION: seat {self.reputation}"
            f"  won {[len(w) for w in self.won]}"
        ]
        for slot, location in enumerate(self.locations):
            stack = " ".join(
                _label(c) + ("*" if (self.bulletproof >> c) & 1 else "") for c in self.stacks[slot]
            )
            lines.append(f"  {LOCATION_NAMES[location]:<16} {stack or '-'}")
        for s in range(2):
            hand = " ".join(_label(c) for c in self.hands[s]) or "-"
            blocked = " (no pass)" if self.blocked[s] else ""
            lines.append(f"  seat {s}: hand {hand}  draw {len(self.draw[s])}{blocked}")
        player = self.current_player()
        who = {CHANCE: "chance", TERMINAL: "game over"}.get(player, f"seat {player}")
        lines.append(f"  next: {who} {self.decision_kind()}".rstrip())
        return "\n".join(lines)


def _label(card: int) -> str:
    return card_label(card) if 0 <= card < 18 else str(card)


_PHASE_OF_KIND = {
    MULLIGAN: _MULLIGAN,
    TURN: _TURN,
    ACTIVATE: _ACTIVATE,
    WALLOP_SECOND: _WALLOP2,
    DETERMINATION_EXTRA: _DETERMINATION,
    SADDLE_DEST: _SADDLE,
    STICK_SOURCE: _STICK_SOURCE,
    STICK_DEST: _STICK_DEST,
    CHEAT_PICK: _CHEAT1,
}


def from_observation(obs: dict[str, Json], rng: random.Random) -> WesternShowdownState:
    """A state the observing seat cannot tell apart from the true one, from its observation
    alone (the seat is to decide): the opponent's unplayed cards are dealt at random into
    its hand and draw pile, the seat's own draw pile is shuffled. Won piles keep their
    sizes (which played cards each holds does not matter to the rules)."""
    seat = int(obs["seat"])
    opponent = 1 - seat
    state = WesternShowdownState(int(obs["best_of"]))
    state.game_number = int(obs["game_number"])
    state.games_won = [int(g) for g in obs["games_won"]]
    state.results = [
        (int(g["start_player"]), int(g["winner"]), int(g["cards_won"][0]), int(g["cards_won"][1]))
        for g in obs["previous_games"]
    ]
    state.start_player = int(obs["start_player"])
    state.reputation = int(obs["reputation"])
    state.blocked = [bool(b) for b in obs["pass_blocked"]]
    state.turn = int(obs["to_play"])
    state.locations = [int(loc["id"]) for loc in obs["locations"]]
    state.slot_of = [-1] * 7
    for slot, location in enumerate(state.locations):
        state.slot_of[location] = slot
    state.stacks = [[int(c["id"]) for c in loc["stack"]] for loc in obs["locations"]]
    state.bulletproof = 0
    for loc in obs["locations"]:
        for c in loc["stack"]:
            if c["bulletproof"]:
                state.bulletproof |= 1 << int(c["id"])
    state.played = [[int(c) for c in p] for p in obs["played"]]
    on_table = {c for stack in state.stacks for c in stack}
    gone = [c for p in state.played for c in p if c not in on_table]
    sizes = [int(k) for k in obs["won_sizes"]]
    state.won = [gone[: sizes[0]], gone[sizes[0] :]]
    mine = [int(c["id"]) for c in obs["hand"]]
    my_draw = [int(c["id"]) for c in obs["draw_pile"]]
    state.hands = [[], []]
    state.draw = [[], []]
    state.discards = [[], []]
    state.hands[seat] = sorted(mine)
    state.draw[seat] = my_draw
    placed = set(state.played[seat]) | set(mine) | set(my_draw)
    state.discards[seat] = [c for c in DECKS[seat] if c not in placed]
    unseen = [c for c in DECKS[opponent] if c not in set(state.played[opponent])]
    hand_size = int(obs["hand_sizes"][opponent])
    state.hands[opponent] = sorted(unseen[:hand_size])
    state.draw[opponent] = unseen[hand_size:]
    phase = _PHASE_OF_KIND[str(obs["decision"])]
    pending = obs["pending"]
    if pending is not None:
        state.pending_card = int(pending["card"]["id"])
        state.pending_slot = state.slot_of[int(pending["location"])]
        if "picked" in pending:
            state.picked = int(pending["picked"]["id"])
            if phase == _CHEAT1:
                phase = _CHEAT2
    state._phase = phase
    discards = [int(d) for d in obs["mulligan_discards"]]
    if phase == _MULLIGAN:
        # Seats mulligan in turn, the starting seat first; an unfinished one shows -1.
        state.mulligans = [-1, -1]
        if seat != state.start_player:
            state.mulligans[opponent] = discards[opponent]
    else:
        state.mulligans = discards
    state._legal = None
    return state.resample_hidden(seat, rng)


def _new_game(num_players: int, options: Options) -> WesternShowdownState:
    best_of = int(options.get("best_of", 1))
    if best_of not in (1, 3):
        raise GameOptionError(f"option best_of={best_of}: expected 1 or 3")
    return WesternShowdownState(best_of)


GAME = GameSpec(
    id="western-showdown-v1",
    name="Western Legends: Showdown",
    min_players=2,
    max_players=2,
    # The phase table lists the chance kinds first, then the seat kinds (CHEAT_PICK twice).
    decision_kinds=tuple(dict.fromkeys(_KINDS[4:-1])),
    chance_kinds=_KINDS[:4],
    lower_score_is_better=False,
    max_length=800,
    factory=_new_game,
    from_observation=from_observation,
    options=(
        OptionSpec(
            "best_of",
            1,
            "1 = one game, score = cards won; 3 = best of three, score = games won",
            choices=(1, 3),
        ),
    ),
    summary="2 players place cards at 3 western locations to win their stacks",
)
WesternShowdownState.spec = GAME
