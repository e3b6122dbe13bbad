"""Forks up to 300 sleeping children: the pids limit must stop it first."""

import os
import signal
import sys
import time

BOUND = 300
done = False


def act(decision):
    global done
    if done:
        return decision.legal[0]
    done = True
    children = []
    failure = None
    while len(children) < BOUND:
        try:
            pid = os.fork()
        except OSError as exc:
            failure = exc
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:  # only its own children
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if failure is None:
        raise RuntimeError(f"ESCAPED: forked {BOUND} children")
    print(f"CONTAINED: fork failed after {len(children)} children: {failure}", file=sys.stderr)
    return decision.legal[0]
