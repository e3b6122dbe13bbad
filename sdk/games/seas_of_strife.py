"""Seas of Strife, typed for bot authors.

A card is its number (0-74); its colour follows from the number. ``Observation`` is what a
seat sees; PLAY_CARD actions are :class:`Card`, CHOOSE_LEADER actions are seat numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from saloon.games.seas_of_strife.engine import (
    COLOUR_OF,
    COLOURS,
    RANGES,
    TOP_CARDS,
    trick_winner_index,
)

PLAY_CARD = "PLAY_CARD"
CHOOSE_LEADER = "CHOOSE_LEADER"

__all__ = [
    "CHOOSE_LEADER",
    "COLOURS",
    "PLAY_CARD",
    "Card",
    "Observation",
    "Play",
    "Trick",
    "card",
    "decode_action",
    "decode_observation",
    "winner_of",
]


@dataclass(frozen=True, order=True)
class Card:
    """One card; ordered by number."""

    #: The card's number, 0-74; its colour and rank follow from it.
    number: int

    @property
    def colour(self) -> str:
        """The card's colour name (black, red, blue, brown, green, yellow, purple, grey)."""
        return COLOURS[COLOUR_OF[self.number]]

    @property
    def colour_index(self) -> int:
        """The colour as an index into COLOURS."""
        return COLOUR_OF[self.number]

    @property
    def rank(self) -> int:
        """Position within its colour: 0 for the lowest card of the colour."""
        return self.number - RANGES[COLOUR_OF[self.number]][0]

    @property
    def is_top(self) -> bool:
        """True for the top card of its colour (winning with it picks the next leader)."""
        return self.number in TOP_CARDS

    def __str__(self) -> str:
        return f"{self.number} {self.colour}"


@dataclass(frozen=True)
class Play:
    """A card played into a trick by a seat."""

    #: The seat that played the card.
    seat: int
    #: The card played.
    card: Card


@dataclass(frozen=True)
class Trick:
    """A completed trick of the current hand."""

    #: The seat that led the trick.
    leader: int
    #: The cards played, in play order.
    plays: tuple[Play, ...]
    #: The seat that took the trick.
    winner: int


def winner_of(cards: Sequence[Card]) -> int:
    """Index of the card that takes a trick of these cards (in play order)."""
    return trick_winner_index([c.number for c in cards])


@dataclass(frozen=True)
class Observation:
    """What one seat sees."""

    #: Your seat number.
    seat: int
    #: How many seats play.
    num_seats: int
    #: The hand being played, from 1.
    hand_number: int
    #: Your cards, in number order.
    hand: tuple[Card, ...]
    #: How many cards each seat holds.
    hand_sizes: tuple[int, ...]
    #: The seat that led (or leads) the current trick.
    leader: int
    #: The cards played into the current trick so far, in play order.
    trick: tuple[Play, ...]
    #: The tricks completed this hand, in order.
    completed_tricks: tuple[Trick, ...]
    #: How many tricks each seat has taken this hand.
    tricks_taken: tuple[int, ...]
    #: Each seat's points so far (one per trick taken; fewest points wins).
    points: tuple[int, ...]
    #: The game ends after the hand in which a seat reaches this many points.
    end_threshold: int
    #: The seat to decide now.
    to_play: int
    #: The pending decision kind (``PLAY_CARD`` or ``CHOOSE_LEADER``).
    decision: str

    def trick_colours(self) -> set[str]:
        """Colours already in the current trick (a follower must match one if it can)."""
        return {p.card.colour for p in self.trick}

    def played_cards(self) -> set[Card]:
        """Every card seen this hand: completed tricks and the current trick."""
        seen = {p.card for t in self.completed_tricks for p in t.plays}
        seen.update(p.card for p in self.trick)
        return seen

    def would_win(self, card: Card) -> bool:
        """True if ``card`` would take the trick as it stands now (later plays may change it)."""
        cards = [p.card for p in self.trick] + [card]
        return winner_of(cards) == len(cards) - 1

    def seats_still_to_play(self) -> int:
        """How many seats play into the current trick after this one."""
        return self.num_seats - len(self.trick) - 1


#: Every card, built once: decoding looks cards up instead of constructing them (building
#: a frozen dataclass per card of every observation is what decoding would cost otherwise).
_CARDS: list[Card] = [Card(n) for n in range(75)]
_PLAYS: dict[tuple[int, int], Play] = {}


def card(number: int) -> Card:
    """The Card with this number (shared instance); ValueError for a number that is none."""
    if not 0 <= number < 75 or COLOUR_OF[number] < 0:
        raise ValueError(f"{number!r} is not a Seas of Strife card")
    return _CARDS[number]


def _play(seat: int, number: int) -> Play:
    key = (seat, number)
    play = _PLAYS.get(key)
    if play is None:
        play = _PLAYS[key] = Play(int(seat), card(int(number)))
    return play


#: Completed tricks repeat in every observation of a hand: decode each one once.
_TRICKS: dict[tuple[int, int, tuple[int, ...], int], Trick] = {}
_TRICK_CACHE_SIZE = 4096


def _trick(n: int, leader: int, cards: list[int], winner: int) -> Trick:
    key = (n, leader, tuple(cards), winner)
    trick = _TRICKS.get(key)
    if trick is None:
        if len(_TRICKS) >= _TRICK_CACHE_SIZE:
            _TRICKS.clear()
        plays = tuple(_play((leader + i) % n, c) for i, c in enumerate(cards))
        trick = _TRICKS[key] = Trick(int(leader), plays, int(winner))
    return trick


def _plays(items: Iterable[dict[str, Any]]) -> tuple[Play, ...]:
    return tuple(_play(p["seat"], p["card"]) for p in items)


def decode_observation(raw: dict[str, Any]) -> Observation:
    """The typed observation from its JSON form."""
    n = int(raw["num_players"])
    completed = tuple(
        _trick(n, t["leader"], t["cards"], t["winner"]) for t in raw["completed_tricks"]
    )
    return Observation(
        seat=int(raw["seat"]),
        num_seats=int(raw["num_players"]),
        hand_number=int(raw["hand_number"]),
        hand=tuple(card(c) for c in raw["hand"]),
        hand_sizes=tuple(int(x) for x in raw["hand_sizes"]),
        leader=int(raw["leader"]),
        trick=_plays(raw["trick"]),
        completed_tricks=completed,
        tricks_taken=tuple(int(x) for x in raw["tricks_taken"]),
        points=tuple(int(x) for x in raw["points"]),
        end_threshold=int(raw["end_threshold"]),
        to_play=int(raw["to_play"]),
        decision=str(raw["decision"]),
    )


def decode_action(kind: str, raw: Any) -> Card | int:
    """PLAY_CARD -> Card; CHOOSE_LEADER -> the seat number."""
    if kind == CHOOSE_LEADER:
        return int(raw["seat"])
    return card(raw["card"])


# -- the wire JSON (saloon.sdk.schema): what every language's runtime decodes ---------------
from saloon.sdk.schema import INT, STR, Field, GameWire, ListOf, Obj  # noqa: E402

_PLAYED = Obj(
    "PlayedCard",
    "A card in the trick being played and the seat that played it.",
    (Field("seat", INT, "The seat that played it."), Field("card", INT, "The card number.")),
)
_TRICK = Obj(
    "CompletedTrick",
    "A trick of this hand already won.",
    (
        Field("leader", INT, "The seat that led it."),
        Field("cards", ListOf(INT), "Its card numbers in play order, from the leader's."),
        Field("winner", INT, "The seat that won it."),
    ),
)
#: The wire schema of Seas of Strife (docs/rules/seas-of-strife.md).
WIRE = GameWire(
    "seas-of-strife-v1",
    "Seas of Strife: trick avoidance, 3-6 seats",
    Obj(
        "Observation",
        "What one seat sees. A card is its number (0-74); its colour follows from the "
        "number: black 0-10, red 11-20, blue 21-29, brown 31-38, green 41-47, yellow "
        "51-56, purple 61-65, grey 71-74 (docs/rules/seas-of-strife.md).",
        (
            Field("seat", INT, "Your seat."),
            Field("num_players", INT, "How many seats play."),
            Field("hand_number", INT, "The hand being played, from 1."),
            Field("hand", ListOf(INT), "Your cards, by number, sorted."),
            Field("hand_sizes", ListOf(INT), "How many cards each seat holds."),
            Field("leader", INT, "The seat that leads (or led) the current trick."),
            Field("trick", ListOf(_PLAYED), "The current trick so far, in play order."),
            Field("completed_tricks", ListOf(_TRICK), "This hand's tricks already won."),
            Field("tricks_taken", ListOf(INT), "Tricks each seat has taken this hand."),
            Field("points", ListOf(INT), "Each seat's points so far (lower is better)."),
            Field("end_threshold", INT, "The match ends once a seat reaches these points."),
            Field("to_play", INT, "The seat to decide now."),
            Field("decision", STR, "The pending decision kind (PLAY_CARD, CHOOSE_LEADER)."),
        ),
    ),
    {
        "PLAY_CARD": Obj("PlayCard", "Play this card.", (Field("card", INT, "The card number."),)),
        "CHOOSE_LEADER": Obj(
            "ChooseLeader", "Choose who leads next.", (Field("seat", INT, "The seat."),)
        ),
    },
)
