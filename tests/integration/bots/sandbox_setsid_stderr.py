"""Starts a child that calls setsid and keeps the inherited stderr open, then plays on.

The child (a shell) has the bot's seed (the test's token) on its command line so the test
can find it on the host; it stops by itself after CHILD_BOUND_S if the sandbox does not.
"""

import os
import subprocess
import sys
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo

CHILD_BOUND_S = 120
#: A shell, not Python: a sandboxed uid may not reach the referee's Python (/root/...).
CHILD = f"echo child alive $0 >&2; sleep {CHILD_BOUND_S}"


class SetsidStderr(Bot):
    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.asked = 0

    def on_match_start(self, info: MatchInfo) -> None:
        argv = ["/bin/sh", "-c", CHILD, f"saloon-token-{info.seed}"]
        self.child = subprocess.Popen(argv, start_new_session=True)  # stderr inherited

    def act(self, decision: Decision[Any, Any]) -> Any:
        self.asked += 1
        if self.asked == 2 and self.child is not None:
            alive = self.child.poll() is None and os.getsid(self.child.pid) == self.child.pid
            print(f"child detached and alive: {alive}", file=sys.stderr, flush=True)
        return decision.legal[0]
