"""Never answers: every decision sleeps far past any deadline."""

import time
from typing import Any

from saloon.sdk import Bot, Decision


class Silent(Bot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        time.sleep(3600)
        return decision.legal[0]
