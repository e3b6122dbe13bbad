"""Starts a child that calls setsid and keeps the inherited stderr open, then plays on.

The child (a shell) has the bot's seed (the test's token) on its command line so the test
can find it on the host; it stops by itself after CHILD_BOUND_S if the sandbox does not.
The bot plays on only once the child has written its line to stderr (it says so on a pipe
of its own, waited for at most READY_S): under load a shell could otherwise start after
the whole match had been played, and the test would find no line of it.
"""

import os
import select
import subprocess
import sys
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo

CHILD_BOUND_S = 120
READY_S = 8.0
#: A shell, not Python: a sandboxed uid may not reach the referee's Python (/root/...).
CHILD = f"echo child alive $0 >&2; echo up; sleep {CHILD_BOUND_S}"


class SetsidStderr(Bot):
    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.asked = 0

    def on_match_start(self, info: MatchInfo) -> None:
        argv = ["/bin/sh", "-c", CHILD, f"saloon-token-{info.seed}"]
        # stderr inherited; stdout is the bot's pipe to hear that the line is written.
        self.child = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.PIPE)
        assert self.child.stdout is not None
        ready, _, _ = select.select([self.child.stdout], [], [], READY_S)
        if ready:
            self.child.stdout.readline()
        else:
            print(f"child silent after {READY_S} s", file=sys.stderr, flush=True)

    def act(self, decision: Decision[Any, Any]) -> Any:
        self.asked += 1
        if self.asked == 2 and self.child is not None:
            alive = self.child.poll() is None and os.getsid(self.child.pid) == self.child.pid
            print(f"child detached and alive: {alive}", file=sys.stderr, flush=True)
        return decision.legal[0]
