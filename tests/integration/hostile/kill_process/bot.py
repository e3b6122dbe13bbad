"""Kills the host process the test started (its pid in target.json): it must not reach it."""

import json
import os
import signal
import sys

with open(os.path.join(os.path.dirname(__file__), "target.json")) as _fh:
    TARGET = json.load(_fh)
done = False


def act(decision):
    global done
    if not done:
        done = True
        pid = TARGET["pid"]
        if os.path.exists(f"/proc/{pid}"):
            # The number names a process of this sandbox's own pid namespace, not the
            # test's: never signal what the test did not plant.
            print(f"CONTAINED: pid {pid} here is not the host's process", file=sys.stderr)
            return decision.legal[0]
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError as exc:
            print(f"CONTAINED: kill {pid}: {exc}", file=sys.stderr)
        else:
            raise RuntimeError(f"ESCAPED: killed pid {pid}")
    return decision.legal[0]
