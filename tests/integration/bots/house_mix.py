"""A bot file that plays every game: the house bot named by the seat (greedy when the game
has one, else random), so its results equal the in-process house bots'."""

from __future__ import annotations

from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo
from saloon.sdk.house import house_bots


class HouseMix(Bot):
    def __init__(self) -> None:
        self.inner: Bot = Bot()

    def on_match_start(self, info: MatchInfo) -> None:
        names = list(house_bots(info.game))
        self.inner = house_bots(info.game)[names[info.seat % len(names)]]()
        self.inner.on_match_start(info)

    def act(self, decision: Decision[Any, Any]) -> Any:
        return self.inner.act(decision)
