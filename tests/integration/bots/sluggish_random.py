"""A legal but sluggish bot: house:random that thinks 250 ms per decision
(test_killed_worker_bots kills its worker up to 0.8 s after it starts: its match, tens of
seconds, is still running then, however long the test's looks at /proc take on a loaded
machine; slow_random's match, ~1 s, had ended before the test looked)."""

from __future__ import annotations

import time
from typing import Any

from saloon.sdk import Decision
from saloon.sdk.house.random_bot import RandomBot


class SluggishRandom(RandomBot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        time.sleep(0.25)
        return super().act(decision)
