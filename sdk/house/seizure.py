"""House bots for Seizure."""

from __future__ import annotations

from typing import Any

from saloon.sdk.bot import Bot, Decision
from saloon.sdk.games.seizure import (
    DEAL_SIZE,
    DIRECT_TRADE,
    GIVE_CARD,
    GIVE_TO,
    MINUS_THREE,
    PLAY_CARD,
    PLUS_THREE,
    TO_THE_LEFT,
    TO_THE_RIGHT,
    TRADE_PARTNER,
    Card,
    GiveTo,
    Observation,
    PlayCard,
)


def give_priority(card: Card) -> tuple[int, int]:
    """How much we want to be rid of a card (higher first): Plus Three, then Seizure cards
    (2 points each), then number cards hardest to play later (low numbers; a 10 always
    fits its colours, so it goes last), Minus Three never while anything else is left."""
    if card.kind == PLUS_THREE:
        return (4, 0)
    if card.is_seizure:
        return (3, 0)
    if card.kind == MINUS_THREE:
        return (0, 0)
    return (2, -(card.number or 0) if card.number != 10 else -11)


class GreedyBot(Bot):
    """Shed points one decision at a time.

    * Play: a number card that ends the round for us (our last active card) first; then
      the play that makes us give away the most cards; then the highest number (it raises
      the bar for the next player), keeping 10s (they always fit their colours and would
      reset the bar to 0) for last.
    * Forced to play a Seizure card: the one that leaves us holding the smallest hand
      (To the Left brings the right neighbour's hand, To the Right the left one's, Direct
      Trade the smallest hand at the table).
    * Give away: Plus Three first, then Seizure cards, then hard-to-play numbers; keep
      Minus Three. Recipient: a Plus Three goes to the leader (lowest total), anything
      else to the seat with the most cards (least likely to go out soon).
    * Trade with the smallest hand (ties: fewest known points, then lowest seat).
    * Deal size (we are the dealer because we have the most points): 15 cards when far
      behind the leader (variance helps), else 7 (short rounds keep our losses small).
    """

    def act(self, decision: Decision[Observation, Any]) -> Any:
        obs = decision.observation
        legal = decision.legal
        if len(legal) == 1:
            return legal[0]
        kind = decision.kind
        if kind == PLAY_CARD:
            return self._play(obs, legal)
        if kind == GIVE_CARD:
            return max(legal, key=lambda a: (give_priority(a.card), -a.card.id))
        if kind == GIVE_TO:
            return self._recipient(obs, legal)
        if kind == TRADE_PARTNER:
            return min(legal, key=lambda a: self._hand_cost(obs, a.seat))
        if kind == DEAL_SIZE:
            behind = obs.scores[obs.seat] - min(obs.scores)
            want = 15 if behind >= 10 else 7
            return min(legal, key=lambda a: (abs(a.hand_size - want), a.hand_size))
        return legal[0]

    @staticmethod
    def _hand_cost(obs: Observation, seat: int) -> tuple[int, int, int]:
        return (obs.hand_sizes[seat], sum(c.points for c in obs.known_in(seat)), seat)

    def _play(self, obs: Observation, legal: tuple[PlayCard, ...]) -> PlayCard:
        numbers = [a for a in legal if a.card.is_number]
        if numbers:
            active = sum(1 for c in obs.hand if not c.is_score)
            if active == 1:
                return numbers[0]

            def score(a: PlayCard) -> tuple[int, int, int]:
                number = a.card.number or 0
                return (obs.gives_for(a.card), 0 if number == 10 else 1, number)

            return max(numbers, key=score)
        n = obs.num_seats
        seat = obs.seat
        others = [s for s in range(n) if s != seat]

        def after(a: PlayCard) -> tuple[int, int]:
            if a.card.kind == TO_THE_LEFT:
                return (obs.hand_sizes[(seat - 1) % n], 0)
            if a.card.kind == TO_THE_RIGHT:
                return (obs.hand_sizes[(seat + 1) % n], 0)
            if a.card.kind == DIRECT_TRADE:
                return (min(obs.hand_sizes[s] for s in others), 0)
            return (99, 0)

        return min(legal, key=lambda a: (after(a), a.card.id))

    @staticmethod
    def _recipient(obs: Observation, legal: tuple[GiveTo, ...]) -> GiveTo:
        if obs.gift is not None and obs.gift.kind == PLUS_THREE:
            return min(legal, key=lambda a: (obs.scores[a.seat], a.seat))
        return max(legal, key=lambda a: (obs.hand_sizes[a.seat], -a.seat))
