"""Plays one decision, then its process exits in the middle of the next."""

import os
from typing import Any

from saloon.sdk import Bot, Decision


class Exits(Bot):
    def __init__(self) -> None:
        self.asked = 0

    def act(self, decision: Decision[Any, Any]) -> Any:
        self.asked += 1
        if self.asked == 2:
            os._exit(3)
        return decision.legal[0]
