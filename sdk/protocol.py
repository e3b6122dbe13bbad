"""Constants of the bot protocol (proto/saloon/v1/bot.proto) shared by referee and runtime."""

from __future__ import annotations

import os

#: The protocol version carried by MatchStart and Ready.
PROTOCOL_VERSION = 1
#: The one RPC: a bidirectional stream per match and seat.
PLAY_METHOD = "/saloon.v1.Bot/Play"
#: The largest message the referee accepts from a bot (an answer is a few bytes).
MAX_BOT_MESSAGE_BYTES = 64 * 1024
#: The largest message a bot accepts from the referee (observations are a few KiB).
MAX_REFEREE_MESSAGE_BYTES = 16 * 1024 * 1024


def unix_target(socket_path: str | os.PathLike[str]) -> str:
    """The gRPC target of a unix socket path (absolute, so the cwd does not matter)."""
    return "unix:" + os.path.abspath(os.fspath(socket_path))


#: Appended to a runtime's socket path: the file that says the runtime is up and about to
#: load its bot (``python -m saloon.sdk.run BOT --socket PATH`` writes it). The sandbox's
#: start of a seat is the platform's until it appears, the bot's after.
LOADING_SUFFIX = ".loading"


def loading_marker(socket_path: str) -> str:
    """The file a runtime serving on ``socket_path`` writes just before it loads its bot."""
    return socket_path + LOADING_SUFFIX
