"""House bots for Seas of Strife."""

from __future__ import annotations

from typing import Any

from saloon.sdk.bot import Bot, Decision
from saloon.sdk.games.seas_of_strife import CHOOSE_LEADER, Card, Observation


class GreedyBot(Bot):
    """Avoid tricks one decision at a time.

    * Following: play the highest card that does not take the trick as it stands; when
      every card takes it, play the highest one (the trick is lost anyway, shed the danger).
    * Leading: lead the card that is lowest within its colour (hardest to win with).
    * Choosing the next leader: hand the lead to the opponent with the fewest points.
    """

    def act(self, decision: Decision[Observation, Any]) -> Any:
        obs = decision.observation
        if decision.kind == CHOOSE_LEADER:
            others = [s for s in decision.legal if s != obs.seat]
            return min(others, key=lambda s: (obs.points[s] + obs.tricks_taken[s], s))
        cards: tuple[Card, ...] = decision.legal
        if len(cards) == 1:
            return cards[0]
        if not obs.trick:
            return min(cards, key=lambda c: (c.rank, c.number))
        ducking = [c for c in cards if not obs.would_win(c)]
        if ducking:
            return max(ducking)
        return max(cards)
