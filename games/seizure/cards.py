"""The Seizure deck: 140 cards, their ids and per-card lookup tables.

Card id layout (ids 0..139, every physical card unique):

* ``0..119`` number cards: ``id = pair * 20 + (number - 1) * 2 + copy`` with
  ``pair`` an index into :data:`PAIRS`, ``number`` 1..10 and ``copy`` 0 or 1.
* ``120..123`` To the Left, ``124..127`` To the Right, ``128..131`` Direct Trade
  (the Seizure cards), ``132..135`` Plus Three, ``136..139`` Minus Three (score cards).
"""

from __future__ import annotations

from typing import Any

COLOURS = ("red", "blue", "green", "yellow")
#: The six colour pairs, as indices into COLOURS; a number card carries one pair.
PAIRS: tuple[tuple[int, int], ...] = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))

NUM_CARDS = 140
NUMBER_CARDS = 120
LEFT_FIRST, RIGHT_FIRST, TRADE_FIRST, PLUS_FIRST, MINUS_FIRST = 120, 124, 128, 132, 136

K_NUMBER, K_LEFT, K_RIGHT, K_TRADE, K_PLUS, K_MINUS = range(6)
KIND_NAMES = ("number", "to_the_left", "to_the_right", "direct_trade", "plus_three", "minus_three")


def number_card(pair: int, number: int, copy: int = 0) -> int:
    """The id of a number card: colour pair index, number 1..10, copy 0/1."""
    if not (0 <= pair < 6 and 1 <= number <= 10 and copy in (0, 1)):
        raise ValueError(f"no number card pair={pair} number={number} copy={copy}")
    return pair * 20 + (number - 1) * 2 + copy


def pair_index(first: str, second: str) -> int:
    """The pair index of two colour names (in any order)."""
    a, b = sorted((COLOURS.index(first), COLOURS.index(second)))
    return PAIRS.index((a, b))


#: KIND[c] -> K_NUMBER ... K_MINUS.
KIND: list[int] = [K_NUMBER] * NUMBER_CARDS + [k for k in range(1, 6) for _ in range(4)]
#: PAIR[c] -> colour pair index, -1 for non-number cards.
PAIR: list[int] = [c // 20 for c in range(NUMBER_CARDS)] + [-1] * 20
#: NUMBER[c] -> 1..10, 0 for non-number cards.
NUMBER: list[int] = [(c % 20) // 2 + 1 for c in range(NUMBER_CARDS)] + [0] * 20
#: MASK[c] -> bit mask of the card's colours (bit i = COLOURS[i]); 0 for non-number cards.
MASK: list[int] = [(1 << PAIRS[PAIR[c]][0]) | (1 << PAIRS[PAIR[c]][1]) for c in range(120)] + [
    0
] * 20
#: VALUE_ON_TABLE[c] -> the reference value the card sets: its number, but 0 for a 10.
VALUE_ON_TABLE: list[int] = [n % 10 for n in NUMBER]
#: POINTS[c] -> what the card scores in hand at round end.
POINTS: list[int] = [1] * NUMBER_CARDS + [2] * 12 + [3] * 4 + [-3] * 4
#: ACTIVE[c] -> 1 for number and Seizure cards (they keep a player in the round), 0 else.
ACTIVE: list[int] = [1] * 132 + [0] * 8
#: True for the three kinds of Seizure card.
IS_SEIZURE: list[bool] = [K_LEFT <= k <= K_TRADE for k in KIND]


def _playable_table() -> list[bytes]:
    """PLAYABLE[pair * 10 + value][c] -> 1 if number card c may go on a reference of that
    pair at that reference value (shares a colour, number >= value)."""
    table = []
    for pair in range(6):
        ref_mask = (1 << PAIRS[pair][0]) | (1 << PAIRS[pair][1])
        for value in range(10):
            table.append(
                bytes(
                    1 if c < NUMBER_CARDS and MASK[c] & ref_mask and NUMBER[c] >= value else 0
                    for c in range(NUM_CARDS)
                )
            )
    return table


PLAYABLE: list[bytes] = _playable_table()


def _describe(card: int) -> tuple[str, tuple[str, ...], int | None]:
    kind = KIND[card]
    if kind == K_NUMBER:
        a, b = PAIRS[PAIR[card]]
        return ("number", (COLOURS[a], COLOURS[b]), NUMBER[card])
    return (KIND_NAMES[kind], (), None)


_DESCRIPTIONS = [_describe(c) for c in range(NUM_CARDS)]


def card_json(card: int) -> dict[str, Any]:
    """The full JSON description of a card, as bots see it (a fresh object)."""
    kind, colours, number = _DESCRIPTIONS[card]
    return {"id": card, "kind": kind, "colours": list(colours), "number": number}


def card_label(card: int) -> str:
    """A short readable label: ``7 red/blue #12``, ``to_the_left #120``."""
    if KIND[card] == K_NUMBER:
        a, b = PAIRS[PAIR[card]]
        return f"{NUMBER[card]} {COLOURS[a]}/{COLOURS[b]} #{card}"
    return f"{KIND_NAMES[KIND[card]]} #{card}"
