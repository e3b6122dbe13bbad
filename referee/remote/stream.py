"""One ``Bot.Play`` stream of the bot protocol, as the referee drives it.

Raw bytes travel on the stream and are parsed by the seat (saloon.referee.remote.seat), so
a malformed message is an INVALID answer rather than a dead stream. A decision drives the
thread's loop by hand (:meth:`Stream.exchange`): the stream's reader stops the loop as
soon as a message is in the inbox, a timer at the deadline, so a silent bot can never hold
a match past its clocks. An answer that arrives after its deadline carries the index of
its (old) request and is dropped by the seat.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import grpc
import grpc.aio

from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.remote.loop import start_eagerly
from saloon.sdk.protocol import MAX_BOT_MESSAGE_BYTES, PLAY_METHOD

#: Messages from a bot waiting unread before the bot counts as flooding (a fatal INVALID).
MAX_BACKLOG = 64
#: What the inbox holds once the stream has ended (every later read sees it too).
END_OF_STREAM = object()
#: What writing to a stream that has ended raises.
STREAM_GONE = (grpc.RpcError, grpc.aio.UsageError, asyncio.InvalidStateError)


class Stream:
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
        self.writer = self.loop.create_task(write(call, first))

    def open(self) -> bool:
        """True while the stream is open (as far as this side has seen)."""
        call = self.call
        return call is not None and self.broken is None and not call.done()

    def send(self, message: bytes) -> None:
        """Queue ``message`` after the writes before it (in the background: a write blocks
        only when the bot reads nothing, and then the clock runs out while it stays queued).

        With no write going and the loop not running, the write starts at once
        (:func:`~saloon.referee.remote.loop.start_eagerly`): no run of the loop just to
        hand it to gRPC.
        """
        call = self.call
        if call is None:
            return
        loop = self.loop
        writer = self.writer
        if loop.is_running() or (writer is not None and not writer.done()):
            self.writer = loop.create_task(write(call, message, writer))
        else:
            self.writer = start_eagerly(loop, write(call, message))

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
        inbox.append(END_OF_STREAM)
        if self.waiting:
            self.loop.stop()


async def write(
    call: grpc.aio.StreamStreamCall, message: bytes, after: asyncio.Future[None] | None = None
) -> None:
    """Write one message (after the write ``after``, if still going)."""
    try:
        if after is not None and not after.done():
            await after
        await call.write(message)
    except STREAM_GONE:
        return  # the stream is gone; the reader says why


async def write_end(
    call: grpc.aio.StreamStreamCall, end: bytes, after: asyncio.Future[None] | None
) -> None:
    """Write the match end (after the write ``after``, if still going), then half-close."""
    try:
        if after is not None and not after.done():
            await after
        await call.write(end)
        await call.done_writing()
    except STREAM_GONE:
        return  # the stream is gone; the reader says why
