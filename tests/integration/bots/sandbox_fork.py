"""A process bomb in its first act: starts sleeping processes until refused (stopping by
itself at BOUND), reports the count, kills and reaps them (its own), and plays on.

posix_spawn rather than fork: a fork of a process with gRPC threads runs gRPC's fork
handlers, which abort when no thread can be started; the count must be the limit's doing.
"""

import os
import signal
import sys
from typing import Any

from saloon.sdk import Bot, Decision

BOUND = 300
SLEEP = "/bin/sleep"


class ProcessBomb(Bot):
    def __init__(self) -> None:
        self.done = False

    def act(self, decision: Decision[Any, Any]) -> Any:
        if not self.done:
            self.done = True
            started, error, children = 0, "none", []
            while started < BOUND:
                try:
                    children.append(os.posix_spawn(SLEEP, [SLEEP, "60"], {}))
                except OSError as exc:
                    error = repr(exc)
                    break
                started += 1
            print(f"forked {started} refused by {error}", file=sys.stderr, flush=True)
            for pid in children:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        return decision.legal[0]
