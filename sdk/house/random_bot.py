"""``house:random``: a uniformly random legal action, seeded. Plays every game."""

from __future__ import annotations

import random
from typing import Any

from saloon.sdk.bot import Bot, Decision, MatchInfo

#: Until its match starts, a random bot draws from this one (seeding a generator costs
#: ~5 us, paid again with the match's own seed at its start: two a match, per seat).
_UNSEEDED = random.Random(0)


class RandomBot(Bot):
    """Picks uniformly among the legal actions with its own seeded RNG."""

    def __init__(self) -> None:
        self.rng = _UNSEEDED

    def on_match_start(self, info: MatchInfo) -> None:
        self.rng = random.Random(info.seed)

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[self.rng.randrange(len(decision.legal))]
