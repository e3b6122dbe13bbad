"""The bot runtime: serves one bot over the bot protocol (gRPC, the referee is the client).

Each ``Bot.Play`` stream is one match: a fresh bot from the factory, its hooks called in
order, one answer per decision request. A referee that sets ``MatchStart.keep_stream``
(a warm runtime's) gets the stream kept: the runtime answers the match end with
``FromBot{ended}`` and plays the next match, with a fresh bot, on the same stream.

What the bot's own code does wrong is reported to the referee as a :class:`BotError`
(the referee turns it into a fault), never a broken stream; the traceback goes to
stderr, which the referee captures for the bot's owner.
"""

from __future__ import annotations

import json
import logging
import sys
import traceback
from collections.abc import Iterable, Iterator
from concurrent import futures
from typing import Any

import grpc

from saloon.sdk.bot import Bot, Clock, MatchInfo, MatchResult
from saloon.sdk.errors import NotALegalAction
from saloon.sdk.games import adapter_for, decision_from_wire
from saloon.sdk.loader import BotFactory
from saloon.sdk.output import mark, where
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import (
    MAX_BOT_MESSAGE_BYTES,
    MAX_REFEREE_MESSAGE_BYTES,
    PLAY_METHOD,
    PROTOCOL_VERSION,
)

log = logging.getLogger(__name__)

#: Matches one runtime serves at the same time (one thread each).
DEFAULT_MAX_MATCHES = 4
#: What a bot's own code may raise that the runtime reports (a CRASH for the referee).
#: SystemExit and KeyboardInterrupt too: sys.exit() in act is the bot's fault, and the
#: referee must hear of it at once, not as timeouts of a stream that silently stopped.
_BOT_FAILURES = (Exception, SystemExit, KeyboardInterrupt)
_EXCEPTION = bot_pb2.BotError.EXCEPTION
_ILLEGAL = bot_pb2.BotError.ILLEGAL_CHOICE
_ENDED = bot_pb2.FromBot(ended=bot_pb2.MatchEnded())


def _describe(exc: BaseException, hook: str) -> str:
    """One line for the referee, ending with the bot's file:line; the full traceback goes
    to stderr, from the bot's own first frame (the runtime's call into the bot is left
    out)."""
    tb = exc.__traceback__
    traceback.print_exception(type(exc), exc, tb.tb_next if tb else None, file=sys.stderr)
    sys.stderr.flush()
    place = where(exc)
    at = f" at {place}" if place else ""
    # The place whole (a long path cut short could not be rewritten to the author's).
    return f"{hook} raised {type(exc).__name__}: {exc}"[:900] + at[:1000]


def _write_notes(bot: Bot) -> None:
    """What the bot noted about its decision, on its stderr (marked with the decision)."""
    for note in bot.take_notes():
        print(f"note: {note}", file=sys.stderr)


class MatchSession:
    """One match of one bot: turns the referee's messages into bot calls and answers."""

    def __init__(self, factory: BotFactory, name: str = "") -> None:
        self.factory = factory
        self.name = name
        self.bot: Bot | None = None
        self.game = ""
        self.seat = 0
        #: The referee asked to keep the stream after this match (and this runtime does).
        self.keep_stream = False

    def handle(self, message: bot_pb2.ToBot) -> bot_pb2.FromBot | None:
        """The answer to one message from the referee (None: nothing to answer)."""
        which = message.WhichOneof("message")
        if which == "decision":
            return self._decide(message.decision)
        if which == "start":
            return self._start(message.start)
        if which == "end":
            self._end(message.end)
        return None

    def _start(self, start: bot_pb2.MatchStart) -> bot_pb2.FromBot:
        self.game = start.game
        self.seat = start.seat
        self.keep_stream = start.keep_stream
        info = MatchInfo(
            game=start.game,
            options=json.loads(start.options_json or "{}"),
            seat=start.seat,
            num_seats=start.num_seats,
            seed=start.seed,
            decision_ms=start.decision_ms,
            bank_ms=start.bank_ms,
        )
        mark("start")
        try:
            # Import the game's typed views now, on the start clock, not the first decision's.
            adapter_for(start.game)
            self.bot = self.factory(start.game)
            self.bot.on_match_start(info)
        except _BOT_FAILURES as exc:
            detail = _describe(exc, "on_match_start")
            return bot_pb2.FromBot(error=bot_pb2.BotError(kind=_EXCEPTION, detail=detail))
        return bot_pb2.FromBot(
            ready=bot_pb2.Ready(
                protocol_version=PROTOCOL_VERSION,
                bot_name=self.name,
                keeps_stream=self.keep_stream,
            )
        )

    def _decide(self, request: bot_pb2.DecisionRequest) -> bot_pb2.FromBot:
        index = request.index
        if self.bot is None:
            detail = "decision request before a successful match start"
            return bot_pb2.FromBot(
                error=bot_pb2.BotError(index=index, kind=_EXCEPTION, detail=detail)
            )
        mark(f"decision {index}")
        try:
            decision = decision_from_wire(
                self.game,
                request.kind,
                request.observation_json,
                request.legal_json,
                Clock(request.decision_ms, request.bank_ms),
                index,
            )
            choice = self.bot.act(decision)
            _write_notes(self.bot)
        except _BOT_FAILURES as exc:
            detail = _describe(exc, "act")
            return bot_pb2.FromBot(
                error=bot_pb2.BotError(index=index, kind=_EXCEPTION, detail=detail)
            )
        try:
            action = decision.index_of(choice)
        except NotALegalAction as exc:
            print(f"decision {index}: {exc}", file=sys.stderr, flush=True)
            return bot_pb2.FromBot(
                error=bot_pb2.BotError(index=index, kind=_ILLEGAL, detail=str(exc)[:1000])
            )
        return bot_pb2.FromBot(decision=bot_pb2.Decision(index=index, action=action))

    def _end(self, end: bot_pb2.MatchEnd) -> None:
        mark("end")
        if self.bot is None:
            return
        try:
            self.bot.on_match_end(MatchResult(self.seat, list(end.scores), list(end.ranks)))
        except _BOT_FAILURES as exc:
            _describe(exc, "on_match_end")


class BotService:
    """The servicer of ``saloon.v1.Bot``: one :class:`MatchSession` per stream."""

    def __init__(self, factory: BotFactory, name: str = "") -> None:
        self.factory = factory
        self.name = name

    def Play(
        self, request_iterator: Iterable[bot_pb2.ToBot], context: Any
    ) -> Iterator[bot_pb2.FromBot]:
        session = MatchSession(self.factory, self.name)
        for message in request_iterator:
            reply = session.handle(message)
            if reply is not None:
                yield reply
            elif message.WhichOneof("message") == "end":
                if not session.keep_stream:
                    # The match is over: end the stream now, so a warm referee connection
                    # need not wait for (or send) a half-close.
                    return
                # A kept stream: say the match is over for the bot, then serve the next
                # match on this stream with a fresh session (and a fresh bot).
                yield _ENDED
                session = MatchSession(self.factory, self.name)


def bot_handler(service: BotService) -> grpc.GenericRpcHandler:
    """The ``saloon.v1.Bot`` service bound to ``service`` (what a _pb2_grpc would do)."""
    service_name, method = PLAY_METHOD.strip("/").split("/")
    play = grpc.stream_stream_rpc_method_handler(
        service.Play,
        request_deserializer=bot_pb2.ToBot.FromString,
        response_serializer=bot_pb2.FromBot.SerializeToString,
    )
    return grpc.method_handlers_generic_handler(service_name, {method: play})


def create_server(
    factory: BotFactory, address: str, name: str = "", max_matches: int = DEFAULT_MAX_MATCHES
) -> tuple[grpc.Server, int]:
    """A started server for the bot at ``address`` (``unix:PATH`` or ``HOST:PORT``).

    Returns the server and the bound port (0 for a unix socket).
    """
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_matches, thread_name_prefix="match"),
        options=[
            ("grpc.max_receive_message_length", MAX_REFEREE_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_BOT_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ],
        maximum_concurrent_rpcs=max_matches,
    )
    server.add_generic_rpc_handlers([bot_handler(BotService(factory, name))])
    port = server.add_insecure_port(address)
    server.start()
    return server, port
