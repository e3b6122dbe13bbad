"""Reports what it can see of the host: its environment's names, its uid, a planted secret."""

import os
import sys
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo


class Env(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        print("env:", ",".join(sorted(os.environ)), file=sys.stderr)
        print("uid:", os.getuid(), "gid:", os.getgid(), "groups:", os.getgroups(), file=sys.stderr)
        if any("planted-secret" in value for value in os.environ.values()):
            print("SAW THE PLANTED SECRET", file=sys.stderr)
        sys.stderr.flush()

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[0]
