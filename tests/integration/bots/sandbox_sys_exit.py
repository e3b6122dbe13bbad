"""Plays one decision, then calls sys.exit() in act."""

import sys
from typing import Any

from saloon.sdk import Bot, Decision


class SysExit(Bot):
    def __init__(self) -> None:
        self.asked = 0

    def act(self, decision: Decision[Any, Any]) -> Any:
        self.asked += 1
        if self.asked == 2:
            sys.exit("the bot wants out")
        return decision.legal[0]
