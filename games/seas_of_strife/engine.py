"""Seas of Strife (``seas-of-strife-v1``): trick avoidance for 3-6 players.

Rules as docs/rules/seas-of-strife.md states them. A card is its own number (0-74), so card
ids and card numbers are the same thing. Actions: PLAY_CARD -> the card number;
CHOOSE_LEADER -> the chosen seat. Chance: DEAL -> a permutation of the deck; seat ``i``
gets the ``i``-th consecutive block of ``hand_size`` cards.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from saloon.games.base import CHANCE, TERMINAL, GameSpec, Json, Options, Outcome, State
from saloon.games.errors import IllegalActionError, NotChanceError

COLOURS = ("black", "red", "blue", "brown", "green", "yellow", "purple", "grey")
#: (lowest, highest) number of each colour, in COLOURS order.
RANGES = ((0, 10), (11, 20), (21, 29), (31, 38), (41, 47), (51, 56), (61, 65), (71, 74))

#: COLOUR_OF[card] -> colour index (-1 for numbers that are no card).
COLOUR_OF: list[int] = [-1] * 75
for _index, (_lo, _hi) in enumerate(RANGES):
    for _card in range(_lo, _hi + 1):
        COLOUR_OF[_card] = _index
#: BIT_OF[card] -> 1 << colour, for colour masks.
BIT_OF: list[int] = [(1 << c) if c >= 0 else 0 for c in COLOUR_OF]
#: The top card of each colour: winning a trick with one lets its player choose the next leader.
TOP_CARDS = frozenset(hi for _lo, hi in RANGES)

FULL_DECK: tuple[int, ...] = tuple(c for c in range(75) if COLOUR_OF[c] >= 0)
#: With 3 players black (0-10) and grey (71-74) are left out.
THREE_PLAYER_DECK: tuple[int, ...] = tuple(c for c in FULL_DECK if COLOUR_OF[c] not in (0, 7))

HAND_SIZE = {3: 15, 4: 15, 5: 12, 6: 10}
#: The game ends after a hand in which someone reached this many points.
END_THRESHOLD = {3: 15, 4: 15, 5: 12, 6: 10}

PLAY_CARD = "PLAY_CARD"
CHOOSE_LEADER = "CHOOSE_LEADER"
DEAL = "DEAL"

_PHASE_DEAL, _PHASE_PLAY, _PHASE_CHOOSE, _PHASE_OVER = range(4)


def colour_name(card: int) -> str:
    """The colour of a card, by name."""
    return COLOURS[COLOUR_OF[card]]


def deck_for(num_players: int) -> tuple[int, ...]:
    """The cards in play for ``num_players`` seats."""
    return THREE_PLAYER_DECK if num_players == 3 else FULL_DECK


def trick_winner_index(cards: Sequence[int]) -> int:
    """Index (in play order) of the card that takes the trick.

    The colour(s) with the most cards in the trick compete; the highest number among
    them wins. Numbers are unique, so the winner always is.
    """
    counts = [0] * 8
    for card in cards:
        counts[COLOUR_OF[card]] += 1
    most = max(counts)
    best = -1
    best_index = -1
    for index, card in enumerate(cards):
        if counts[COLOUR_OF[card]] == most and card > best:
            best = card
            best_index = index
    return best_index


class SeasOfStrifeState(State):
    """A game of Seas of Strife in progress."""

    __slots__ = (
        "_choose_seat",
        "_phase",
        "_to_play",
        "colour_mask",
        "completed",
        "hand_number",
        "hands",
        "leader",
        "num_players",
        "opening_card",
        "points",
        "taken",
        "trick_cards",
        "trick_seats",
    )

    spec: GameSpec

    # The state a playout reads (public, typed and documented: docs/reference/search.md).
    # Read it; change the state only through apply_action / apply_chance.
    #: The seat count.
    num_players: int
    #: Each seat's hand, card ids ascending (COLOUR_OF[card]: its colour).
    hands: list[list[int]]
    #: Each seat's points so far (fewest best); a hand's tricks are added when it ends.
    points: list[int]
    #: Tricks taken by each seat in the current hand.
    taken: list[int]
    #: The hand being played, from 1.
    hand_number: int
    #: The seats that played to the current trick, in play order.
    trick_seats: list[int]
    #: The current trick's cards, in play order (empty: a lead is due).
    trick_cards: list[int]
    #: Completed tricks of the current hand: (leader, cards in play order, winner).
    completed: list[tuple[int, tuple[int, ...], int]]
    #: The seat that led (or leads) the current trick.
    leader: int
    #: The card that must open the next trick (first trick of a hand), else -1.
    opening_card: int
    #: The colours in the current trick, one bit each (BIT_OF[card]); 0 when it is empty.
    #: A seat holding a card of one of them must play one (``legal_actions``).
    colour_mask: int

    def __init__(self, num_players: int) -> None:
        self.num_players = num_players
        self.hands = [[] for _ in range(num_players)]
        self.points = [0] * num_players
        self.taken = [0] * num_players
        self.hand_number = 0
        self.trick_seats = []
        self.trick_cards = []
        self.completed = []
        self.leader = 0
        self.opening_card = -1
        self._phase = _PHASE_DEAL
        self._to_play = 0
        self._choose_seat = -1
        self.colour_mask = 0
        self._legal: list[int] | None = None

    @classmethod
    def position(
        cls,
        hands: Sequence[Sequence[int]],
        leader: int,
        *,
        trick: Sequence[int] = (),
        points: Sequence[int] | None = None,
        taken: Sequence[int] | None = None,
        first_trick: bool = False,
        hand_number: int = 1,
    ) -> SeasOfStrifeState:
        """A hand-built position: ``hands`` per seat, the trick so far (led by ``leader``).

        For puzzles, tests and bots that search. With ``first_trick`` the trick is the
        hand's first, whose lead is forced. Cards not in a hand or the trick count as
        already played (the ``cards()`` zones then do not add up to the deck).
        """
        n = len(hands)
        state = cls(n)
        state.hands = [sorted(h) for h in hands]
        state.points = list(points) if points is not None else [0] * n
        state.taken = list(taken) if taken is not None else [0] * n
        state.hand_number = hand_number
        state.leader = leader
        state.trick_seats = [(leader + i) % n for i in range(len(trick))]
        state.trick_cards = list(trick)
        for card in trick:
            state.colour_mask |= BIT_OF[card]
        state.opening_card = (11 if n == 3 else 0) if first_trick and not trick else -1
        state._to_play = (leader + len(trick)) % n
        state._phase = _PHASE_PLAY
        return state

    # -- whose turn -------------------------------------------------------------------
    def current_player(self) -> int:
        phase = self._phase
        if phase == _PHASE_PLAY:
            return self._to_play
        if phase == _PHASE_CHOOSE:
            return self._choose_seat
        if phase == _PHASE_DEAL:
            return CHANCE
        return TERMINAL

    def decision_kind(self) -> str:
        return ("DEAL", PLAY_CARD, CHOOSE_LEADER, "")[self._phase]

    # -- seat decisions ---------------------------------------------------------------
    def _compute_legal(self) -> list[int]:
        phase = self._phase
        if phase == _PHASE_PLAY:
            hand = self.hands[self._to_play]
            if not self.trick_cards:
                if self.opening_card >= 0:
                    return [self.opening_card]
                return list(hand)
            mask = self.colour_mask
            follow = [c for c in hand if BIT_OF[c] & mask]
            return follow if follow else list(hand)
        if phase == _PHASE_CHOOSE:
            return list(range(self.num_players))
        return []

    def _apply(self, action: int) -> None:
        if self._phase == _PHASE_CHOOSE:
            self.leader = self._to_play = action
            self._phase = _PHASE_PLAY
            return
        self._play(action)

    def _play(self, card: int) -> None:
        seat = self._to_play
        self.hands[seat].remove(card)
        self.trick_seats.append(seat)
        self.trick_cards.append(card)
        self.colour_mask |= BIT_OF[card]
        self.opening_card = -1
        n = self.num_players
        if len(self.trick_cards) < n:
            self._to_play = (seat + 1) % n
            return
        # The trick is complete.
        index = trick_winner_index(self.trick_cards)
        winner = self.trick_seats[index]
        winning_card = self.trick_cards[index]
        self.taken[winner] += 1
        self.completed.append((self.leader, tuple(self.trick_cards), winner))
        self._emit("trick", winner=winner, cards=list(self.trick_cards))
        self.trick_seats = []
        self.trick_cards = []
        self.colour_mask = 0
        if not self.hands[winner]:
            self._end_hand()
        elif winning_card in TOP_CARDS:
            self._phase = _PHASE_CHOOSE
            self._choose_seat = winner
        else:
            self.leader = self._to_play = winner

    def _end_hand(self) -> None:
        for seat, tricks in enumerate(self.taken):
            self.points[seat] += tricks
        self._emit("hand_scored", tricks=list(self.taken), points=list(self.points))
        if max(self.points) >= END_THRESHOLD[self.num_players]:
            self._phase = _PHASE_OVER
        else:
            self._phase = _PHASE_DEAL

    def action_to_json(self, action: int) -> Json:
        if self._phase == _PHASE_CHOOSE:
            return {"seat": action}
        return {"card": action}

    def action_to_string(self, action: int) -> str:
        if self._phase == _PHASE_CHOOSE:
            return f"seat {action} leads"
        return f"{action} {colour_name(action)}" if 0 <= action < 75 else str(action)

    # -- chance -----------------------------------------------------------------------
    def sample_chance(self, rng: random.Random) -> Outcome:
        if self._phase != _PHASE_DEAL:
            raise NotChanceError("no chance event is pending")
        deck = list(deck_for(self.num_players))
        rng.shuffle(deck)
        return tuple(deck)

    def apply_chance(self, outcome: Sequence[int]) -> None:
        if self._phase != _PHASE_DEAL:
            raise NotChanceError("no chance event is pending")
        deck = deck_for(self.num_players)
        cards = tuple(outcome)
        if sorted(cards) != list(deck):
            raise IllegalActionError("a DEAL outcome must be a permutation of the deck")
        size = HAND_SIZE[self.num_players]
        opening = 11 if self.num_players == 3 else 0
        self.hands = [sorted(cards[i * size : (i + 1) * size]) for i in range(self.num_players)]
        self.taken = [0] * self.num_players
        self.completed = []
        self.hand_number += 1
        self.opening_card = opening
        holder = next(i for i, hand in enumerate(self.hands) if opening in hand)
        self.leader = self._to_play = holder
        self._phase = _PHASE_PLAY
        self._legal = None

    def outcome_to_string(self, outcome: Sequence[int]) -> str:
        size = HAND_SIZE[self.num_players]
        blocks = (
            " ".join(str(c) for c in sorted(outcome[i * size : (i + 1) * size]))
            for i in range(self.num_players)
        )
        return " | ".join(blocks)

    # -- information ------------------------------------------------------------------
    def observation(self, seat: int) -> dict[str, Json]:
        return {
            "seat": seat,
            "num_players": self.num_players,
            "hand_number": self.hand_number,
            "hand": list(self.hands[seat]),
            "hand_sizes": [len(h) for h in self.hands],
            "leader": self.leader,
            "trick": [
                {"seat": s, "card": c}
                for s, c in zip(self.trick_seats, self.trick_cards, strict=True)
            ],
            "completed_tricks": [
                {"leader": leader, "cards": list(cards), "winner": winner}
                for leader, cards, winner in self.completed
            ],
            "tricks_taken": list(self.taken),
            "points": list(self.points),
            "end_threshold": END_THRESHOLD[self.num_players],
            "to_play": self.current_player(),
            "decision": self.decision_kind(),
        }

    def voids(self) -> list[int]:
        """Per seat, a colour mask of the colours it has shown it no longer holds this hand
        (it did not follow while a card of that colour was in the trick). Public knowledge."""
        voids = [0] * self.num_players
        tricks = [(leader, cards) for leader, cards, _winner in self.completed]
        tricks.append((self.leader, tuple(self.trick_cards)))
        for leader, cards in tricks:
            mask = 0
            for k, card in enumerate(cards):
                if k and not BIT_OF[card] & mask:
                    voids[(leader + k) % self.num_players] |= mask
                mask |= BIT_OF[card]
        return voids

    def resample_hidden(self, seat: int, rng: random.Random) -> SeasOfStrifeState:
        """Redeal the other seats' cards among them at random, keeping what ``seat`` knows:
        hand sizes, the forced opening card with its holder, and every revealed void."""
        other = self.clone()
        pinned = self.opening_card
        seats = [s for s in range(self.num_players) if s != seat]
        pool = [c for s in seats for c in self.hands[s] if c != pinned]
        voids = self.voids()
        room = {s: len(self.hands[s]) - (pinned in self.hands[s]) for s in seats}
        for _attempt in range(100):
            hands = _deal_respecting_voids(pool, seats, room, voids, rng)
            if hands is not None:
                break
        else:  # vanishingly rare: a deal by matching always exists (the true one does)
            hands = _deal_by_matching(pool, seats, room, voids, rng)
        for s in seats:
            keep = [pinned] if pinned in self.hands[s] else []
            other.hands[s] = sorted(keep + hands[s])
        other._legal = None
        return other

    def cards(self) -> dict[str, list[int]]:
        zones = {f"hand{s}": list(h) for s, h in enumerate(self.hands)}
        zones["trick"] = list(self.trick_cards)
        zones["taken"] = [c for _l, cards, _w in self.completed for c in cards]
        if self._phase == _PHASE_DEAL or (self._phase == _PHASE_OVER and not any(self.hands)):
            # Between hands every card is back in the deck (or out of play at the end).
            in_hands = {c for h in self.hands for c in h}
            zones["deck"] = [c for c in deck_for(self.num_players) if c not in in_hands]
            zones["taken"] = []
        return zones

    # -- results ----------------------------------------------------------------------
    def scores(self) -> list[float]:
        return [float(p) for p in self.points]

    # -- misc -------------------------------------------------------------------------
    def clone(self) -> SeasOfStrifeState:
        other = SeasOfStrifeState.__new__(SeasOfStrifeState)
        other.num_players = self.num_players
        other.hands = [list(h) for h in self.hands]
        other.points = list(self.points)
        other.taken = list(self.taken)
        other.hand_number = self.hand_number
        other.trick_seats = list(self.trick_seats)
        other.trick_cards = list(self.trick_cards)
        other.completed = list(self.completed)
        other.leader = self.leader
        other.opening_card = self.opening_card
        other._phase = self._phase
        other._to_play = self._to_play
        other._choose_seat = self._choose_seat
        other.colour_mask = self.colour_mask
        other._legal = self._legal
        return other

    def render(self) -> str:
        lines = [
            f"hand {self.hand_number}  points {self.points}  tricks this hand {self.taken}",
        ]
        for seat, hand in enumerate(self.hands):
            lines.append(f"  seat {seat}: {' '.join(str(c) for c in hand) or '-'}")
        if self.trick_cards:
            played = ", ".join(
                f"{s}:{c}" for s, c in zip(self.trick_seats, self.trick_cards, strict=True)
            )
            lines.append(f"  trick (led by {self.leader}): {played}")
        player = self.current_player()
        who = {CHANCE: "chance", TERMINAL: "game over"}.get(player, f"seat {player}")
        lines.append(f"  next: {who} {self.decision_kind()}".rstrip())
        return "\n".join(lines)


def _deal_respecting_voids(
    pool: list[int],
    seats: list[int],
    room: dict[int, int],
    voids: list[int],
    rng: random.Random,
) -> dict[int, list[int]] | None:
    """One random deal of ``pool`` into ``room[s]`` cards per seat, no card into a seat void
    in its colour; most constrained cards first; None when this attempt paints itself in."""
    left = dict(room)
    hands: dict[int, list[int]] = {s: [] for s in seats}
    cards = list(pool)
    rng.shuffle(cards)
    if not any(voids[s] for s in seats):  # no void shown yet: any deal will do
        start = 0
        for s in seats:
            hands[s] = cards[start : start + room[s]]
            start += room[s]
        return hands
    eligible = {c: [s for s in seats if not voids[s] & BIT_OF[c]] for c in cards}
    cards.sort(key=lambda c: len(eligible[c]))
    for card in cards:
        options = [s for s in eligible[card] if left[s]]
        if not options:
            return None
        total = sum(left[s] for s in options)
        pick = rng.randrange(total)
        for s in options:
            pick -= left[s]
            if pick < 0:
                break
        hands[s].append(card)
        left[s] -= 1
    return hands


def from_observation(obs: dict[str, Json], rng: random.Random) -> SeasOfStrifeState:
    """A state the observing seat cannot tell apart from the true one, from its observation
    alone (the seat is to decide): the other hands are dealt at random from the cards not
    yet seen, keeping their sizes, the forced opening card with its holder and every void."""
    n = int(obs["num_players"])
    seat = int(obs["seat"])
    state = SeasOfStrifeState(n)
    state.points = [int(p) for p in obs["points"]]
    state.taken = [int(t) for t in obs["tricks_taken"]]
    state.hand_number = int(obs["hand_number"])
    state.leader = int(obs["leader"])
    state.completed = [
        (int(t["leader"]), tuple(int(c) for c in t["cards"]), int(t["winner"]))
        for t in obs["completed_tricks"]
    ]
    state.trick_seats = [int(p["seat"]) for p in obs["trick"]]
    state.trick_cards = [int(p["card"]) for p in obs["trick"]]
    for card in state.trick_cards:
        state.colour_mask |= BIT_OF[card]
    to_play = int(obs["to_play"])
    if obs["decision"] == CHOOSE_LEADER:
        state._phase = _PHASE_CHOOSE
        state._choose_seat = to_play
        state._to_play = to_play
    else:
        state._phase = _PHASE_PLAY
        state._to_play = to_play
    opening = 11 if n == 3 else 0
    if state._phase == _PHASE_PLAY and not state.completed and not state.trick_cards:
        state.opening_card = opening  # the hand's first lead is forced
    sizes = [int(k) for k in obs["hand_sizes"]]
    mine = [int(c) for c in obs["hand"]]
    seen = set(mine) | set(state.trick_cards)
    seen.update(c for _leader, cards, _winner in state.completed for c in cards)
    unseen = [c for c in deck_for(n) if c not in seen]
    # Any placement with the right sizes will do: resample_hidden redeals it properly.
    state.hands = [[] for _ in range(n)]
    state.hands[seat] = sorted(mine)
    if state.opening_card >= 0 and opening in unseen:
        unseen.remove(opening)
        state.hands[state.leader].append(opening)
    it = iter(unseen)
    for s in range(n):
        if s != seat:
            state.hands[s].extend(next(it) for _ in range(sizes[s] - len(state.hands[s])))
    return state.resample_hidden(seat, rng)


def _deal_by_matching(
    pool: list[int],
    seats: list[int],
    room: dict[int, int],
    voids: list[int],
    rng: random.Random,
) -> dict[int, list[int]]:
    """A deal of ``pool`` respecting voids found by augmenting paths (cards to seat slots),
    from a random order; used when random attempts keep failing. IllegalActionError when
    no deal exists (the constraints contradict each other: not a reachable position)."""
    slots = [s for s in seats for _ in range(room[s])]
    owner: list[int] = [-1] * len(slots)  # slot -> index into cards
    cards = list(pool)
    rng.shuffle(cards)
    rng.shuffle(slots)

    def place(i: int, visited: set[int]) -> bool:
        for j, s in enumerate(slots):
            if j in visited or voids[s] & BIT_OF[cards[i]]:
                continue
            visited.add(j)
            if owner[j] < 0 or place(owner[j], visited):
                owner[j] = i
                return True
        return False

    for i in range(len(cards)):
        if not place(i, set()):
            raise IllegalActionError("no deal of the unseen cards respects every void")
    hands: dict[int, list[int]] = {s: [] for s in seats}
    for j, i in enumerate(owner):
        hands[slots[j]].append(cards[i])
    return hands


def _new_game(num_players: int, options: Options) -> SeasOfStrifeState:
    return SeasOfStrifeState(num_players)


GAME = GameSpec(
    id="seas-of-strife-v1",
    name="Seas of Strife",
    min_players=3,
    max_players=6,
    decision_kinds=(PLAY_CARD, CHOOSE_LEADER),
    chance_kinds=(DEAL,),
    lower_score_is_better=True,
    max_length=1000,
    factory=_new_game,
    summary="trick avoidance: take as few tricks as possible; majority colour wins a trick",
    from_observation=from_observation,
)
SeasOfStrifeState.spec = GAME
