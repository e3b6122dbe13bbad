"""At import, takes its own runtime's socket over with a listener that answers every
connection with ``HTTP/1.1 400 Bad Request`` and garbage bytes (no HTTP/2, no gRPC), and
never returns from its import.

Bounded: the listener stops, and the process exits, after BOUND_S seconds or
MAX_CONNECTIONS connections, whichever comes first. It aims only at the socket its test
planted: ``target.json`` beside this file names the socket's file name, and the bot acts
only on the ``--socket`` path its own runtime was started with, when that is its name;
otherwise it does nothing and plays as an honest bot.
"""

import json
import os
import socket
import sys
import time

BOUND_S = 90
MAX_CONNECTIONS = 10_000
ANSWER = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
GARBAGE = bytes(range(256)) * 4


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


def _serve_garbage(path: str) -> None:
    if os.path.lexists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    listener.settimeout(0.5)
    end = time.monotonic() + BOUND_S
    served = 0
    print(f"raw_socket: answering garbage on {os.path.basename(path)}", file=sys.stderr)
    while time.monotonic() < end and served < MAX_CONNECTIONS:
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            continue
        served += 1
        with conn:
            conn.settimeout(0.5)
            try:
                conn.recv(4096)
                conn.sendall(ANSWER + GARBAGE)
            except OSError:
                pass
    print(f"raw_socket: bound reached after {served} connections", file=sys.stderr)
    os._exit(0)


_path = _target()
if _path is not None:
    _serve_garbage(_path)


def act(decision):
    return decision.legal[0]
