"""Forks up to 300 sleeping children at import: the pids limit must stop it first."""

import os
import signal
import sys
import time

BOUND = 300


def bomb():
    """Fork until the kernel refuses or the bound is reached; then end every child."""
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
        print(f"ESCAPED: forked {BOUND} children", file=sys.stderr)
        raise SystemExit(1)
    print(f"CONTAINED: fork failed after {len(children)} children: {failure}", file=sys.stderr)


bomb()


def act(decision):
    return decision.legal[0]
