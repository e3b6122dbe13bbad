"""Serve a bot: ``python -m saloon.sdk.run BOT --socket PATH`` (or ``--port N``).

BOT is a bot file, a bot folder (entry point ``bot.py``) or ``house:NAME``. The runtime
listens on the unix socket PATH (what the referee and the containers use) or on
127.0.0.1:N for development, and serves matches until it is terminated (SIGTERM/SIGINT).
With ``--socket PATH`` it first writes ``PATH.loading`` (:func:`loading_marker`) once the
runtime itself is up, just before it loads the bot: what the sandbox's start took until
then is the platform's, the rest (the bot's import and set-up) is the bot's.
Anything the bot prints goes to stderr, which the referee keeps for the bot's owner.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from types import FrameType

from saloon.sdk.errors import BotLoadError
from saloon.sdk.loader import load_bot
from saloon.sdk.output import MarkedStream
from saloon.sdk.protocol import loading_marker, unix_target
from saloon.sdk.runtime import DEFAULT_MAX_MATCHES, create_server


def main(argv: list[str] | None = None) -> int:
    """Load the bot, serve it until terminated; 2 when the bot cannot be loaded."""
    parser = argparse.ArgumentParser(prog="python -m saloon.sdk.run", description=__doc__)
    parser.add_argument("bot", help="a bot file, a bot folder or house:NAME")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket", help="serve on this unix socket path")
    where.add_argument("--port", type=int, help="serve on 127.0.0.1:PORT (development)")
    parser.add_argument("--max-matches", type=int, default=DEFAULT_MAX_MATCHES)
    args = parser.parse_args(argv)

    # print() in a bot is debugging output: keep stdout free, send it where stderr goes,
    # marked by decision (saloon.sdk.output) so that its owner sees when it was printed.
    sys.stderr = sys.stdout = MarkedStream(sys.__stderr__ or sys.stderr)
    if args.socket:
        # The runtime is up (Python, gRPC, the SDK imported): from here on the clock is the
        # bot's. Written atomically, so the sandbox never reads half a marker.
        marker = loading_marker(args.socket)
        with open(marker + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
        os.replace(marker + ".tmp", marker)
    try:
        factory = load_bot(args.bot)
    except BotLoadError as exc:
        # The one line first (the referee reports it), then the traceback below it.
        print(f"saloon.sdk.run: cannot load the bot: {exc}", file=sys.stderr)
        if exc.__cause__ is not None and not isinstance(exc.__cause__, SyntaxError):
            traceback.print_exception(exc.__cause__, file=sys.stderr)
        return 2
    if args.socket:
        if os.path.exists(args.socket):
            os.unlink(args.socket)
        address = unix_target(args.socket)
    else:
        address = f"127.0.0.1:{args.port}"
    server, port = create_server(factory, address, os.path.basename(args.bot), args.max_matches)
    if args.port is not None:
        print(f"saloon.sdk.run: serving {args.bot} on 127.0.0.1:{port}", file=sys.stderr)

    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stop.wait()
    server.stop(grace=0.5).wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
