"""Answers every decision, but only after the deadline (the tests give no time bank)."""

import time
from typing import Any

from saloon.sdk import Bot, Decision

DELAY_S = 0.3


class Late(Bot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        time.sleep(DELAY_S)
        return decision.legal[0]
