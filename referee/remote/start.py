"""A sandboxed seat's start: every wait from the launch of a bot runtime to its Ready.

The start of a seat whose runtime the sandbox launches (a process, a container) is split
between the platform and the bot, and each wait here has a bound:

1. :func:`wait_for_marker`, the platform's part: the runtime up until it writes its
   loading marker (saloon.sdk.protocol.loading_marker), at most
   :func:`~saloon.referee.limits.platform_start_s` after the launch (read when a seat
   starts); over it, PlatformStartTimeout (the match is retried, the bot not charged).
2. :func:`serve_by`, the bot's part: its import and set-up until its socket serves, by
   the bot's start deadline; over it, a TIMEOUT of the bot's.
3. :func:`connect_unclocked`: the socket must answer the HTTP/2 handshake (a raw probe:
   the client preface in, a SETTINGS frame out), on the bot's clock, given at least
   :data:`HANDSHAKE_FLOOR_S`: anything else that answers (an HTTP/1.1 error, garbage) is
   a fatal INVALID of the bot's at once, and no answer by then a TIMEOUT of the bot's.
   Then the referee's gRPC connection, off the bot's clock while it makes progress (a
   loaded machine's handshake is not the bot's set-up), at most the platform's bound; a
   connection that fails is probed again and the bot's clock runs on.
4. The match start is written and the seat waits for the Ready until the (moved)
   deadline (saloon.referee.remote.seat).

A bot that takes its runtime's socket over during its import (it may: the socket is
bound by the runtime only after the import) is thus charged within its start time,
whatever its socket answers or withholds.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path

import grpc
import grpc.aio

from saloon.referee.errors import PlatformStartTimeout
from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.limits import platform_start_s
from saloon.referee.remote.seat import START_POLL_S, BotConnection, GrpcSeat

#: How often the start-up checks the bot's runtime and its socket.
POLL_S = 0.005
#: Time the handshake probe gets even when the bot's start time is (nearly) spent: an
#: honest runtime answers at once, a loaded machine may take a moment.
HANDSHAKE_FLOOR_S = 1.0
#: Longest single wait of a probe for an answer (the runtime is checked between waits).
PROBE_WAIT_S = 0.5
#: The HTTP/2 client preface and an empty SETTINGS frame: what a gRPC server must answer.
HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS = 4
#: The fault of a socket that answers something else than HTTP/2.
NOT_GRPC = "the bot's socket does not speak gRPC (no HTTP/2 handshake)"

CheckAlive = Callable[[], None]


class Handshake(Enum):
    """What a socket answered the HTTP/2 client preface with."""

    #: A SETTINGS frame: an HTTP/2 server.
    HTTP2 = "http2"
    #: Something else: not an HTTP/2 server (an HTTP/1.1 error, garbage).
    GARBAGE = "garbage"
    #: Nothing in time, refused, or closed without a word.
    NONE = "none"


def accepts(path: Path) -> bool:
    """True when a unix socket at ``path`` accepts a connection now (never waits: a full
    backlog is a no)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(PROBE_WAIT_S)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def handshake(path: Path, wait_s: float = PROBE_WAIT_S) -> Handshake:
    """Send the HTTP/2 client preface to the socket at ``path``; what it answers with in
    ``wait_s`` (at most, in all)."""
    until = time.monotonic() + wait_s
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(max(0.001, wait_s))
    head = b""
    try:
        probe.connect(str(path))
        probe.sendall(HTTP2_PREFACE)
        while len(head) < 4:
            left = until - time.monotonic()
            if left <= 0:
                break
            probe.settimeout(left)
            chunk = probe.recv(9 - len(head))
            if not chunk:
                break
            head += chunk
    except OSError:  # refused, reset, a full backlog or silent: not garbage, not there
        pass
    finally:
        probe.close()
    if len(head) < 4:
        return Handshake.NONE
    return Handshake.HTTP2 if head[3] == _SETTINGS else Handshake.GARBAGE


def answers_garbage(path: Path, wait_s: float = HANDSHAKE_FLOOR_S) -> bool:
    """True when the socket at ``path`` answers an HTTP/2 preface with something else."""
    return handshake(path, wait_s) is Handshake.GARBAGE


def wait_for_marker(marker: Path, since: float, check_alive: CheckAlive) -> float:
    """Wait for a runtime's loading marker (sdk.protocol.loading_marker), at most the
    platform's start bound after ``since`` (monotonic); when it appeared (monotonic).

    ``check_alive`` raises when the runtime died meanwhile (its own fault or the
    platform's, as it decides). PlatformStartTimeout when the marker is late: the runtime
    never got as far as loading the bot, so the bot is not to blame.
    """
    bound = platform_start_s()
    while not marker.exists():
        check_alive()
        if time.monotonic() - since >= bound:
            raise PlatformStartTimeout(
                f"the bot runtime did not start within {bound:g} s "
                "(the machine is overloaded or the sandbox is broken; not the bot's fault)"
            )
        time.sleep(POLL_S)
    return time.monotonic()


def serve_by(
    serving: Callable[[], bool], check_alive: CheckAlive, deadline: float, start_s: float
) -> None:
    """Wait until ``serving()`` (the runtime has bound its socket); a TIMEOUT of the bot's
    at ``deadline`` (monotonic), which ``start_s`` (the bot's start time) is named by."""
    while not serving():
        check_alive()
        if time.monotonic() >= deadline:
            raise SeatFault(
                FaultKind.TIMEOUT,
                f"the bot did not load and serve within its start time ({start_s * 1000:.0f} ms)",
            )
        time.sleep(POLL_S)


def wait_handshake(path: Path, check_alive: CheckAlive, deadline: float, start_s: float) -> None:
    """Wait until the socket at ``path`` answers the HTTP/2 handshake: a fatal INVALID at
    once when it answers anything else, a TIMEOUT of the bot's at ``deadline``."""
    while True:
        check_alive()
        left = deadline - time.monotonic()
        answer = handshake(path, min(PROBE_WAIT_S, max(POLL_S, left)))
        if answer is Handshake.HTTP2:
            return
        if answer is Handshake.GARBAGE:
            raise SeatFault(FaultKind.INVALID, NOT_GRPC, fatal=True)
        if time.monotonic() >= deadline:
            raise SeatFault(
                FaultKind.TIMEOUT,
                "the bot's socket did not answer the HTTP/2 handshake within its start time "
                f"({start_s * 1000:.0f} ms)",
            )
        time.sleep(POLL_S)


def connect_unclocked(
    seat: GrpcSeat, path: Path, deadline: float, start_s: float, check_alive: CheckAlive
) -> float:
    """Connect ``seat`` to its runtime, whose socket at ``path`` serves already, then
    write the match start; the deadline of the bot's Ready.

    The socket must answer the HTTP/2 handshake by ``deadline`` (at least
    :data:`HANDSHAKE_FLOOR_S` from now; see the module docstring). Then the referee's gRPC
    connection: while it makes progress, off the bot's clock (``deadline`` is moved by
    the time from here until it is up: the referee's and the runtime's handshake, slow
    on a loaded machine, is not the bot's set-up), for at most the platform's start
    bound; when it fails (the socket took the handshake and then broke it), the deadline
    is moved only by the time until then, and the socket is probed again (INVALID when
    it answers garbage now).
    """
    started = time.monotonic()
    wait_handshake(path, check_alive, max(deadline, started + HANDSHAKE_FLOOR_S), start_s)
    if seat.connection is None:
        seat.connection = BotConnection(seat.target)
    connection = seat.connection
    until = time.monotonic() + platform_start_s()
    connected = connection.run(_connected(connection.channel, until, check_alive))
    moved = deadline + (time.monotonic() - started)
    if not connected and answers_garbage(path):
        raise SeatFault(FaultKind.INVALID, NOT_GRPC, fatal=True)
    return seat.open_stream(moved)


async def _connected(channel: grpc.aio.Channel, until: float, check_alive: CheckAlive) -> bool:
    """Wait until ``channel`` is connected (True), has failed to connect, or it is
    ``until`` (monotonic; False); ``check_alive`` is called between waits."""
    state = channel.get_state(try_to_connect=True)
    while state is not grpc.ChannelConnectivity.READY:
        if state in (grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN):
            return False
        left = until - time.monotonic()
        if left <= 0:
            return False
        check_alive()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(channel.wait_for_state_change(state), min(START_POLL_S, left))
        state = channel.get_state(try_to_connect=True)
    return True
