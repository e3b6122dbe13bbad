"""Seats whose bot answers over the bot protocol (gRPC): a running runtime, or a process.

One bidirectional stream per match and seat (MEASURED.md: a call per decision costs ~2x).
The referee is the gRPC client. Raw bytes travel on the stream and are parsed here, so a
malformed message is an INVALID answer rather than a dead stream. A reader thread moves
the bot's messages into an inbox; :meth:`GrpcSeat.decide` waits on it for at most the
decision deadline plus what is left of the seat's time bank, so a silent bot can never
hold a match past its clocks. An answer that arrives after its deadline carries the index
of its (old) request and is dropped.
"""

from __future__ import annotations

import json
import logging
import queue
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import orjson
from google.protobuf.message import DecodeError

from saloon.referee.botprocess import BotProcess
from saloon.referee.faults import FaultKind, SeatFault
from saloon.referee.seats import DecisionRequest, EndInfo, Seat, StartInfo
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import (
    MAX_BOT_MESSAGE_BYTES,
    PLAY_METHOD,
    PROTOCOL_VERSION,
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
    # A fresh connection per seat: never share one subchannel between two bots.
    ("grpc.use_local_subchannel_pool", 1),
]
_END_OF_STREAM = object()


class GrpcSeat(Seat):
    """A bot served by a runtime at a gRPC target (``unix:PATH`` or ``HOST:PORT``)."""

    timed = True

    def __init__(self, target: str, bot_id: str) -> None:
        self.target = target
        self.bot_id = bot_id
        self._channel: grpc.Channel | None = None
        self._call: Any = None
        self._outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reader: threading.Thread | None = None
        #: Why the stream ended, once it has (a fault to report on the next request).
        self._broken: SeatFault | None = None
        self._closed = False
        self._finished = False
        self._dropped = 0

    # -- the seat interface -------------------------------------------------------------
    def start(self, info: StartInfo) -> None:
        deadline = time.monotonic() + info.start_ms / 1000
        self.launch()
        self._connect(deadline)
        start = bot_pb2.MatchStart(
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
        self._outbox.put(bot_pb2.ToBot(start=start).SerializeToString())
        message = self._receive_start(deadline)
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

    def decide(self, request: DecisionRequest) -> int:
        index = request.index
        payload = bot_pb2.ToBot(
            decision=bot_pb2.DecisionRequest(
                index=index,
                kind=request.kind,
                # orjson: ~15x faster than json.dumps here, the same compact UTF-8 text.
                observation_json=orjson.dumps(request.observation),
                legal_json=orjson.dumps(request.legal),
                decision_ms=request.decision_ms,
                bank_ms=request.bank_ms,
            )
        ).SerializeToString()
        deadline = time.monotonic() + (request.decision_ms + request.bank_ms) / 1000
        self._outbox.put(payload)
        while True:
            message = self._receive(deadline, f"decision {index}")
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
            self._dropped += 1
            if self._dropped > MAX_DROPPED:
                raise SeatFault(
                    FaultKind.INVALID, f"flooded: over {MAX_DROPPED} unasked answers", fatal=True
                )

    def finish(self, info: EndInfo) -> None:
        if self._call is None or self._broken is not None or self._finished:
            return
        self._finished = True
        end = bot_pb2.MatchEnd(scores=info.scores, ranks=info.ranks)
        self._outbox.put(bot_pb2.ToBot(end=end).SerializeToString())
        self._outbox.put(None)  # half-close: the bot's stream ends after the match end
        if self._reader is not None:
            self._reader.join(END_GRACE_S)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._outbox.put(None)
        if self._call is not None:
            self._call.cancel()
        if self._reader is not None:
            self._reader.join(1.0)
        if self._channel is not None:
            self._channel.close()

    # -- the stream ---------------------------------------------------------------------
    def _connect(self, deadline: float) -> None:
        """Open the channel and the match stream (it waits for the connection)."""
        channel = grpc.insecure_channel(self.target, options=_CHANNEL_OPTIONS)
        self._channel = channel
        play = channel.stream_stream(PLAY_METHOD)
        self._call = play(self._requests(), wait_for_ready=True)
        self._reader = threading.Thread(
            target=self._read, name=f"seat-reader-{self.bot_id}", daemon=True
        )
        self._reader.start()

    def _start_timed_out(self) -> SeatFault:
        """The fault when no Ready came in time (a process seat can say more)."""
        return SeatFault(FaultKind.TIMEOUT, "not ready within the start time")

    def _requests(self) -> Iterator[bytes]:
        outbox = self._outbox
        while (item := outbox.get()) is not None:
            yield item

    def _read(self) -> None:
        """The reader thread: bot messages into the inbox, then why the stream ended."""
        inbox = self._inbox
        call = self._call
        try:
            for raw in call:
                if inbox.qsize() >= MAX_BACKLOG:
                    self._broken = SeatFault(
                        FaultKind.INVALID,
                        f"flooded the referee with over {MAX_BACKLOG} unasked messages",
                        fatal=True,
                    )
                    call.cancel()
                    break
                inbox.put(raw)
            else:
                self._broken = SeatFault(FaultKind.CRASH, "the bot closed its stream")
        except grpc.RpcError as exc:
            code = exc.code()
            if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                self._broken = SeatFault(
                    FaultKind.INVALID,
                    f"sent a message over {MAX_BOT_MESSAGE_BYTES} bytes",
                    fatal=True,
                )
            elif self._broken is None:
                self._broken = SeatFault(
                    FaultKind.CRASH, f"stream broken: {code.name}: {exc.details()}"
                )
        inbox.put(_END_OF_STREAM)

    def _receive(self, deadline: float, what: str) -> bot_pb2.FromBot:
        """The bot's next message; SeatFault on timeout, a broken stream or garbage."""
        try:
            raw = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise SeatFault(FaultKind.TIMEOUT, f"no answer to {what} in time") from None
        if raw is _END_OF_STREAM:
            self._inbox.put(_END_OF_STREAM)  # every later request sees the end too
            self._check_alive()
            raise self._broken or SeatFault(FaultKind.CRASH, "stream ended")
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


class ProcessSeat(GrpcSeat):
    """A bot file or folder run as its own runtime process, reached over a unix socket."""

    def __init__(
        self, bot_path: str, bot_id: str | None = None, command: list[str] | None = None
    ) -> None:
        self.process = BotProcess(bot_path, command)
        super().__init__(unix_target(self.process.socket_path), bot_id or bot_path)

    def launch(self) -> None:
        self.process.spawn()

    def _connect(self, deadline: float) -> None:
        # Wait until the socket accepts connections: connecting earlier only adds gRPC's
        # reconnect back-off.
        while not _accepts(self.process.socket_path):
            self._check_alive()
            if time.monotonic() >= deadline:
                raise SeatFault(FaultKind.TIMEOUT, "the bot process did not serve in time")
            time.sleep(POLL_S)
        super()._connect(deadline)

    def _check_alive(self) -> None:
        code = self.process.exit_code()
        if code is not None:
            raise SeatFault(
                FaultKind.CRASH,
                f"bot process exited with code {code}: {self.process.stderr_tail()}",
            )

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
        """What the bot wrote to stderr (capped), for its owner."""
        return self.process.stderr.text()

    def diagnostics(self) -> str:
        return self.stderr
