"""Seats whose bot answers over the bot protocol (gRPC): a runtime that serves a socket.

One module per concept; this package's names are its public API:

* :mod:`~saloon.referee.remote.loop`: the thread's gRPC event loop (:func:`thread_loop`),
  run only inside a seat's own calls: a seat starts no thread.
* :mod:`~saloon.referee.remote.stream`: one ``Bot.Play`` stream (raw bytes, a reader, an
  inbox, the deadline timer of a decision).
* :mod:`~saloon.referee.remote.seat`: :class:`GrpcSeat`, a seat at a gRPC target, and
  :class:`BotConnection`, a warm channel whose seats play match after match on kept
  streams.
* :mod:`~saloon.referee.remote.start`: a sandboxed seat's start, every wait bounded: the
  platform's part (saloon.referee.limits.platform_start_s), the bot's import and set-up
  on its start clock, the HTTP/2 handshake probe, the referee's connection.

A bot run as its own runtime process (the process sandbox) is a seat of these:
saloon.referee.process.seat.ProcessSeat, above this package (which never imports it).
"""

from __future__ import annotations

from saloon.referee.errors import ConnectionThreadError, PlatformStartTimeout
from saloon.referee.remote.loop import thread_loop
from saloon.referee.remote.seat import END_GRACE_S, MAX_DROPPED, BotConnection, GrpcSeat
from saloon.referee.remote.start import (
    connect_unclocked,
    handshake,
    serve_by,
    wait_for_marker,
)
from saloon.referee.remote.stream import MAX_BACKLOG

__all__ = [
    "END_GRACE_S",
    "MAX_BACKLOG",
    "MAX_DROPPED",
    "BotConnection",
    "ConnectionThreadError",
    "GrpcSeat",
    "PlatformStartTimeout",
    "connect_unclocked",
    "handshake",
    "serve_by",
    "thread_loop",
    "wait_for_marker",
]
