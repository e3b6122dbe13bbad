"""At import, takes its own runtime's socket over with a listener whose backlog it fills
itself and that never accepts (a blocking connect to it never returns), and never returns
from its import.

Bounded: it exits after BOUND_S seconds. It aims only at the socket its test planted:
``target.json`` beside this file names the socket's file name, and the bot acts only on
the ``--socket`` path its own runtime was started with, when that is its name; otherwise
it does nothing and plays as an honest bot.
"""

import json
import os
import socket
import sys
import time

BOUND_S = 90
#: Connections of its own it queues at most (a backlog of 0 holds one or two).
MAX_QUEUED = 64


def _target() -> str | None:
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "target.json")) as f:
            name = json.load(f)["socket"]
    except (OSError, ValueError, KeyError):
        return None
    argv = sys.argv
    if "--socket" not in argv[:-1]:
        return None
    path = argv[argv.index("--socket") + 1]
    return path if os.path.basename(path) == name else None


def _fill_backlog(path: str) -> None:
    if os.path.lexists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(0)
    queued = []
    while len(queued) < MAX_QUEUED:
        own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        own.setblocking(False)
        try:
            own.connect(path)
        except BlockingIOError:
            own.close()
            break
        queued.append(own)
    print(f"full_backlog: {len(queued)} queued on {os.path.basename(path)}", file=sys.stderr)
    time.sleep(BOUND_S)
    print("full_backlog: bound reached", file=sys.stderr)
    os._exit(0)


_path = _target()
if _path is not None:
    _fill_backlog(_path)


def act(decision):
    return decision.legal[0]
