"""Western Legends: Showdown, typed for bot authors (tables and kind names are the engine's).

Card ids 0..17: seat 0 red = 0..8, seat 1 black = 9..17, values 1,1,1,2,3,4,5,6,7 in id
order; :func:`card` builds any card from its id. Location ids 0..6: Saloon, Sheriff's
Office, Doctor's Office, Mine, Ranch, Cabaret, Bandit Hideout. A stack is bottom first.

Actions by decision kind:

* MULLIGAN: :class:`Card` (discard it) or :data:`DONE`.
* TURN: :class:`Place` or :data:`PASS`; DETERMINATION_EXTRA: :class:`Place` or :data:`SKIP`.
* ACTIVATE, WALLOP_SECOND: ``True`` / ``False``.
* SADDLE_DEST, STICK_DEST: a location id (int).
* STICK_SOURCE, CHEAT_PICK: :class:`Pick` (a card on the table and where it lies).

Helpers: :func:`condition_met`, :func:`stack_winner`, :func:`activates`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

# One source of truth for the tables and kind names: the engine's (pure Python, no deps).
from saloon.games.western_showdown.cards import (
    ABILITIES,
    CABARET,
    COLOURS,
    DOCTOR,
    HIDEOUT,
    LOCATION_NAMES,
    MINE,
    RANCH,
    SALOON,
    SHERIFF,
    VALUES,
)
from saloon.games.western_showdown.engine import (
    ACTIVATE,
    CHEAT_PICK,
    DETERMINATION_EXTRA,
    MULLIGAN,
    SADDLE_DEST,
    STICK_DEST,
    STICK_SOURCE,
    TURN,
    WALLOP_SECOND,
)


class Ability(IntEnum):
    """A card's ability; its value is the card value that carries it (a 7 is LIVING_LEGEND),
    so ``card.ability == LIVING_LEGEND`` and ``card.value == LIVING_LEGEND`` both hold."""

    WALLOP = 1
    DETERMINATION = 2
    BULLETPROOF = 3
    SADDLE_UP = 4
    STICK_EM_UP = 5
    CHEAT = 6
    LIVING_LEGEND = 7

    @property
    def label(self) -> str:
        """The name printed on the card (``STICK 'EM UP``)."""
        return ABILITIES[self.value]

    def __str__(self) -> str:
        return self.label


WALLOP = Ability.WALLOP
DETERMINATION = Ability.DETERMINATION
BULLETPROOF = Ability.BULLETPROOF
SADDLE_UP = Ability.SADDLE_UP
STICK_EM_UP = Ability.STICK_EM_UP
CHEAT = Ability.CHEAT
LIVING_LEGEND = Ability.LIVING_LEGEND

__all__ = [
    "ABILITIES",
    "ACTIVATE",
    "BULLETPROOF",
    "CABARET",
    "CHEAT",
    "CHEAT_PICK",
    "COLOURS",
    "DETERMINATION",
    "DETERMINATION_EXTRA",
    "DOCTOR",
    "DONE",
    "HIDEOUT",
    "LIVING_LEGEND",
    "LOCATION_NAMES",
    "MINE",
    "MULLIGAN",
    "PASS",
    "RANCH",
    "SADDLE_DEST",
    "SADDLE_UP",
    "SALOON",
    "SHERIFF",
    "SKIP",
    "STICK_DEST",
    "STICK_EM_UP",
    "STICK_SOURCE",
    "TURN",
    "VALUES",
    "WALLOP",
    "WALLOP_SECOND",
    "Ability",
    "Card",
    "Done",
    "GameResult",
    "Location",
    "Observation",
    "Pass",
    "Pending",
    "Pick",
    "Place",
    "Skip",
    "activates",
    "card",
    "condition_met",
    "deck_of",
    "decode_action",
    "decode_observation",
    "stack_winner",
]


@dataclass(frozen=True, order=True)
class Card:
    """One card; ordered by id. ``owner`` is the seat whose colour it is."""

    #: The card id, 0-17 (red 0-8, black 9-17).
    id: int
    #: ``red`` (seat 0) or ``black`` (seat 1).
    colour: str
    #: The card's value, 1-7.
    value: int
    #: The card's ability (an :class:`Ability`; its value is the card's value).
    ability: Ability
    #: The seat whose colour the card is (0 red, 1 black).
    owner: int

    def __str__(self) -> str:
        return f"{self.colour} {self.value} ({self.ability.label}, #{self.id})"


_CARDS = tuple(
    Card(c, COLOURS[c // 9], VALUES[c % 9], Ability(VALUES[c % 9]), c // 9) for c in range(18)
)


def card(card_id: int) -> Card:
    """The card with this id (0..17)."""
    return _CARDS[card_id]


def deck_of(seat: int) -> tuple[Card, ...]:
    """A seat's 9 cards (seat 0 red, seat 1 black)."""
    return _CARDS[9 * seat : 9 * seat + 9]


@dataclass(frozen=True)
class Place:
    """Place ``card`` from hand at location ``location`` (an id 0..6)."""

    #: The card to place from your hand.
    card: Card
    #: The location id (0-6) to place it at.
    location: int


@dataclass(frozen=True)
class Pick:
    """A card on the table: ``location`` id and ``position`` in its stack (0 = bottom)."""

    #: The card picked on the table.
    card: Card
    #: The id of the location whose stack holds it (the module's location constants).
    location: int
    #: Its place in that stack, 0 = the bottom card.
    position: int


@dataclass(frozen=True)
class Pass:
    """TURN: pass the REPUTATION card instead of playing."""


@dataclass(frozen=True)
class Skip:
    """DETERMINATION_EXTRA: play no extra card."""


@dataclass(frozen=True)
class Done:
    """MULLIGAN: discard no more cards."""


PASS = Pass()
SKIP = Skip()
DONE = Done()


@dataclass(frozen=True)
class Location:
    """A location on the table and its stack (bottom first)."""

    #: The location id, 0-6 (``SALOON`` ... ``HIDEOUT``).
    id: int
    #: The location's name.
    name: str
    #: What its stack needs for the placing seat to take it, in words.
    condition: str
    #: The cards placed here, bottom first.
    stack: tuple[Card, ...]
    #: Ids of activated BULLETPROOF cards in the stack.
    bulletproof: frozenset[int]

    @property
    def top(self) -> Card | None:
        """The top card, or None when the stack is empty."""
        return self.stack[-1] if self.stack else None

    def open_to(self, seat: int) -> bool:
        """True if ``seat`` may place a card here from hand (no opponent BULLETPROOF on top)."""
        top = self.top
        return top is None or top.owner == seat or top.id not in self.bulletproof


@dataclass(frozen=True)
class Pending:
    """The card whose ability is resolving, where it lies, and a first pick if any."""

    #: The card whose ability is resolving.
    card: Card
    #: The location id where it lies.
    location: int
    #: The first card picked by a two-step ability, if any.
    picked: Card | None


@dataclass(frozen=True)
class GameResult:
    """A finished game of a best-of-3 match."""

    #: The seat that started that game.
    start_player: int
    #: The seat that won it.
    winner: int
    #: How many cards each seat won in it.
    cards_won: tuple[int, int]


@dataclass(frozen=True)
class Observation:
    """What one seat sees (see docs/rules/western-showdown.md)."""

    #: Your seat number (0 red, 1 black).
    seat: int
    #: How many seats play (always 2).
    num_seats: int
    #: Games in the match: 1 or 3 (the ``best_of`` option).
    best_of: int
    #: The current game of the match, from 1.
    game_number: int
    #: Games each seat has won so far.
    games_won: tuple[int, ...]
    #: The finished games of this match.
    previous_games: tuple[GameResult, ...]
    #: The seat that started the current game.
    start_player: int
    #: Your cards in hand.
    hand: tuple[Card, ...]
    #: How many cards each seat holds.
    hand_sizes: tuple[int, ...]
    #: The seat's own draw pile, by id (its order is unknown).
    draw_pile: tuple[Card, ...]
    #: How many cards are in each seat's draw pile.
    draw_pile_sizes: tuple[int, ...]
    #: How many cards each seat discarded at the mulligan.
    mulligan_discards: tuple[int, ...]
    #: The three locations on the table, in table order.
    locations: tuple[Location, ...]
    #: How many cards each seat has won this game.
    won_sizes: tuple[int, ...]
    #: Cards each seat has placed from hand this game, in order.
    played: tuple[tuple[Card, ...], ...]
    #: The seat holding the REPUTATION card (it wins a tie).
    reputation: int
    #: For each seat, True when it may not pass this turn.
    pass_blocked: tuple[bool, ...]
    #: The ability being resolved, if any.
    pending: Pending | None
    #: The seat to decide now.
    to_play: int
    #: The pending decision kind.
    decision: str

    def location(self, location_id: int) -> Location:
        """The location on the table with this id."""
        for loc in self.locations:
            if loc.id == location_id:
                return loc
        raise KeyError(location_id)

    @property
    def opponent(self) -> int:
        """The other seat."""
        return 1 - self.seat

    def opponent_unseen(self) -> tuple[Card, ...]:
        """The opponent's cards not yet placed: its hand and draw pile, in some order."""
        played = set(self.played[self.opponent])
        return tuple(c for c in deck_of(self.opponent) if c not in played)


def condition_met(location: int, stack: Sequence[Card]) -> bool:
    """True when ``stack`` (bottom first) meets the win condition of location ``location``."""
    values = [c.value for c in stack]
    if location == SALOON:
        return values.count(1) >= 3
    if location == SHERIFF:
        red = sum(1 for c in stack if c.owner == 0)
        return red >= 2 and len(stack) - red >= 2
    if location == DOCTOR:
        return len(set(values)) >= 4
    if location == MINE:
        run, previous = 0, -1
        for c in stack:
            run = run + 1 if c.owner == previous else 1
            previous = c.owner
            if run >= 3:
                return True
        return False
    if location == RANCH:
        return sum(values) > 11
    if location == CABARET:
        return 1 in values and 5 in values and 6 in values
    if location == HIDEOUT:
        return len(stack) >= 4 and sum(values) < 11
    raise ValueError(f"no location {location}")


def stack_winner(stack: Sequence[Card]) -> int:
    """End scoring: owner of the highest card, the one nearer the top on equal values."""
    best, winner = -1, -1
    for c in reversed(stack):
        if c.value > best:
            best, winner = c.value, c.owner
    return winner


def activates(placed: Card, stack: Sequence[Card]) -> bool:
    """True if placing ``placed`` on ``stack`` (before it) would activate its ability."""
    return not stack or placed.value > stack[-1].value


def _cards(items: Sequence[Any]) -> tuple[Card, ...]:
    return tuple(_CARDS[int(c["id"])] for c in items)


def decode_observation(raw: dict[str, Any]) -> Observation:
    """The typed observation from its JSON form."""
    locations = tuple(
        Location(
            id=int(loc["id"]),
            name=str(loc["name"]),
            condition=str(loc["condition"]),
            stack=_cards(loc["stack"]),
            bulletproof=frozenset(int(c["id"]) for c in loc["stack"] if c.get("bulletproof")),
        )
        for loc in raw["locations"]
    )
    pending = None
    if raw.get("pending"):
        p = raw["pending"]
        picked = p.get("picked")
        pending = Pending(
            card=_CARDS[int(p["card"]["id"])],
            location=int(p["location"]),
            picked=_CARDS[int(picked["id"])] if picked else None,
        )
    return Observation(
        seat=int(raw["seat"]),
        num_seats=int(raw["num_players"]),
        best_of=int(raw["best_of"]),
        game_number=int(raw["game_number"]),
        games_won=tuple(int(x) for x in raw["games_won"]),
        previous_games=tuple(
            GameResult(
                int(g["start_player"]),
                int(g["winner"]),
                (int(g["cards_won"][0]), int(g["cards_won"][1])),
            )
            for g in raw["previous_games"]
        ),
        start_player=int(raw["start_player"]),
        hand=_cards(raw["hand"]),
        hand_sizes=tuple(int(x) for x in raw["hand_sizes"]),
        draw_pile=_cards(raw["draw_pile"]),
        draw_pile_sizes=tuple(int(x) for x in raw["draw_pile_sizes"]),
        mulligan_discards=tuple(int(x) for x in raw["mulligan_discards"]),
        locations=locations,
        won_sizes=tuple(int(x) for x in raw["won_sizes"]),
        played=tuple(tuple(_CARDS[int(c)] for c in p) for p in raw["played"]),
        reputation=int(raw["reputation"]),
        pass_blocked=tuple(bool(x) for x in raw["pass_blocked"]),
        pending=pending,
        to_play=int(raw["to_play"]),
        decision=str(raw["decision"]),
    )


Action = Card | Place | Pick | Pass | Skip | Done | bool | int


def decode_action(kind: str, raw: Any) -> Action:
    """The typed action of a decision kind from its JSON form (see the module docstring)."""
    if "pass" in raw:
        return PASS
    if "skip" in raw:
        return SKIP
    if "done" in raw:
        return DONE
    if "yes" in raw:
        return bool(raw["yes"])
    if "position" in raw:
        return Pick(_CARDS[int(raw["card"])], int(raw["location"]), int(raw["position"]))
    if "card" in raw:
        if "location" in raw:
            return Place(_CARDS[int(raw["card"])], int(raw["location"]))
        return _CARDS[int(raw["card"])]
    return int(raw["location"])


# -- the wire JSON (saloon.sdk.schema): what every language's runtime decodes ---------------
from saloon.sdk.schema import BOOL, INT, STR, Enum, Field, GameWire, ListOf, Nullable, Obj  # noqa: E402

_CARD_FIELDS = (
    Field("id", INT, "The card id, 0-17 (red 0-8, black 9-17)."),
    Field("colour", Enum("Colour", COLOURS, "A seat's colour."), "red (seat 0) or black (seat 1)."),
    Field("value", INT, "The card's value, 1-7."),
    Field(
        "ability",
        Enum("AbilityName", tuple(a for a in ABILITIES if a), "An ability's name."),
        "The ability the card carries, by its printed name.",
    ),
    Field("owner", INT, "The seat whose colour it is."),
)
_CARD = Obj("Card", "One card.", _CARD_FIELDS)
_STACKED = Obj(
    "StackCard",
    "A card in a location's stack.",
    (*_CARD_FIELDS, Field("bulletproof", BOOL, "An activated BULLETPROOF card.")),
)
_ACTION_CARD = Field("card", INT, "The card id.")
_LOCATION = Field("location", INT, "The location id (0-6).")
_PICK = Obj(
    "Pick",
    "A card on the table and where it lies.",
    (_ACTION_CARD, _LOCATION, Field("position", INT, "Its place in the stack, 0 = bottom.")),
)
_PLACE = Obj("Place", "Place a card from hand at a location.", (_ACTION_CARD, _LOCATION))
#: The wire schema of Western Legends: Showdown (docs/rules/western-showdown.md).
WIRE = GameWire(
    "western-showdown-v1",
    "Western Legends: Showdown: location battles, 2 seats",
    Obj(
        "Observation",
        "What one seat sees (docs/rules/western-showdown.md).",
        (
            Field("seat", INT, "Your seat (0 red, 1 black)."),
            Field("num_players", INT, "Always 2."),
            Field("best_of", INT, "Games in the match: 1 or 3."),
            Field("game_number", INT, "The current game of the match, from 1."),
            Field("games_won", ListOf(INT), "Games each seat has won so far."),
            Field(
                "previous_games",
                ListOf(
                    Obj(
                        "GameResult",
                        "A finished game of the match.",
                        (
                            Field("start_player", INT, "The seat that started it."),
                            Field("winner", INT, "The seat that won it."),
                            Field("cards_won", ListOf(INT), "Cards each seat won in it."),
                        ),
                    )
                ),
                "The finished games of this match.",
            ),
            Field("start_player", INT, "The seat that started the current game."),
            Field("hand", ListOf(_CARD), "Your cards in hand."),
            Field("hand_sizes", ListOf(INT), "How many cards each seat holds."),
            Field("draw_pile", ListOf(_CARD), "Your draw pile, by id (its order is unknown)."),
            Field("draw_pile_sizes", ListOf(INT), "Cards in each seat's draw pile."),
            Field("mulligan_discards", ListOf(INT), "Cards each seat discarded at the mulligan."),
            Field(
                "locations",
                ListOf(
                    Obj(
                        "Location",
                        "A location on the table and its stack.",
                        (
                            Field("id", INT, "The location id, 0-6."),
                            Field("name", STR, "Its name."),
                            Field("condition", STR, "What its stack needs, in words."),
                            Field("stack", ListOf(_STACKED), "Its cards, bottom first."),
                        ),
                    )
                ),
                "The three locations on the table, in table order.",
            ),
            Field("won_sizes", ListOf(INT), "Cards each seat has won this game."),
            Field("played", ListOf(ListOf(INT)), "Card ids each seat placed this game, in order."),
            Field("reputation", INT, "The seat holding the REPUTATION card (it wins a tie)."),
            Field("pass_blocked", ListOf(BOOL), "Per seat, True when it may not pass this turn."),
            Field(
                "pending",
                Nullable(
                    Obj(
                        "Pending",
                        "The ability being resolved.",
                        (
                            Field("card", _CARD, "The card whose ability resolves."),
                            Field("location", INT, "The location id where it lies."),
                            Field("picked", _CARD, "A first pick of a two-step ability.", True),
                        ),
                    )
                ),
                "The ability being resolved, if any.",
            ),
            Field("to_play", INT, "The seat to decide now."),
            Field("decision", STR, "The pending decision kind."),
        ),
    ),
    {
        "MULLIGAN": Obj(
            "Mulligan",
            "Discard a card ({card}) or stop ({done: true}).",
            (
                Field("card", INT, "The card id to discard.", True),
                Field("done", BOOL, "Discard no more.", True),
            ),
        ),
        "TURN": Obj(
            "Turn",
            "Place a card ({card, location}) or pass the REPUTATION card ({pass: true}).",
            (
                Field("card", INT, "The card id.", True),
                Field("location", INT, "The location id.", True),
                Field("pass", BOOL, "Pass instead of playing.", True),
            ),
        ),
        "DETERMINATION_EXTRA": Obj(
            "DeterminationExtra",
            "Place an extra card ({card, location}) or none ({skip: true}).",
            (
                Field("card", INT, "The card id.", True),
                Field("location", INT, "The location id.", True),
                Field("skip", BOOL, "Play no extra card.", True),
            ),
        ),
        "ACTIVATE": Obj("Activate", "Activate the ability or not.", (Field("yes", BOOL, "Yes."),)),
        "WALLOP_SECOND": Obj(
            "WallopSecond", "Take a second card or not.", (Field("yes", BOOL, "Yes."),)
        ),
        "SADDLE_DEST": Obj("SaddleDest", "Move the card to this location.", (_LOCATION,)),
        "STICK_DEST": Obj("StickDest", "Move the picked card to this location.", (_LOCATION,)),
        "STICK_SOURCE": _PICK,
        "CHEAT_PICK": _PICK,
    },
)
