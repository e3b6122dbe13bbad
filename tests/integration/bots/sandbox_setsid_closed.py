"""Forks a child that calls setsid and closes every file it has, then plays on.

The child becomes a shell with the bot's seed (the test's token) on its command line so
the test can find it on the host; it stops by itself after CHILD_BOUND_S.
"""

import os
import sys
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo

CHILD_BOUND_S = 120


class SetsidClosed(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.closerange(0, 1024)
                sleep = f"sleep {CHILD_BOUND_S}"
                os.execv("/bin/sh", ["/bin/sh", "-c", sleep, f"saloon-token-{info.seed}"])
            finally:
                os._exit(1)
        print(f"child {pid} detached", file=sys.stderr, flush=True)

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[0]
