"""A Seas of Strife bot that tries to recognise a duplicate deal from its runtime's memory.

A duplicate deal replays one deal with the seats rotated. This bot keeps, in module
globals (they live as long as its runtime), the hands it held and the cards it saw each
seat play in each hand of every match, and counts its runtime's matches. At the first
decision of each hand it compares its new hand (as dealt: held, or played already) with
them: one that holds a hand it held before, or every card (at least 12 of the 15) that some
seat played in a hand of an earlier match, is a deal it has seen -- it then knows every
hand at the table.

It reports on stderr at every decision (the record keeps stderr per decision):
``memo: runtime ID match N; ...`` (ID names the runtime, N counts its matches) and either
``no deal recognised`` or ``RECOGNISED: ...``.
It plays the first legal card (never the knowledge), touches nothing outside its own
memory, and keeps at most MAX_KEPT hands.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo

#: Hands kept in memory, at most (oldest dropped first).
MAX_KEPT = 2000
#: A hand is recognised from this many of its cards (15 a hand; the cards of a hand's last
#: trick played after this bot's last decision are never seen).
ENOUGH = 12

#: This runtime, by a name of its own (drawn once, when the runtime loads the bot).
RUNTIME = os.urandom(4).hex()
#: Matches this runtime has served (this module's life).
MATCHES = 0
#: (runtime match, hand number) -> the hand this bot held at its first decision of it.
HELD: dict[tuple[int, int], frozenset[int]] = {}
#: (runtime match, hand number, seat) -> the cards that seat was seen playing.
PLAYED: dict[tuple[int, int, int], set[int]] = {}


def _forget() -> None:
    while len(HELD) > MAX_KEPT:
        HELD.pop(next(iter(HELD)))
    while len(PLAYED) > MAX_KEPT:
        PLAYED.pop(next(iter(PLAYED)))


class Memorising(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        global MATCHES
        MATCHES += 1
        self.match = MATCHES
        self.hand = 0
        self.known = ""

    def act(self, decision: Decision[Any, Any]) -> Any:
        obs = decision.observation
        for trick in obs.completed_tricks:
            for play in trick.plays:
                self._saw(obs.hand_number, play.seat, play.card.number)
        for play in obs.trick:
            self._saw(obs.hand_number, play.seat, play.card.number)
        if obs.hand_number != self.hand:  # this hand's first decision
            self.hand = obs.hand_number
            # The hand as dealt: what it holds and what it played already (a forced play,
            # the only legal card, is made for it without asking).
            mine = PLAYED.get((self.match, self.hand, obs.seat), set())
            hand = frozenset(card.number for card in obs.hand) | mine
            self.known = self._recognise(hand)
            HELD[(self.match, self.hand)] = hand
            _forget()
        line = f"memo: runtime {RUNTIME} match {self.match}; "
        line += f"RECOGNISED: {self.known}" if self.known else "no deal recognised"
        print(line, file=sys.stderr)
        return decision.legal[0]

    def _saw(self, hand_number: int, seat: int, card: int) -> None:
        PLAYED.setdefault((self.match, hand_number, seat), set()).add(card)
        _forget()

    def _recognise(self, hand: frozenset[int]) -> str:
        for (match, number), held in HELD.items():
            if match != self.match and len(held) >= ENOUGH and held <= hand:
                return f"I held this hand in runtime match {match} (hand {number})"
        for (match, number, seat), cards in PLAYED.items():
            if match != self.match and len(cards) >= ENOUGH and cards <= hand:
                return (
                    f"my hand was seat {seat}'s in runtime match {match} (hand {number}); "
                    "I know all hands"
                )
        return ""
