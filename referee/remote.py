"""Seats whose bot answers over the bot protocol (gRPC): a running runtime, or a process.

One bidirectional stream per match and seat: a unary call per decision would cost more than
a message on an open stream (bench/protocol.py measures the round trip against its floor).
The referee is the gRPC client. Raw bytes travel on the stream and are parsed here, so a
malformed message is an INVALID answer rather than a dead stream.

Threads and connections. A seat starts no thread. Its stream runs on ``grpc.aio`` on an
event loop of the calling thread (:func:`thread_loop`), run only inside the seat's own
calls: ``decide`` queues the request and runs the loop until the answer is in the seat's
inbox or the decision deadline plus what is left of the seat's time bank has passed, so a
silent bot can never hold a match past its clocks (no hand-off to another thread: on a
busy machine each costs hundreds of microseconds). An answer that arrives after its
deadline carries the index of its (old) request and is dropped.

Warm seats: the API for a runtime that plays many matches in sequence (a warm container)::

    connection = BotConnection("unix:/run/bot-1/bot.sock")  # one channel, kept open
    connection.wait_ready(timeout_s=10)      # health check: True once it serves
    for match in matches:
        seat = connection.seat("alice@v3")   # a Seat for one match (on a kept stream)
        play_match(game, [seat, ...], seed)  # the match calls start/decide/finish/close
    connection.close()                       # ends the channel (and any open stream)

``connection.seat()`` costs no channel, no thread and, after a clean match, no new stream
either: the connection keeps the stream (see :class:`GrpcSeat`, "kept streams"), so a warm
seat's start is one round trip (MatchStart -> Ready) and its finish one write
(bench/protocol.py measures a seat's start + finish). Closing a warm seat never closes its
connection, and finishing never waits on the bot. A kept stream holds one of the runtime's
concurrent matches (``--max-matches``) until the next match or the connection's close. A
connection belongs to the thread that opened it: use it, its seats, and close it there
(:class:`ConnectionThreadError` otherwise); run concurrent matches in separate threads
with a connection each, or in separate processes. ``GrpcSeat(target, bot_id)`` still
opens (and closes) a connection of its own. Subclasses (a process, a container) override
:meth:`GrpcSeat.launch`, :meth:`GrpcSeat._check_alive` (raise a CRASH when the runtime is
known to be gone) and :meth:`Seat.diagnostics`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import grpc
import grpc.aio
import orjson
from google.protobuf.message import DecodeError

from saloon.referee.botprocess import BotProcess
from saloon.referee.errors import ConnectionThreadError, PlatformStartTimeout
from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS, SandboxLimits
from saloon.referee.seats import DecisionRequest, EndInfo, Seat, StartInfo
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import (
    MAX_BOT_MESSAGE_BYTES,
    PLAY_METHOD,
    PROTOCOL_VERSION,
    loading_marker,
    unix_target,
)

log = logging.getLogger(__name__)

#: Messages from a bot waiting unread before the bot counts as flooding (a fatal INVALID).
MAX_BACKLOG = 64
#: Unasked answers (late or duplicate) a seat may send in a match before it counts as
#: flooding; an honest bot sends at most one per timeout, and timeouts are few.
MAX_DROPPED = 64
#: Time given to a bot to take the match end and close its stream.
END_GRACE_S = 0.5
#: How often the start-up checks the bot process and its socket.
POLL_S = 0.005
#: The platform's part of a seat's start (the runtime's process or container up, Python
#: and the SDK imported, until the runtime says it is about to load the bot): bounded by
#: this, never by the bot's start time. Over it: PlatformStartTimeout, the match retried.
#: The bot's part (its import and set-up, until it is ready) is clocked from then on
#: against the match's start_ms and charged to the bot. ``$SALOON_PLATFORM_START_S``
#: overrides the default, read once when this module is imported (a slower machine or
#: runtime; a test that wants an overrun).
DEFAULT_PLATFORM_START_S = 60.0
PLATFORM_START_ENV = "SALOON_PLATFORM_START_S"


def platform_start_s() -> float:
    """The platform's start bound: ``$SALOON_PLATFORM_START_S`` (seconds > 0), else the
    default (with a warning when it is set to something else)."""
    raw = os.environ.get(PLATFORM_START_ENV, "").strip()
    if not raw:
        return DEFAULT_PLATFORM_START_S
    with contextlib.suppress(ValueError):
        if 0 < (value := float(raw)) < float("inf"):
            return value
    log.warning(
        "$%s=%r is not a number of seconds > 0: %.0f s",
        PLATFORM_START_ENV,
        raw,
        DEFAULT_PLATFORM_START_S,
    )
    return DEFAULT_PLATFORM_START_S


PLATFORM_START_S = platform_start_s()
#: How often a seat waiting for Ready checks that its bot process still runs.
START_POLL_S = 0.05
#: The HTTP/2 client preface and an empty SETTINGS frame: what a gRPC server must answer.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_SETTINGS = 4

_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_BOT_MESSAGE_BYTES),
    ("grpc.max_send_message_length", -1),
    ("grpc.initial_reconnect_backoff_ms", 20),
    ("grpc.max_reconnect_backoff_ms", 100),
    ("grpc.enable_retries", 0),
    # A connection per BotConnection: never share one subchannel between two bots.
    ("grpc.use_local_subchannel_pool", 1),
]
_END_OF_STREAM = object()
#: What writing to a stream that has ended raises.
_STREAM_GONE = (grpc.RpcError, grpc.aio.UsageError, asyncio.InvalidStateError)
_T = TypeVar("_T")


# -- the event loops ----------------------------------------------------------------------
_local = threading.local()


def thread_loop() -> asyncio.AbstractEventLoop:
    """This thread's gRPC event loop: made on first use, kept for the thread's life.

    The loop runs only inside a seat's calls (``run_until_complete`` on the caller's own
    thread): no hand-off to another thread, which costs hundreds of microseconds on a busy
    machine. One loop per thread for good: grpc.aio mishandles a second loop in a thread.
    """
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None)
    if loop is None or getattr(_local, "pid", None) != os.getpid():
        loop = asyncio.new_event_loop()
        _local.loop = loop
        _local.pid = os.getpid()
    return loop


# -- a warm connection -------------------------------------------------------------------
class BotConnection:
    """One gRPC channel to a bot runtime, reused by the seats of match after match.

    It belongs to the thread that opened it (its streams run on that thread's loop): use
    it, its seats and close it from that thread. Between matches it keeps the last clean
    match's stream (when the runtime keeps streams) for the next seat.
    """

    def __init__(self, target: str) -> None:
        self.target = target
        self.loop = thread_loop()
        self.thread_id = threading.get_ident()
        self.closed = False
        #: A kept stream between two matches (see :class:`GrpcSeat`), or None.
        self._kept: _Stream | None = None
        #: Streams opened on this connection so far (a kept stream counts once).
        self.streams = 0
        self.channel: grpc.aio.Channel = self.run(self._open())

    async def _open(self) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(self.target, options=_CHANNEL_OPTIONS)

    def check_thread(self) -> None:
        """ConnectionThreadError unless called from the thread that opened the connection."""
        if threading.get_ident() != self.thread_id:
            raise ConnectionThreadError(
                f"the connection to {self.target} is used from another thread than its own"
            )

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run ``coro`` on this connection's loop, in the calling (owning) thread."""
        try:
            self.check_thread()
        except ConnectionThreadError:
            coro.close()
            raise
        return self.loop.run_until_complete(coro)

    def seat(self, bot_id: str) -> GrpcSeat:
        """A seat for one match, on this connection (one stream; closing it keeps this)."""
        return GrpcSeat(self.target, bot_id, connection=self)

    def wait_ready(self, timeout_s: float) -> bool:
        """Health check: True once the channel is connected (waits up to ``timeout_s``)."""
        if self.closed:
            return False

        async def ready() -> bool:
            try:
                await asyncio.wait_for(self.channel.channel_ready(), timeout_s)
            except TimeoutError:
                return False
            return True

        return self.run(ready())

    def healthy(self) -> bool:
        """True when the channel is connected now (no waiting)."""
        if self.closed:
            return False
        state = self.channel.get_state(try_to_connect=True)
        return state is grpc.ChannelConnectivity.READY

    def _take_kept(self) -> _Stream | None:
        """The kept stream for a new match, if there is one still open."""
        stream, self._kept = self._kept, None
        if stream is None:
            return None
        if not stream.open():
            stream.cancel()
            return None
        return stream

    def _keep(self, stream: _Stream) -> bool:
        """Keep ``stream`` for the next match (False: one is kept already)."""
        if self._kept is not None or self.closed:
            return False
        self._kept = stream
        return True

    def close(self) -> None:
        """Close the channel and cancel any stream still open on it; idempotent."""
        if self.closed:
            return
        self.closed = True
        self._kept = None
        if threading.get_ident() != self.thread_id:
            log.warning("the connection to %s is left to its own thread", self.target)
            return
        self.run(self.channel.close())


# -- one stream --------------------------------------------------------------------------
class _Stream:
    """One ``Bot.Play`` stream: its call, its reader, the bot's messages not read yet.

    The reader puts each message in ``inbox`` and stops the loop when the seat waits on
    this stream (``waiting``); once the stream has ended, ``broken`` says why.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.call: grpc.aio.StreamStreamCall | None = None
        self.inbox: collections.deque[Any] = collections.deque()
        self.waiting = False
        self.opening: asyncio.Task[None] | None = None
        self.reader: asyncio.Task[None] | None = None
        #: The last write (done once it is).
        self.writer: asyncio.Future[None] | None = None
        self.broken: SeatFault | None = None
        #: The pending deadline timer of the waits (see :meth:`exchange`).
        self.timer: asyncio.TimerHandle | None = None

    def start(self, channel: grpc.aio.Channel, first: bytes) -> None:
        """Open the stream and write ``first`` (at the loop's next run, not a run of its own)."""
        self.opening = self.loop.create_task(self._open(channel, first))

    async def _open(self, channel: grpc.aio.Channel, first: bytes) -> None:
        call = channel.stream_stream(PLAY_METHOD)(wait_for_ready=True)
        self.call = call
        self.reader = self.loop.create_task(self._read(call))
        # A task of its own: the stream may still be connecting, and the short waits for
        # the answer must not cancel the write.
        self.writer = self.loop.create_task(_write(call, first))

    def open(self) -> bool:
        """True while the stream is open (as far as this side has seen)."""
        call = self.call
        return call is not None and self.broken is None and not call.done()

    def send(self, message: bytes) -> None:
        """Queue ``message`` after the writes before it (in the background: a write blocks
        only when the bot reads nothing, and then the clock runs out while it stays queued).

        With no write going and the loop not running, the write starts at once (see
        :func:`_start_eagerly`): no run of the loop just to hand it to gRPC.
        """
        call = self.call
        if call is None:
            return
        loop = self.loop
        writer = self.writer
        if loop.is_running() or (writer is not None and not writer.done()):
            self.writer = loop.create_task(_write(call, message, writer))
        else:
            self.writer = _start_eagerly(loop, _write(call, message))

    def exchange(self, send: bytes | None, timeout_s: float) -> Any:
        """Write ``send`` (if any), then the bot's next message (None: none in time).

        The hot path of a decision, so it drives the loop by hand rather than through
        ``run_until_complete`` and a task: the reader stops the loop as soon as it has
        put a message in the inbox, a timer stops it at the deadline. The timer is kept
        from one call to the next while it is due no later than the new deadline (it
        only stops a loop this stream waits on): an early one wakes the wait, which then
        sets one for its own deadline.
        """
        if send is not None:
            self.send(send)
        inbox = self.inbox
        if not inbox:
            loop = self.loop
            deadline = loop.time() + timeout_s
            timer = self.timer
            if timer is None or timer.when() > deadline:
                if timer is not None:
                    timer.cancel()
                self.timer = loop.call_at(deadline, self._timed_out)
            self.waiting = True
            try:
                while True:
                    loop.run_forever()
                    if inbox or loop.time() >= deadline:
                        break
                    if self.timer is None:  # an earlier deadline's timer woke this wait
                        self.timer = loop.call_at(deadline, self._timed_out)
            finally:
                self.waiting = False
        return inbox.popleft() if inbox else None

    def _timed_out(self) -> None:
        self.timer = None
        if self.waiting:
            self.loop.stop()

    def cancel(self) -> None:
        """Cancel the stream (or its opening) and any write still going."""
        opening = self.opening
        if opening is not None and not opening.done():
            opening.cancel()  # the match ended before the stream was even opened
        if self.call is not None and not self.call.done():
            self.call.cancel()
        if self.writer is not None and not self.writer.done():
            self.writer.cancel()
        self.drop_timer()

    def drop_timer(self) -> None:
        """Cancel the pending deadline timer (the stream waits no more)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    async def _read(self, call: grpc.aio.StreamStreamCall) -> None:
        """The stream's reader: bot messages into the inbox, then why the stream ended."""
        inbox = self.inbox
        try:
            while True:
                raw = await call.read()
                if raw is grpc.aio.EOF:
                    self.broken = self.broken or SeatFault(
                        FaultKind.CRASH, "the bot closed its stream"
                    )
                    break
                if len(inbox) >= MAX_BACKLOG:
                    self.broken = SeatFault(
                        FaultKind.INVALID,
                        f"flooded the referee with over {MAX_BACKLOG} unasked messages",
                        fatal=True,
                    )
                    call.cancel()
                    break
                inbox.append(raw)
                if self.waiting:
                    self.loop.stop()
        except grpc.RpcError as exc:
            code = exc.code()
            # (RESOURCE_EXHAUSTED is also a runtime refusing a stream over its limit of
            # concurrent matches: not the bot's oversized message, a broken stream.)
            details = str(exc.details() or "")
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED and "limit exceeded" not in details:
                self.broken = SeatFault(
                    FaultKind.INVALID,
                    f"sent a message over {MAX_BOT_MESSAGE_BYTES} bytes",
                    fatal=True,
                )
            elif self.broken is None:
                self.broken = SeatFault(FaultKind.CRASH, f"stream broken: {code.name}: {details}")
        except asyncio.CancelledError:
            self.broken = self.broken or SeatFault(FaultKind.CRASH, "stream cancelled")
        inbox.append(_END_OF_STREAM)
        if self.waiting:
            self.loop.stop()


# -- a seat over gRPC ---------------------------------------------------------------------
class GrpcSeat(Seat):
    """A bot served by a runtime at a gRPC target (``unix:PATH`` or ``HOST:PORT``).

    Without ``connection`` the seat opens a channel of its own and closes it with the
    seat; with one (see :meth:`BotConnection.seat`) it only needs a stream on it, and
    takes the stream the connection kept from its last match when there is one.

    Kept streams: a seat on a warm connection asks the runtime to keep the stream
    (``MatchStart.keep_stream``). When the runtime agrees (``Ready.keeps_stream``) and the
    match went without a fault or an unasked message on this seat, ``finish`` writes the
    match end and leaves the stream to the connection; the next seat writes its match
    start on it and expects the runtime's ``ended`` (its on_match_end done, within
    ``END_GRACE_S``) and then ``ready``. Anything else (the stream ended, garbage, a stale
    message, no ``ended`` in time) and the seat drops that stream and opens a new one, so
    nothing of one match reaches the next.
    """

    timed = True

    def __init__(self, target: str, bot_id: str, connection: BotConnection | None = None) -> None:
        self.target = target
        self.bot_id = bot_id
        self.connection = connection
        self._owns_connection = connection is None
        self._stream: _Stream | None = None
        #: The match start, as written first on the stream.
        self._start_message: bot_pb2.MatchStart | None = None
        self._first = b""
        #: The stream was kept from an earlier match / is kept for the next one.
        self._reused = False
        self._kept = False
        #: The runtime agreed to keep the stream; something went wrong on it.
        self._keeps = False
        self._doubt = False
        self._closed = False
        self._finished = False
        self._dropped = 0

    @property
    def _broken(self) -> SeatFault | None:
        """Why this seat's stream ended, once it has."""
        return None if self._stream is None else self._stream.broken

    # -- the seat interface -------------------------------------------------------------
    def start(self, info: StartInfo) -> None:
        deadline = time.monotonic() + info.start_ms / 1000
        self._start_message = bot_pb2.MatchStart(
            protocol_version=PROTOCOL_VERSION,
            match_id=info.match_id,
            game=info.game,
            options_json=json.dumps(info.options, sort_keys=True),
            seat=info.seat,
            num_seats=info.num_seats,
            seed=info.seed,
            decision_ms=info.decision_ms,
            bank_ms=info.bank_ms,
            start_ms=info.start_ms,
        )
        try:
            self.launch()
            deadline = self._connect(deadline)
            message = self._first_answer(deadline)
            which = message.WhichOneof("message")
            if which == "error":
                raise SeatFault(_error_kind(message.error), message.error.detail)
            if which != "ready":
                raise SeatFault(FaultKind.INVALID, f"expected ready, got {which}", fatal=True)
            if message.ready.protocol_version != PROTOCOL_VERSION:
                raise SeatFault(
                    FaultKind.INVALID,
                    f"bot speaks protocol {message.ready.protocol_version}, not {PROTOCOL_VERSION}",
                    fatal=True,
                )
        except SeatFault:
            self._doubt = True
            raise
        self._keeps = message.ready.keeps_stream and not self._owns_connection

    def decide(self, request: DecisionRequest) -> int:
        index = request.index
        # Filled in place (no submessage built and copied in): ~1/3 faster.
        wire = bot_pb2.ToBot()
        ask = wire.decision
        ask.index = index
        ask.kind = request.kind
        # orjson: far faster than json.dumps here, the same compact UTF-8 text.
        ask.observation_json = orjson.dumps(request.observation)
        ask.legal_json = orjson.dumps(request.legal)
        ask.decision_ms = request.decision_ms
        ask.bank_ms = request.bank_ms
        payload = wire.SerializeToString()
        deadline = time.monotonic() + (request.decision_ms + request.bank_ms) / 1000
        send: bytes | None = payload
        try:
            while True:
                message = self._receive(deadline, f"decision {index}", send)
                send = None
                which = message.WhichOneof("message")
                if which == "decision":
                    if message.decision.index == index:
                        return message.decision.action
                elif which == "error":
                    if message.error.index == index:
                        raise SeatFault(_error_kind(message.error), message.error.detail)
                else:
                    raise SeatFault(FaultKind.INVALID, f"expected a decision, got {which}")
                # An answer to an earlier request (late: its time is gone) or a duplicate.
                self._doubt = True
                self._dropped += 1
                if self._dropped > MAX_DROPPED:
                    raise SeatFault(
                        FaultKind.INVALID,
                        f"flooded: over {MAX_DROPPED} unasked answers",
                        fatal=True,
                    )
        except SeatFault:
            self._doubt = True
            raise

    def finish(self, info: EndInfo) -> None:
        connection = self.connection
        stream = self._stream
        if connection is None or stream is None or stream.call is None:
            return
        if stream.broken is not None or self._finished or self._closed:
            return
        self._finished = True
        end = bot_pb2.ToBot(
            end=bot_pb2.MatchEnd(scores=info.scores, ranks=info.ranks)
        ).SerializeToString()
        if self._keeps and not self._doubt and not stream.inbox and connection._keep(stream):
            # The runtime answers with `ended` and waits for the next match on this stream:
            # start the write (at once: see _Stream.send) and leave the stream to the
            # connection.
            self._kept = True
            stream.send(end)
            writer = stream.writer
            if isinstance(writer, asyncio.Task) and not writer.done():
                loop = connection.loop  # queued behind a write: one run starts it
                loop.call_soon(loop.stop)
                loop.run_forever()
            return
        # A runtime that goes away with this seat gets time for its on_match_end; a warm
        # one only needs the write of the match end started (the SDK runtime then ends
        # the stream; the connection's next use sees it done).
        wait_s = END_GRACE_S if self._owns_connection else 0.0
        connection.run(self._end(end, wait_s))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        connection = self.connection
        if connection is None or connection.closed or self._kept:
            return
        stream = self._stream
        ended = self._finished and stream is not None and stream.broken is None
        if stream is not None:
            stream.drop_timer()
            call = stream.call
            if ended and not self._owns_connection and call is not None and not call.done():
                # A warm runtime ends the stream after the match end: cancel it only if it
                # has not by the time the connection's loop runs again after a grace.
                connection.loop.call_later(END_GRACE_S, call.cancel)
            elif not ended:
                stream.cancel()
        if self._owns_connection:
            connection.close()  # runs the loop: the cancellations complete
        elif not ended:
            connection.run(asyncio.sleep(0))

    # -- the stream ---------------------------------------------------------------------
    def _connect(self, deadline: float) -> float:
        """Open the match stream (on a connection of this seat's own unless given one),
        or take the one the connection kept, and write the match start on it; the
        deadline of the bot's answer (a sandbox's seat moves it: see ProcessSeat)."""
        if self.connection is None:
            self.connection = BotConnection(self.target)
        connection = self.connection
        connection.check_thread()
        start = self._start_message
        if start is not None:
            start.keep_stream = not self._owns_connection
        self._first = b"" if start is None else bot_pb2.ToBot(start=start).SerializeToString()
        stream = connection._take_kept() if not self._owns_connection else None
        if stream is not None:
            self._reused = True
            self._stream = stream
            stream.send(self._first)
        else:
            self._new_stream()
        return deadline

    def _new_stream(self) -> None:
        """A new stream on the connection, the match start written first."""
        connection = self.connection
        if connection is None:
            return
        self._reused = False
        connection.streams += 1
        self._stream = _Stream(connection.loop)
        self._stream.start(connection.channel, self._first)

    def _first_answer(self, deadline: float) -> bot_pb2.FromBot:
        """The bot's answer to the match start; on a kept stream, after its `ended`."""
        if self._reused:
            ended_by = min(deadline, time.monotonic() + END_GRACE_S)
            try:
                if self._receive(ended_by, "the last match end").WhichOneof("message") == "ended":
                    message = self._receive_start(deadline)
                    if message.WhichOneof("message") in ("ready", "error"):
                        return message
            except SeatFault as fault:
                if fault.kind is FaultKind.TIMEOUT and time.monotonic() >= deadline:
                    raise self._start_timed_out() from None
            # In doubt about the kept stream: drop it, start again on a new one.
            log.info("%s: a kept stream did not restart cleanly: a new stream", self.bot_id)
            if self._stream is not None:
                self._stream.cancel()
            self._new_stream()
        return self._receive_start(deadline)

    async def _end(self, end: bytes, wait_s: float) -> None:
        """Start writing the match end and the half-close; wait ``wait_s`` for the end."""
        stream = self._stream
        if stream is None or stream.call is None:
            return
        stream.writer = stream.loop.create_task(_write_end(stream.call, end, stream.writer))
        if wait_s > 0 and stream.reader is not None:
            await asyncio.wait([stream.reader], timeout=wait_s)
        else:
            await asyncio.sleep(0)

    def _start_timed_out(self) -> SeatFault:
        """The fault when no Ready came in time (a process seat can say more)."""
        return SeatFault(FaultKind.TIMEOUT, "not ready within the start time")

    def _receive(self, deadline: float, what: str, send: bytes | None = None) -> bot_pb2.FromBot:
        """Send ``send`` (if any), then the bot's next message; SeatFault on timeout, a
        broken stream or garbage."""
        raw = None
        stream = self._stream
        if stream is not None and self.connection is not None:
            self.connection.check_thread()
            raw = stream.exchange(send, max(0.0, deadline - time.monotonic()))
        if raw is None:
            raise SeatFault(FaultKind.TIMEOUT, f"no answer to {what} in time")
        if raw is _END_OF_STREAM:
            assert stream is not None
            stream.inbox.append(_END_OF_STREAM)  # every later request sees the end too
            self._check_alive()
            raise stream.broken or SeatFault(FaultKind.CRASH, "stream ended")
        try:
            return bot_pb2.FromBot.FromString(raw)
        except DecodeError:
            raise SeatFault(
                FaultKind.INVALID, f"malformed message ({len(raw)} bytes) for {what}"
            ) from None

    def _receive_start(self, deadline: float) -> bot_pb2.FromBot:
        """The answer to the match start, checking on the bot while waiting."""
        while True:
            self._check_alive()
            step = min(deadline, time.monotonic() + START_POLL_S)
            try:
                return self._receive(step, "the match start")
            except SeatFault as fault:
                if fault.kind is not FaultKind.TIMEOUT:
                    raise
                if time.monotonic() >= deadline:
                    raise self._start_timed_out() from None

    def _check_alive(self) -> None:
        """Raise CRASH when the bot is known to be gone (a process seat knows)."""


def _start_eagerly(
    loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None]
) -> asyncio.Future[None]:
    """Run ``coro`` now, outside the (stopped) loop, up to its first wait; the loop then
    resumes it whenever what it waits on is done. A future that is done when it is.

    What a task does, less its first step's run of the loop: a write is handed to gRPC
    here and now (an eager task; Python 3.11 has none). The loop counts as running during
    the step, as inside a task.
    """
    done: asyncio.Future[None] = loop.create_future()

    def step(_: object = None) -> None:
        try:
            awaited = coro.send(None)
        except StopIteration:
            pass
        except BaseException as exc:  # what a task would keep: the writes catch their own
            log.debug("a write ended with %r", exc)
        else:
            if asyncio.isfuture(awaited):
                awaited._asyncio_future_blocking = False
                awaited.add_done_callback(step)
            else:  # a bare yield
                loop.call_soon(step)
            return
        if not done.done():
            done.set_result(None)

    previous = asyncio._get_running_loop()
    asyncio._set_running_loop(loop)
    try:
        step()
    finally:
        asyncio._set_running_loop(previous)
    return done


async def _write(
    call: grpc.aio.StreamStreamCall, message: bytes, after: asyncio.Future[None] | None = None
) -> None:
    """Write one message (after the write ``after``, if still going)."""
    try:
        if after is not None and not after.done():
            await after
        await call.write(message)
    except _STREAM_GONE:
        return  # the stream is gone; the reader says why


async def _write_end(
    call: grpc.aio.StreamStreamCall, end: bytes, after: asyncio.Future[None] | None
) -> None:
    """Write the match end (after the write ``after``, if still going), then half-close."""
    try:
        if after is not None and not after.done():
            await after
        await call.write(end)
        await call.done_writing()
    except _STREAM_GONE:
        return  # the stream is gone; the reader says why


def _accepts(path: Path) -> bool:
    """True when a unix socket at ``path`` accepts a connection."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _answers_garbage(path: Path, wait_s: float = 0.2) -> bool:
    """True when the socket at ``path`` answers an HTTP/2 preface with something else."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(wait_s)
    try:
        probe.connect(str(path))
        probe.sendall(_HTTP2_PREFACE)
        head = probe.recv(9)
    except OSError:  # refused, reset or silent: not garbage, just not there
        return False
    finally:
        probe.close()
    return len(head) >= 4 and head[3] != _SETTINGS


def _error_kind(error: bot_pb2.BotError) -> FaultKind:
    if error.kind == bot_pb2.BotError.ILLEGAL_CHOICE:
        return FaultKind.INVALID
    return FaultKind.CRASH


def wait_for_marker(marker: Path, since: float, check_alive: Callable[[], None]) -> float:
    """Wait for a runtime's loading marker (sdk.protocol.loading_marker), at most
    PLATFORM_START_S after ``since`` (monotonic); when it appeared (monotonic).

    ``check_alive`` raises when the runtime died meanwhile (its own fault or the
    platform's, as it decides). PlatformStartTimeout when the marker is late: the runtime
    never got as far as loading the bot, so the bot is not to blame.
    """
    while not marker.exists():
        check_alive()
        if time.monotonic() - since >= PLATFORM_START_S:
            raise PlatformStartTimeout(
                f"the bot runtime did not start within {PLATFORM_START_S:g} s "
                "(the machine is overloaded or the sandbox is broken; not the bot's fault)"
            )
        time.sleep(POLL_S)
    return time.monotonic()


def serve_by(
    serving: Callable[[], bool], check_alive: Callable[[], None], deadline: float, start_s: float
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


def connect_unclocked(seat: GrpcSeat, deadline: float) -> float:
    """Connect ``seat`` to its runtime, which serves its socket already, off the bot's
    clock: ``deadline`` is moved by the time the connection took (the referee's and the
    runtime's gRPC handshake, slow on a loaded machine, is not the bot's set-up). Then
    write the match start; the deadline of the bot's Ready."""
    if seat.connection is None:
        seat.connection = BotConnection(seat.target)
    started = time.monotonic()
    seat.connection.wait_ready(PLATFORM_START_S)
    return GrpcSeat._connect(seat, deadline + (time.monotonic() - started))


class ProcessSeat(GrpcSeat):
    """A bot file or folder run as its own runtime process (the process sandbox)."""

    _launched = 0.0
    _start_s = 0.0

    def __init__(
        self,
        bot_path: str,
        bot_id: str | None = None,
        command: list[str] | None = None,
        limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS,
    ) -> None:
        self.process = BotProcess(bot_path, command, limits)
        super().__init__(unix_target(self.process.socket_path), bot_id or bot_path)

    def launch(self) -> None:
        self._launched = time.monotonic()
        self.process.spawn()

    def _connect(self, deadline: float) -> float:
        if not self.process.announces_loading:  # a command of the caller's: one clock
            self._serve_by(deadline)
            return super()._connect(deadline)
        # The platform's part first (see PLATFORM_START_S); the bot's clock starts when the
        # runtime says it is about to load the bot, and stops while the referee connects.
        marker = Path(loading_marker(str(self.process.socket_path)))
        seen = wait_for_marker(marker, self._launched, self._check_alive)
        deadline = max(deadline, seen + self._start_s)
        self._serve_by(deadline)
        return connect_unclocked(self, deadline)

    def _serve_by(self, deadline: float) -> None:
        """Wait until the socket accepts connections (connecting earlier only adds gRPC's
        reconnect back-off); a TIMEOUT of the bot's at ``deadline``."""
        serve_by(
            lambda: _accepts(self.process.socket_path), self._check_alive, deadline, self._start_s
        )

    def _check_alive(self) -> None:
        code = self.process.exit_code()
        if code is not None:
            reason = self.process.load_error()
            if reason is not None:
                raise SeatFault(FaultKind.CRASH, f"the bot did not load: {reason}")
            raise SeatFault(
                FaultKind.CRASH,
                f"bot process exited with code {code}: {self.process.stderr_tail()}",
            )

    def start(self, info: StartInfo) -> None:
        self._start_s = info.start_ms / 1000
        try:
            super().start(info)
        except SeatFault as fault:
            raise self._authored(fault) from None

    def decide(self, request: DecisionRequest) -> int:
        try:
            return super().decide(request)
        except SeatFault as fault:
            raise self._authored(fault) from None

    def _authored(self, fault: SeatFault) -> SeatFault:
        """The fault with the sandbox's copy of the bot named by the author's path."""
        detail = self.process.authored(fault.detail)
        return SeatFault(fault.kind, detail, fatal=fault.fatal)

    def _start_timed_out(self) -> SeatFault:
        if _answers_garbage(self.process.socket_path):
            return SeatFault(
                FaultKind.INVALID,
                "the bot's socket does not speak gRPC (no HTTP/2 handshake)",
                fatal=True,
            )
        return super()._start_timed_out()

    def close(self) -> None:
        super().close()
        self.process.kill()

    @property
    def stderr(self) -> str:
        """What the bot wrote to stderr (capped, marked by decision), for its owner."""
        return self.process.stderr_text()

    def diagnostics(self) -> str:
        return self.stderr
