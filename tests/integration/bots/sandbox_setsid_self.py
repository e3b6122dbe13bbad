"""Moves its own runtime process out of the referee's process group (setsid), and starts
a child that does the same; the child stops by itself after CHILD_BOUND_S."""

import os
import subprocess
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo

CHILD_BOUND_S = 120


class SetsidSelf(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        try:
            os.setsid()  # the runtime itself leaves the group the referee kills
        except PermissionError:
            os.setpgid(0, 0)  # already a group leader: a group of its own then
        argv = ["/bin/sh", "-c", f"sleep {CHILD_BOUND_S}", f"saloon-token-{info.seed}"]
        subprocess.Popen(argv, start_new_session=True)

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[0]
