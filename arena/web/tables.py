"""The public table of a game at one moment: what a spectator may see, nothing more.

Read from the engine state's public attributes (the same facts every seat's observation
shows) rather than by building an observation per step, which costs ~10x more on a long
match. Cards are ids; :func:`card_legend` labels them once per match. A game this module
does not know shows no table (the viewer still shows its events and whose turn it is):
leaking a seat's cards costs more than an empty panel.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection
from typing import Any

from saloon.games import State
from saloon.games.seas_of_strife.engine import colour_name
from saloon.games.seizure.cards import card_label as seizure_label
from saloon.games.western_showdown.cards import ABILITIES, LOCATION_NAMES, VALUE
from saloon.games.western_showdown.cards import card_label as western_label
from saloon.referee.replay import Step

SEAS, SEIZURE, WESTERN = "seas-of-strife-v1", "seizure-v1", "western-showdown-v1"

#: Per game: decision kinds whose choice only the seat (and maybe one other) saw, and
#: chance kinds anyone saw; the viewer hides the other labels until "show all hands".
PRIVATE_DECISIONS: dict[str, frozenset[str]] = {
    SEIZURE: frozenset({"GIVE_CARD"}),
    WESTERN: frozenset({"MULLIGAN"}),
}
PUBLIC_CHANCE = frozenset({"DEALER", "DEAL_SIZE", "START_PLAYER", "LOCATIONS"})


def seas_label(card: int) -> str:
    """A Seas of Strife card: its number and colour."""
    return f"{card} {colour_name(card)}"


def _western(card: int) -> str:
    return f"{western_label(card)} {ABILITIES[VALUE[card]]}"


#: Seizure's special cards as its rules name them (the engine's labels spell them in
#: snake_case: ``to_the_left #120``); the viewer shows these names everywhere.
SEIZURE_NAMES = {
    "to_the_left": "To the Left",
    "to_the_right": "To the Right",
    "direct_trade": "Direct Trade",
    "plus_three": "Plus Three",
    "minus_three": "Minus Three",
}
_SEIZURE_NAME = re.compile("|".join(SEIZURE_NAMES))


def readable(game: str, label: str) -> str:
    """An engine's label (a card, an action) with the cards' names as the viewer shows
    them: a Seizure special card by its name in the rules."""
    if game == SEIZURE and "_" in label:
        return _SEIZURE_NAME.sub(lambda m: SEIZURE_NAMES[m.group(0)], label)
    return label


def _seizure(card: int) -> str:
    return readable(SEIZURE, seizure_label(card))


#: Per game: a card id's label.
CARD_LABELS: dict[str, Callable[[int], str]] = {
    SEAS: seas_label,
    SEIZURE: _seizure,
    WESTERN: _western,
}


def dealt(label: str, cards: Collection[int]) -> list[dict[str, Any]] | None:
    """A deal's label as card ids per receiver, or None when ``label`` is not one.

    Engines label a deal ``3 12 35 | 11 28 50 | draw pile top 96``: blocks of card ids
    split by ``|``, each for the next seat unless words name it (at least one block is a
    seat's). Every id must be one of
    ``cards`` (the match's legend), so an outcome of other numbers is never read as cards.
    """
    out: list[dict[str, Any]] = []
    seat = 0
    for block in label.split(" | "):
        words = block.split()
        ids = list(itertools.dropwhile(lambda w: not w.isdigit(), words))
        name = " ".join(words[: len(words) - len(ids)])
        if not ids or not all(w.isdigit() and int(w) in cards for w in ids):
            return None
        if name:
            out.append({"to": name, "seat": None, "cards": [int(w) for w in ids]})
        else:
            out.append({"to": f"seat {seat}", "seat": seat, "cards": [int(w) for w in ids]})
            seat += 1
    return out if seat else None  # "dealer 0" names a seat, deals no card


def label_is_public(game: str, step: Step) -> bool:
    """True when every seat saw what log entry ``step`` chose or dealt."""
    if step.entry.is_chance:
        return step.entry.kind in PUBLIC_CHANCE
    return step.entry.kind not in PRIVATE_DECISIONS.get(game, frozenset())


def card_legend(state: State) -> dict[int, str]:
    """Every card of the game, id to label (empty for a game without labels here)."""
    label = CARD_LABELS.get(state.spec.id)
    if label is None:
        return {}
    return {c: label(c) for cards in state.cards().values() for c in cards}


def all_hands(state: State) -> dict[str, list[int]]:
    """Every zone of cards (hands, piles, stacks): the full deal at this moment."""
    return {zone: list(cards) for zone, cards in state.cards().items()}


class TableMaker:
    """The public tables of one match, one per position, fed the replay's steps in order."""

    def __init__(self, game: str) -> None:
        self.game = game
        self.draws: list[int] = []
        self.gifts: list[int] = []

    def table(self, state: Any) -> dict[str, Any]:
        """The public table of ``state``."""
        if self.game == SEAS:
            return {
                "hand_number": state.hand_number,
                "leader": state.leader,
                "trick": [list(t) for t in zip(state.trick_seats, state.trick_cards, strict=True)],
                "last_trick": None
                if not state.completed
                else {"cards": list(state.completed[-1][1]), "winner": state.completed[-1][2]},
                "tricks_taken": list(state.taken),
                "points": list(state.points),
                "hand_sizes": [len(h) for h in state.hands],
            }
        if self.game == SEIZURE:
            n = state.num_players
            if len(self.draws) != n:
                self.draws, self.gifts = [0] * n, [0] * n
            return {
                "round": state.round,
                "dealer": state.dealer,
                "scores": list(state.totals),
                "hand_sizes": [len(h) for h in state.hands],
                "draw_pile_size": len(state.draw),
                "pile": list(state.pile),
                "reference": state.ref if state.ref >= 0 else None,
                "draws": list(self.draws),
                "gifts": list(self.gifts),
                "last_round": None
                if state.last_round is None
                else {
                    "round": state.last_round[0],
                    "reason": state.last_round[1],
                    "points": list(state.last_round[2]),
                },
            }
        if self.game == WESTERN:
            return {
                "game_number": state.game_number,
                "games_won": list(state.games_won),
                "locations": [
                    {"id": loc, "name": LOCATION_NAMES[loc], "stack": list(stack)}
                    for loc, stack in zip(state.locations, state.stacks, strict=False)
                ],
                "hand_sizes": [len(h) for h in state.hands],
                "draw_pile_sizes": [len(d) for d in state.draw],
                "won_sizes": [len(w) for w in state.won],
                "played": [list(p) for p in state.played],
                "reputation": state.reputation,
            }
        return {}

    def after(self, step: Step) -> None:
        """Count what ``step`` did toward the tallies the tables show (Seizure: each seat's
        draws and gifts this round)."""
        if self.game != SEIZURE or not self.draws:
            return
        entry = step.entry
        if entry.seat is not None and entry.kind == "DRAW" and step.label == "draw":
            self.draws[entry.seat] += 1
        elif entry.seat is not None and entry.kind == "GIVE_TO":
            self.gifts[entry.seat] += 1
        if any(e.get("event") == "round_scored" for e in entry.events):
            self.draws = [0] * len(self.draws)
            self.gifts = [0] * len(self.gifts)
