"""A bot file that plays every game: the house bot named by the seat (greedy, random, in
turn), so its results equal the in-process house bots'. The deterministic, quick house bots
by name: house:search stops at a time cap, so its moves can differ between two runs."""

from __future__ import annotations

from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo
from saloon.sdk.house import make_house_bot

HOUSE_MIX = ("greedy", "random")


class HouseMix(Bot):
    def __init__(self) -> None:
        self.inner: Bot = Bot()

    def on_match_start(self, info: MatchInfo) -> None:
        self.inner = make_house_bot(info.game, HOUSE_MIX[info.seat % len(HOUSE_MIX)])
        self.inner.on_match_start(info)

    def act(self, decision: Decision[Any, Any]) -> Any:
        return self.inner.act(decision)
