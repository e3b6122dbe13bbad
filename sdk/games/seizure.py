"""Seizure, typed for bot authors (rules: docs/rules/seizure.md).

Every card arrives fully described (:class:`Card`: id, kind, colours, number), so a bot
never needs the id table. Decision kinds and their typed actions:

* ``PLAY_CARD`` -> :class:`PlayCard`; ``DRAW`` -> :class:`Draw` or :class:`Pass` (forced,
  one legal action);
* ``GIVE_CARD`` -> :class:`GiveCard`, then ``GIVE_TO`` -> :class:`GiveTo`;
* ``TRADE_PARTNER`` -> :class:`TradePartner`; ``DEAL_SIZE`` -> :class:`DealSize`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The decision kinds are the engine's (one source of truth; pure Python, no deps).
from saloon.games.seizure.engine import (
    DEAL_SIZE,
    DRAW,
    GIVE_CARD,
    GIVE_TO,
    PLAY_CARD,
    TRADE_PARTNER,
)

NUMBER = "number"
TO_THE_LEFT = "to_the_left"
TO_THE_RIGHT = "to_the_right"
DIRECT_TRADE = "direct_trade"
PLUS_THREE = "plus_three"
MINUS_THREE = "minus_three"
SEIZURE_KINDS = frozenset({TO_THE_LEFT, TO_THE_RIGHT, DIRECT_TRADE})
_POINTS = {PLUS_THREE: 3, MINUS_THREE: -3, TO_THE_LEFT: 2, TO_THE_RIGHT: 2, DIRECT_TRADE: 2}

__all__ = [
    "DEAL_SIZE",
    "DIRECT_TRADE",
    "DRAW",
    "GIVE_CARD",
    "GIVE_TO",
    "MINUS_THREE",
    "NUMBER",
    "PLAY_CARD",
    "PLUS_THREE",
    "TO_THE_LEFT",
    "TO_THE_RIGHT",
    "TRADE_PARTNER",
    "Card",
    "DealSize",
    "Draw",
    "Event",
    "GiveCard",
    "GiveTo",
    "KnownCard",
    "LastRound",
    "NothingPlayable",
    "Observation",
    "Pass",
    "PlayCard",
    "TradePartner",
    "decode_action",
    "decode_card",
    "decode_observation",
]


@dataclass(frozen=True, order=True)
class Card:
    """One card; ``colours`` and ``number`` are empty/None for non-number cards."""

    #: The card id, 0-139 (docs/rules/seizure.md has the layout).
    id: int
    #: ``number``, ``to_the_left``, ``to_the_right``, ``direct_trade``, ``plus_three`` or
    #: ``minus_three`` (the module's constants).
    kind: str
    #: A number card's two colours (``red``, ``green``, ...); empty for the other kinds.
    colours: tuple[str, ...] = ()
    #: A number card's value, 1-10; None for the other kinds.
    number: int | None = None

    @property
    def is_number(self) -> bool:
        """A number card (two colours, 1-10)."""
        return self.kind == NUMBER

    @property
    def is_seizure(self) -> bool:
        """To the Left, To the Right or Direct Trade."""
        return self.kind in SEIZURE_KINDS

    @property
    def is_score(self) -> bool:
        """Plus Three or Minus Three: never playable, never keeps you in the round."""
        return self.kind in (PLUS_THREE, MINUS_THREE)

    @property
    def points(self) -> int:
        """What the card scores if it is in your hand when the round ends."""
        return 1 if self.kind == NUMBER else _POINTS[self.kind]

    @property
    def table_value(self) -> int:
        """The reference value this card sets on the table (a 10 counts 0 there)."""
        return (self.number or 0) % 10

    def shares_colour(self, other: Card) -> bool:
        """True if both are number cards with at least one colour in common."""
        return bool(set(self.colours) & set(other.colours))

    def same_pair(self, other: Card) -> bool:
        """True if both are number cards with the same two colours."""
        return self.is_number and set(self.colours) == set(other.colours)

    def __str__(self) -> str:
        if self.is_number:
            return f"{self.number} {'/'.join(self.colours)}"
        return self.kind


@dataclass(frozen=True)
class KnownCard:
    """A card this seat knows to be in another seat's hand."""

    #: The seat whose hand holds the card.
    seat: int
    #: The card.
    card: Card


@dataclass(frozen=True)
class NothingPlayable:
    """What a seat's draw told everyone: it drew (or passed) holding no card playable on
    ``reference`` at ``value`` (Seizure cards included); counting the cards that entered
    and left its hand since, it now holds at most ``at_most`` such cards."""

    #: The card on the discard pile then (the one to play on).
    reference: Card
    #: The value to match then (the reference card's, or the one a +3/-3 made it).
    value: int
    #: The most such playable cards the seat can hold now.
    at_most: int


@dataclass(frozen=True)
class Event:
    """Something that happened this round, as this seat saw it.

    ``type`` is one of deal (seat = dealer, count = hand size), flip (card, to_bottom),
    play (seat, card), draw (seat, card if this seat saw it), pass (seat), reshuffle
    (count), reset, give (seat, to, card if this seat gave or got it), hands_left /
    hands_right (seat who played it), trade (seat, to = partner).
    """

    #: What happened: one of the names above (``deal``, ``flip``, ``play``, ...).
    type: str
    #: The seat that acted (the dealer for ``deal``), if any.
    seat: int | None = None
    #: The receiving seat of a ``give`` or the partner of a ``trade``, if any.
    to: int | None = None
    #: The card, when this seat saw it.
    card: Card | None = None
    #: The hand size of a ``deal``, the cards reshuffled of a ``reshuffle``.
    count: int | None = None
    #: A ``flip``: the card went to the bottom of the draw pile.
    to_bottom: bool = False


@dataclass(frozen=True)
class LastRound:
    """The end of the previous round: every hand revealed and scored."""

    #: The round number.
    round: int
    #: Why it ended: ``out`` (a seat emptied its hand), ``stalemate`` or ``turn_cap``.
    reason: str
    #: What each seat scored in that round.
    points: tuple[int, ...]
    #: Every seat's hand at the end, revealed.
    hands: tuple[tuple[Card, ...], ...]


@dataclass(frozen=True)
class Observation:
    """What one seat sees."""

    #: Your seat number.
    seat: int
    #: How many seats play.
    num_seats: int
    #: How the game ends: ``rounds`` or ``gap`` (the ``end`` option).
    end: str
    #: The current round, from 1.
    round: int
    #: The dealer of this round.
    dealer: int
    #: How many cards each seat was dealt this round (7-15).
    deal_size: int
    #: How many rounds each seat has dealt.
    deals: tuple[int, ...]
    #: Each seat's total points so far (fewest wins).
    scores: tuple[int, ...]
    #: The public phase: ``TURN``, ``GIVE``, ``TRADE``, ``DEAL_SIZE``, ``CHANCE`` or ``OVER``.
    phase: str
    #: The seat to decide now.
    to_play: int
    #: Your pending decision kind when you are to decide, else None.
    decision: str | None
    #: Your cards.
    hand: tuple[Card, ...]
    #: How many cards each seat holds.
    hand_sizes: tuple[int, ...]
    #: How many cards are in the draw pile.
    draw_pile_size: int
    #: Cards turned up at the opening that still lie at the bottom of the draw pile.
    draw_pile_bottom: tuple[Card, ...]
    #: The play pile, bottom first.
    play_pile: tuple[Card, ...]
    #: The number card that sets what may be played (None before the first).
    reference: Card | None
    #: The value a number card must reach (a 10 counts 0 on the table).
    reference_value: int
    #: True while a reset is active (any number of the reference's colours may be played).
    reset_active: bool
    #: Turns played this round.
    turn: int
    #: Consecutive draws or passes with no card played between.
    draws_in_a_row: int
    #: Consecutive passes with nothing to draw (the round ends in a stalemate).
    stalemate_passes: int
    #: The seat giving cards away now, if any.
    giver: int | None
    #: How many cards the giver still has to give.
    gives_left: int
    #: The card you chose to give and have not yet given (only the giver sees it).
    gift: Card | None
    #: Cards in other hands whose whereabouts you know for sure.
    known: tuple[KnownCard, ...]
    #: The round's most recent events (up to 50), as you saw them.
    events: tuple[Event, ...]
    #: The previous round's end, every hand revealed (None in round 1).
    last_round: LastRound | None
    #: The cards of this round's last reshuffle: the draw pile holds only these since.
    reshuffled: tuple[Card, ...] = ()
    #: Per seat, what its draws this round told everyone (see NothingPlayable).
    nothing_playable: tuple[tuple[NothingPlayable, ...], ...] = ()

    @property
    def top(self) -> Card | None:
        """The top card of the play pile (may be a Seizure card)."""
        return self.play_pile[-1] if self.play_pile else None

    def is_playable_number(self, card: Card) -> bool:
        """True if ``card`` is a number card that fits the reference now."""
        ref = self.reference
        return (
            ref is not None
            and card.is_number
            and card.shares_colour(ref)
            and (card.number or 0) >= self.reference_value
        )

    def gives_for(self, card: Card) -> int:
        """How many cards playing number card ``card`` would make this seat give away."""
        ref = self.reference
        if ref is None or not card.is_number or not card.same_pair(ref):
            return 0
        if not self.reset_active and card.number == ref.number:
            return 2
        return 1

    def hand_points(self) -> int:
        """What this seat's hand would score if the round ended now."""
        return sum(c.points for c in self.hand)

    def known_in(self, seat: int) -> tuple[Card, ...]:
        """The cards this seat knows are in ``seat``'s hand."""
        return tuple(k.card for k in self.known if k.seat == seat)


@dataclass(frozen=True)
class PlayCard:
    """Play this card."""

    #: The card to play.
    card: Card


@dataclass(frozen=True)
class Draw:
    """Draw one card and pass (forced: nothing is playable)."""


@dataclass(frozen=True)
class Pass:
    """Pass without drawing (forced: nothing is playable and nothing can be drawn)."""


@dataclass(frozen=True)
class GiveCard:
    """Choose this card to give away."""

    #: The card to give away.
    card: Card


@dataclass(frozen=True)
class GiveTo:
    """Give the chosen card to this seat."""

    #: The seat that receives the chosen card.
    seat: int


@dataclass(frozen=True)
class TradePartner:
    """Swap hands with this seat (Direct Trade)."""

    #: The seat to swap hands with.
    seat: int


@dataclass(frozen=True)
class DealSize:
    """Deal this many cards to each player (7-15)."""

    #: Cards dealt to each seat (7-15).
    hand_size: int


Action = PlayCard | Draw | Pass | GiveCard | GiveTo | TradePartner | DealSize


def decode_card(raw: dict[str, Any]) -> Card:
    """A card from its JSON form."""
    number = raw.get("number")
    return Card(
        int(raw["id"]),
        str(raw["kind"]),
        tuple(str(c) for c in raw.get("colours") or ()),
        None if number is None else int(number),
    )


def _opt_card(raw: Any) -> Card | None:
    return None if raw is None else decode_card(raw)


def _opt_int(raw: Any) -> int | None:
    return None if raw is None else int(raw)


def _event(raw: dict[str, Any]) -> Event:
    etype = str(raw["type"])
    if etype == "deal":
        return Event(etype, seat=int(raw["dealer"]), count=int(raw["hand_size"]))
    if etype == "reshuffle":
        return Event(etype, count=int(raw["cards"]))
    if etype == "trade":
        return Event(etype, seat=int(raw["seat"]), to=int(raw["partner"]))
    return Event(
        etype,
        seat=_opt_int(raw.get("seat")),
        to=_opt_int(raw.get("to")),
        card=_opt_card(raw.get("card")),
        to_bottom=bool(raw.get("to_bottom", False)),
    )


def decode_observation(raw: dict[str, Any]) -> Observation:
    """The typed observation from its JSON form."""
    last = raw.get("last_round")
    return Observation(
        seat=int(raw["seat"]),
        num_seats=int(raw["num_players"]),
        end=str(raw["end"]),
        round=int(raw["round"]),
        dealer=int(raw["dealer"]),
        deal_size=int(raw["deal_size"]),
        deals=tuple(int(x) for x in raw["deals"]),
        scores=tuple(int(x) for x in raw["scores"]),
        phase=str(raw["phase"]),
        to_play=int(raw["to_play"]),
        decision=None if raw.get("decision") is None else str(raw["decision"]),
        hand=tuple(decode_card(c) for c in raw["hand"]),
        hand_sizes=tuple(int(x) for x in raw["hand_sizes"]),
        draw_pile_size=int(raw["draw_pile_size"]),
        draw_pile_bottom=tuple(decode_card(c) for c in raw["draw_pile_bottom"]),
        play_pile=tuple(decode_card(c) for c in raw["play_pile"]),
        reference=_opt_card(raw.get("reference")),
        reference_value=int(raw["reference_value"]),
        reset_active=bool(raw["reset_active"]),
        turn=int(raw["turn"]),
        draws_in_a_row=int(raw["draws_in_a_row"]),
        stalemate_passes=int(raw["stalemate_passes"]),
        giver=_opt_int(raw.get("giver")),
        gives_left=int(raw["gives_left"]),
        gift=_opt_card(raw.get("gift")),
        known=tuple(KnownCard(int(k["seat"]), decode_card(k["card"])) for k in raw["known"]),
        events=tuple(_event(e) for e in raw["events"]),
        last_round=None
        if last is None
        else LastRound(
            round=int(last["round"]),
            reason=str(last["reason"]),
            points=tuple(int(x) for x in last["points"]),
            hands=tuple(tuple(decode_card(c) for c in h) for h in last["hands"]),
        ),
        reshuffled=tuple(decode_card(c) for c in raw.get("reshuffled", ())),
        nothing_playable=tuple(
            tuple(
                NothingPlayable(decode_card(x["reference"]), int(x["value"]), int(x["at_most"]))
                for x in limits
            )
            for limits in raw.get("nothing_playable", ())
        ),
    )


def decode_action(kind: str, raw: Any) -> Action:
    """The typed action of a decision ``kind`` from its JSON form."""
    if kind == PLAY_CARD:
        return PlayCard(decode_card(raw["card"]))
    if kind == DRAW:
        return Pass() if raw.get("pass") else Draw()
    if kind == GIVE_CARD:
        return GiveCard(decode_card(raw["card"]))
    if kind == GIVE_TO:
        return GiveTo(int(raw["seat"]))
    if kind == TRADE_PARTNER:
        return TradePartner(int(raw["seat"]))
    if kind == DEAL_SIZE:
        return DealSize(int(raw["hand_size"]))
    raise ValueError(f"seizure has no decision kind {kind!r}")


# -- the wire JSON (saloon.sdk.schema): what every language's runtime decodes ---------------
from saloon.sdk.schema import (  # noqa: E402
    BOOL,
    INT,
    STR,
    Enum,
    Field,
    GameWire,
    ListOf,
    Nullable,
    Obj,
    Union,
)

_COLOUR = Enum("Colour", ("red", "blue", "green", "yellow"), "A card colour.")
_KIND = Enum(
    "CardKind",
    ("number", "to_the_left", "to_the_right", "direct_trade", "plus_three", "minus_three"),
    "A card's kind: a number card or one of the special cards.",
)
_CARD = Obj(
    "Card",
    "One card (ids 0-139).",
    (
        Field("id", INT, "The card id."),
        Field("kind", _KIND, "Its kind."),
        Field("colours", ListOf(_COLOUR), "A number card's two colours; [] for a special card."),
        Field("number", Nullable(INT), "A number card's number, 1-10; null for a special card."),
    ),
)
_SEAT = Field("seat", INT, "The seat it concerns.")
_SHOWN = Field("card", Nullable(_CARD), "The card, when this seat saw it; else null.")


def _wire_event(tag: str, name: str, doc: str, *fields: Field) -> tuple[str, Obj]:
    return tag, Obj(name, doc, (Field("type", STR, "The event's type."), *fields))


_EVENT = Union(
    "Event",
    "A public event of the current round (the most recent ones), told by its type.",
    "type",
    (
        _wire_event(
            "deal",
            "DealEvent",
            "A round was dealt.",
            Field("dealer", INT, "The dealer."),
            Field("hand_size", INT, "Cards dealt to each seat."),
        ),
        _wire_event(
            "flip",
            "FlipEvent",
            "A card was flipped from the draw pile.",
            _SHOWN,
            Field("to_bottom", BOOL, "It went to the bottom of the draw pile."),
        ),
        _wire_event("play", "PlayEvent", "A seat played a card.", _SEAT, _SHOWN),
        _wire_event("draw", "DrawEvent", "A seat drew a card.", _SEAT, _SHOWN),
        _wire_event("pass", "PassEvent", "A seat passed.", _SEAT),
        _wire_event(
            "give",
            "GiveEvent",
            "A seat gave a card away.",
            _SEAT,
            _SHOWN,
            Field("to", INT, "The seat it went to."),
        ),
        _wire_event("hands_left", "HandsLeftEvent", "Every hand moved to the left.", _SEAT),
        _wire_event("hands_right", "HandsRightEvent", "Every hand moved to the right.", _SEAT),
        _wire_event(
            "trade",
            "TradeEvent",
            "Two seats traded hands.",
            _SEAT,
            Field("partner", INT, "The seat it traded with."),
        ),
        _wire_event("reset", "ResetEvent", "The reference was reset."),
        _wire_event(
            "reshuffle",
            "ReshuffleEvent",
            "The play pile was shuffled into the draw pile.",
            Field("cards", INT, "How many cards."),
        ),
    ),
)
_LAST_ROUND = Obj(
    "LastRound",
    "The round that ended last.",
    (
        Field("round", INT, "Its number."),
        Field(
            "reason",
            Enum("RoundEnd", ("out", "stalemate", "turn_cap"), "Why a round ended."),
            "Why it ended.",
        ),
        Field("points", ListOf(INT), "Points each seat scored in it."),
        Field("hands", ListOf(ListOf(_CARD)), "Each seat's hand when it ended."),
    ),
)
#: The wire schema of Seizure (docs/rules/seizure.md).
WIRE = GameWire(
    "seizure-v1",
    "Seizure: shedding with two-coloured cards, 2-6 seats",
    Obj(
        "Observation",
        "What one seat sees (docs/rules/seizure.md).",
        (
            Field("seat", INT, "Your seat."),
            Field("num_players", INT, "How many seats play."),
            Field(
                "end",
                Enum("EndRule", ("rounds", "gap"), "The match's end rule."),
                "The end option: a fixed number of rounds, or a points gap.",
            ),
            Field("round", INT, "The round being played, from 1."),
            Field("dealer", INT, "This round's dealer."),
            Field("deal_size", INT, "Cards dealt to each seat this round."),
            Field("deals", ListOf(INT), "How many rounds each seat has dealt."),
            Field("scores", ListOf(INT), "Each seat's points so far."),
            Field(
                "phase",
                Enum(
                    "Phase",
                    ("CHANCE", "TURN", "GIVE", "TRADE", "DEAL_SIZE", "OVER"),
                    "The round's phase.",
                ),
                "What the round waits for.",
            ),
            Field("to_play", INT, "The seat to decide now."),
            Field("decision", Nullable(STR), "Your pending decision kind, if it is yours."),
            Field("hand", ListOf(_CARD), "Your cards, sorted by id."),
            Field("hand_sizes", ListOf(INT), "How many cards each seat holds."),
            Field("draw_pile_size", INT, "Cards in the draw pile."),
            Field("draw_pile_bottom", ListOf(_CARD), "Cards you know at the pile's bottom."),
            Field("play_pile", ListOf(_CARD), "The play pile, bottom first."),
            Field("reference", Nullable(_CARD), "The reference card (the pile's top number)."),
            Field("reference_value", INT, "The value to play to (0 with no reference)."),
            Field("reset_active", BOOL, "A reset is in force."),
            Field("turn", INT, "Turns played this round."),
            Field("draws_in_a_row", INT, "Draws in a row with nothing played."),
            Field("stalemate_passes", INT, "Passes in a row (a stalemate ends the round)."),
            Field("giver", Nullable(INT), "The seat giving cards away, while one is."),
            Field("gives_left", INT, "Cards the giver has still to give."),
            Field("gift", Nullable(_CARD), "The card you are giving, when you chose it."),
            Field(
                "known",
                ListOf(
                    Obj(
                        "KnownCard",
                        "A card you know in another hand.",
                        (_SEAT, Field("card", _CARD, "The card.")),
                    )
                ),
                "Cards of other hands you know (given or seen).",
            ),
            Field("reshuffled", ListOf(_CARD), "Cards shuffled back into the draw pile."),
            Field(
                "nothing_playable",
                ListOf(
                    ListOf(
                        Obj(
                            "NothingPlayable",
                            "A draw told: the seat held nothing playable on this reference.",
                            (
                                Field("reference", _CARD, "The reference card then."),
                                Field("value", INT, "The value to play to then."),
                                Field("at_most", INT, "What it says of that seat's cards."),
                            ),
                        )
                    )
                ),
                "Per seat, what its draws have told this round.",
            ),
            Field("events", ListOf(_EVENT), "The round's most recent public events."),
            Field("last_round", Nullable(_LAST_ROUND), "The round that ended last, if any."),
        ),
    ),
    {
        "PLAY_CARD": Obj("PlayCard", "Play this card.", (Field("card", _CARD, "The card."),)),
        "DRAW": Obj("Draw", "Draw a card.", (Field("draw", BOOL, "Always true."),)),
        "GIVE_CARD": Obj("GiveCard", "Give this card.", (Field("card", _CARD, "The card."),)),
        "GIVE_TO": Obj("GiveTo", "Give to this seat.", (_SEAT,)),
        "TRADE_PARTNER": Obj("TradePartner", "Trade hands with this seat.", (_SEAT,)),
        "DEAL_SIZE": Obj(
            "DealSize", "Deal this many cards.", (Field("hand_size", INT, "Cards to each seat."),)
        ),
    },
)
