"""A seat whose bot answers over the bot protocol (gRPC), and its warm connection.

One bidirectional stream per match and seat (saloon.referee.remote.stream): a unary call
per decision would cost more than a message on an open stream (bench/protocol.py measures
the round trip against its floor). The referee is the gRPC client. ``decide`` queues the
request and runs the thread's loop until the answer is in the seat's inbox or the decision
deadline plus what is left of the seat's time bank has passed.

The API for a runtime that plays many matches in sequence (a warm container)::

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
:meth:`GrpcSeat.launch`, :meth:`GrpcSeat._connect` (wait for the runtime: see
saloon.referee.remote.start), :meth:`GrpcSeat._check_alive` (raise a CRASH when the
runtime is known to be gone) and :meth:`Seat.diagnostics`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import grpc
import grpc.aio
import orjson
from google.protobuf.message import DecodeError

from saloon.referee.errors import ConnectionThreadError
from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.remote.loop import thread_loop
from saloon.referee.remote.stream import END_OF_STREAM, Stream, write_end
from saloon.referee.seats import DecisionRequest, EndInfo, Seat, StartInfo
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import MAX_BOT_MESSAGE_BYTES, PROTOCOL_VERSION

log = logging.getLogger(__name__)

#: Unasked answers (late or duplicate) a seat may send in a match before it counts as
#: flooding; an honest bot sends at most one per timeout, and timeouts are few.
MAX_DROPPED = 64
#: Time given to a bot to take the match end and close its stream.
END_GRACE_S = 0.5
#: How often a seat waiting for Ready checks that its bot's runtime still runs.
START_POLL_S = 0.05

CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_BOT_MESSAGE_BYTES),
    ("grpc.max_send_message_length", -1),
    ("grpc.initial_reconnect_backoff_ms", 20),
    ("grpc.max_reconnect_backoff_ms", 100),
    ("grpc.enable_retries", 0),
    # A connection per BotConnection: never share one subchannel between two bots.
    ("grpc.use_local_subchannel_pool", 1),
]
_T = TypeVar("_T")


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
        self._kept: Stream | None = None
        #: Streams opened on this connection so far (a kept stream counts once).
        self.streams = 0
        self.channel: grpc.aio.Channel = self.run(self._open())

    async def _open(self) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(self.target, options=CHANNEL_OPTIONS)

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

    def take_kept(self) -> Stream | None:
        """The kept stream for a new match, if there is one still open."""
        stream, self._kept = self._kept, None
        if stream is None:
            return None
        if not stream.open():
            stream.cancel()
            return None
        return stream

    def keep(self, stream: Stream) -> bool:
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
        self._stream: Stream | None = None
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
                raise SeatFault(error_kind(message.error), message.error.detail)
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
                        raise SeatFault(error_kind(message.error), message.error.detail)
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
        if self._keeps and not self._doubt and not stream.inbox and connection.keep(stream):
            # The runtime answers with `ended` and waits for the next match on this stream:
            # start the write (at once: see Stream.send) and leave the stream to the
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

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

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
        """Connect to the runtime and write the match start (:meth:`open_stream`); the
        deadline of the bot's answer. A sandbox's seat waits for its runtime first and
        may move the deadline (saloon.referee.remote.start)."""
        return self.open_stream(deadline)

    def open_stream(self, deadline: float) -> float:
        """Open the match stream (on a connection of this seat's own unless given one),
        or take the one the connection kept, and write the match start on it; the
        deadline of the bot's answer, unchanged."""
        if self.connection is None:
            self.connection = BotConnection(self.target)
        connection = self.connection
        connection.check_thread()
        start = self._start_message
        if start is not None:
            start.keep_stream = not self._owns_connection
        self._first = b"" if start is None else bot_pb2.ToBot(start=start).SerializeToString()
        stream = connection.take_kept() if not self._owns_connection else None
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
        self._stream = Stream(connection.loop)
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
        stream.writer = stream.loop.create_task(write_end(stream.call, end, stream.writer))
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
        if raw is END_OF_STREAM:
            assert stream is not None
            stream.inbox.append(END_OF_STREAM)  # every later request sees the end too
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


def error_kind(error: bot_pb2.BotError) -> FaultKind:
    """The fault kind of an error the bot reported."""
    if error.kind == bot_pb2.BotError.ILLEGAL_CHOICE:
        return FaultKind.INVALID
    return FaultKind.CRASH
