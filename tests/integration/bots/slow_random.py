"""A legal but slow bot: house:random that thinks 10 ms per decision (season failure tests
use it so a match is still running when a worker is killed)."""

from __future__ import annotations

import time
from typing import Any

from saloon.sdk import Decision
from saloon.sdk.house.random_bot import RandomBot


class SlowRandom(RandomBot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        time.sleep(0.01)
        return super().act(decision)
