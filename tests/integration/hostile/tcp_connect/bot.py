"""Connects to the listener the test opened on the host's 127.0.0.1: must fail."""

import json
import os
import socket
import sys

with open(os.path.join(os.path.dirname(__file__), "target.json")) as _fh:
    TARGET = json.load(_fh)
done = False


def act(decision):
    global done
    if not done:
        done = True
        try:
            with socket.create_connection(("127.0.0.1", TARGET["port"]), timeout=2) as s:
                s.sendall(b"ESCAPED")
                reply = s.recv(64)
        except OSError as exc:
            print(f"CONTAINED: connect to 127.0.0.1:{TARGET['port']}: {exc}", file=sys.stderr)
        else:
            raise RuntimeError(f"ESCAPED: talked to 127.0.0.1:{TARGET['port']}: {reply!r}")
    return decision.legal[0]
