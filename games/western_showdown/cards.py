"""Western Legends: Showdown: the fixed tables (cards, locations) and the location conditions.

Card ids 0..17: seat 0 plays red (ids 0..8), seat 1 black (ids 9..17); within a colour
the values are 1,1,1,2,3,4,5,6,7 in id order, so ``value = VALUES[id % 9]`` and
``owner = id // 9``. Location ids 0..6 follow the rule text: Saloon, Sheriff's Office,
Doctor's Office, Mine, Ranch, Cabaret, Bandit Hideout. A stack is a list of card ids,
bottom first (its last element is the top).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

NUM_CARDS = 18
VALUES = (1, 1, 1, 2, 3, 4, 5, 6, 7)
#: VALUE[card] and OWNER[card] (0 red, 1 black) for every card id.
VALUE: tuple[int, ...] = tuple(VALUES[c % 9] for c in range(NUM_CARDS))
OWNER: tuple[int, ...] = tuple(c // 9 for c in range(NUM_CARDS))
COLOURS = ("red", "black")
#: Ability names by card value (index 0 unused).
ABILITIES = (
    "",
    "WALLOP",
    "DETERMINATION",
    "BULLETPROOF",
    "SADDLE UP",
    "STICK 'EM UP",
    "CHEAT",
    "LIVING LEGEND",
)
#: Each seat's 9 cards, in id order.
DECKS: tuple[tuple[int, ...], tuple[int, ...]] = (tuple(range(9)), tuple(range(9, 18)))

SALOON, SHERIFF, DOCTOR, MINE, RANCH, CABARET, HIDEOUT = range(7)
LOCATION_NAMES = (
    "Saloon",
    "Sheriff's Office",
    "Doctor's Office",
    "Mine",
    "Ranch",
    "Cabaret",
    "Bandit Hideout",
)
#: What each location asks for, in our words.
LOCATION_CONDITIONS = (
    "at least 3 cards of value 1 (WALLOP)",
    "at least 2 red and at least 2 black cards",
    "at least 4 different values",
    "at least 3 cards of one colour next to each other in the stack",
    "sum of values greater than 11",
    "at least one 1 (WALLOP), one 5 (STICK 'EM UP) and one 6 (CHEAT)",
    "at least 4 cards and sum of values less than 11",
)
#: No condition can hold on a stack shorter than this (Ranch: 7 + 5 = 12 with two cards).
MIN_CARDS = (3, 4, 4, 3, 2, 3, 4)


def _saloon(stack: Sequence[int]) -> bool:
    return sum(1 for c in stack if c % 9 < 3) >= 3


def _sheriff(stack: Sequence[int]) -> bool:
    red = sum(1 for c in stack if c < 9)
    return red >= 2 and len(stack) - red >= 2


def _doctor(stack: Sequence[int]) -> bool:
    return len({VALUE[c] for c in stack}) >= 4


def _mine(stack: Sequence[int]) -> bool:
    run = 0
    previous = -1
    for c in stack:
        owner = OWNER[c]
        if owner == previous:
            run += 1
            if run >= 3:
                return True
        else:
            previous = owner
            run = 1
    return False


def _ranch(stack: Sequence[int]) -> bool:
    return sum(VALUE[c] for c in stack) > 11


def _cabaret(stack: Sequence[int]) -> bool:
    values = {VALUE[c] for c in stack}
    return 1 in values and 5 in values and 6 in values


def _hideout(stack: Sequence[int]) -> bool:
    return len(stack) >= 4 and sum(VALUE[c] for c in stack) < 11


#: CONDITIONS[location](stack) -> True when the location's win condition is met.
CONDITIONS: tuple[Callable[[Sequence[int]], bool], ...] = (
    _saloon,
    _sheriff,
    _doctor,
    _mine,
    _ranch,
    _cabaret,
    _hideout,
)


def condition_met(location: int, stack: Sequence[int]) -> bool:
    """True when ``stack`` (card ids, bottom first) meets ``location``'s win condition."""
    return len(stack) >= MIN_CARDS[location] and CONDITIONS[location](stack)


def stack_winner(stack: Sequence[int]) -> int:
    """End scoring: the owner of the highest card; on equal values the one nearer the top."""
    best = -1
    winner = -1
    for c in reversed(stack):
        if VALUE[c] > best:
            best = VALUE[c]
            winner = OWNER[c]
    return winner


def card_json(card: int) -> dict[str, int | str]:
    """A card described fully, as observations show it."""
    value = VALUE[card]
    return {
        "id": card,
        "colour": COLOURS[OWNER[card]],
        "value": value,
        "ability": ABILITIES[value],
        "owner": OWNER[card],
    }


def card_label(card: int) -> str:
    """A short label such as ``R5#6`` (red 5, id 6) or ``B1#9``."""
    return f"{'RB'[OWNER[card]]}{VALUE[card]}#{card}"
