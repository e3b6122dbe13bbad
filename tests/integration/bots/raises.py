"""Its own code raises on the second decision."""

from typing import Any

from saloon.sdk import Bot, Decision


class Raises(Bot):
    def __init__(self) -> None:
        self.asked = 0

    def act(self, decision: Decision[Any, Any]) -> Any:
        self.asked += 1
        if self.asked == 2:
            raise ValueError("the bot's own bug")
        return decision.legal[0]
