"""Starts a child that detaches with setsid and lives on (bounded: sleeps 10 min), keeping
stderr open; the match must end on time and nothing may outlive the sandbox."""

import json
import os
import sys

with open(os.path.join(os.path.dirname(__file__), "target.json")) as _fh:
    TARGET = json.load(_fh)
done = False


def act(decision):
    global done
    if not done:
        done = True
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                # The marker lets the test find this process on the host, if it escaped.
                os.execv("/bin/sleep", ["sleep", TARGET["marker"]])
            os._exit(0)
        print("CONTAINED: a detached child sleeps on", file=sys.stderr)
    return decision.legal[0]
