"""The bot protocol: generated code is fresh, the runtime session answers as specified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from saloon.referee.process.stderr import CappedBuffer
from saloon.sdk import Bot, Decision, MatchInfo
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import PROTOCOL_VERSION
from saloon.sdk.runtime import BotService, MatchSession

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_is_not_stale() -> None:
    """sdk/proto/ is what proto/generate.py makes from proto/ (run it after editing)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "proto" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


class FirstBot(Bot):
    def __init__(self) -> None:
        self.info: MatchInfo | None = None
        self.ended = False

    def on_match_start(self, info: MatchInfo) -> None:
        self.info = info

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[-1]

    def on_match_end(self, result: Any) -> None:
        self.ended = True


def start_message(game: str = "seas-of-strife-v1") -> bot_pb2.ToBot:
    start = bot_pb2.MatchStart(
        protocol_version=PROTOCOL_VERSION,
        game=game,
        options_json='{"variant": "x"}',
        seat=2,
        num_seats=4,
        seed=99,
        decision_ms=100,
        bank_ms=1000,
    )
    return bot_pb2.ToBot(start=start)


def raw_request(index: int, legal: list[Any]) -> bot_pb2.ToBot:
    request = bot_pb2.DecisionRequest(
        index=index, kind="ANY", observation_json=b"{}", legal_json=json.dumps(legal).encode()
    )
    return bot_pb2.ToBot(decision=request)


def test_session_start_decide_end() -> None:
    bot = FirstBot()
    session = MatchSession(lambda game: bot, "first")
    ready = session.handle(start_message("no-such-game-v1"))
    assert ready is not None and ready.ready.protocol_version == PROTOCOL_VERSION
    assert bot.info is not None and (bot.info.seat, bot.info.seed) == (2, 99)
    assert bot.info.options == {"variant": "x"}
    answer = session.handle(raw_request(17, [{"a": 1}, {"a": 2}, {"a": 3}]))
    assert answer is not None and answer.WhichOneof("message") == "decision"
    assert (answer.decision.index, answer.decision.action) == (17, 2)
    assert session.handle(bot_pb2.ToBot(end=bot_pb2.MatchEnd(scores=[1], ranks=[0]))) is None
    assert bot.ended


class Broken(Bot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        if len(decision.legal) == 2:
            raise KeyError("oops")
        return "nope"


@pytest.mark.parametrize(
    ("legal", "kind"),
    [([1, 2], bot_pb2.BotError.EXCEPTION), ([1, 2, 3], bot_pb2.BotError.ILLEGAL_CHOICE)],
)
def test_session_reports_bot_errors(legal: list[int], kind: int) -> None:
    session = MatchSession(lambda game: Broken())
    session.handle(start_message("no-such-game-v1"))
    answer = session.handle(raw_request(5, legal))
    assert answer is not None and answer.WhichOneof("message") == "error"
    assert (answer.error.index, answer.error.kind) == (5, kind)


def test_decision_before_start_is_an_error() -> None:
    answer = MatchSession(lambda game: FirstBot()).handle(raw_request(1, [1, 2]))
    assert answer is not None and answer.error.kind == bot_pb2.BotError.EXCEPTION


def test_capped_buffer_keeps_the_head_and_counts_the_rest() -> None:
    buf = CappedBuffer(cap=10)
    buf.add(b"0123456")
    buf.add(b"789abcdef")
    assert buf.data == b"0123456789"
    assert buf.dropped == 6
    assert "6 more bytes" in buf.text()


def test_kept_stream_serves_match_after_match() -> None:
    """With MatchStart.keep_stream the runtime answers the end with `ended` and serves the
    next match on the stream (a fresh bot); without it the stream ends after the end."""
    bots: list[FirstBot] = []

    def factory(game: str) -> FirstBot:
        bots.append(FirstBot())
        return bots[-1]

    kept = start_message("no-such-game-v1")
    kept.start.keep_stream = True
    end = bot_pb2.ToBot(end=bot_pb2.MatchEnd(scores=[1], ranks=[0]))
    messages = [kept, raw_request(3, [1, 2]), end, kept, end]
    replies = list(BotService(factory).Play(iter(messages), None))
    assert [r.WhichOneof("message") for r in replies] == [
        "ready",
        "decision",
        "ended",
        "ready",
        "ended",
    ]
    assert replies[0].ready.keeps_stream and len(bots) == 2 and all(b.ended for b in bots)
    plain = start_message("no-such-game-v1")
    replies = list(BotService(factory).Play(iter([plain, end, plain]), None))
    assert [r.WhichOneof("message") for r in replies] == ["ready"]
    assert not replies[0].ready.keeps_stream
