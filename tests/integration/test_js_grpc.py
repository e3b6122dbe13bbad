"""The Node.js runtime's own gRPC server (kits/js/saloon/grpc.js, on node:http2) against
a real gRPC client (grpcio, the referee's): the stream as the Python runtime serves it,
and what a gRPC server owes a client beyond it: an unknown method refused, a message over
the limit refused, a compressed message read, a cancelled stream leaving the runtime
serving, several streams at once."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from saloon.kits import kit_dir
from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import MAX_REFEREE_MESSAGE_BYTES, PLAY_METHOD, unix_target
from tests import services

BOT = "exports.act = (decision) => decision.legal[decision.legal.length - 1];\n"


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[str]:
    """``node kits/js/run.js bot.js --socket PATH`` serving; yields the gRPC target."""
    node = shutil.which("node")
    if node is None:
        if services.in_ci():
            pytest.fail("CI=true and no node on PATH", pytrace=False)
        pytest.skip("SKIPPED, NEEDS NODE")
    (tmp_path / "bot.js").write_text(BOT)
    socket = tmp_path / "bot.sock"
    proc = subprocess.Popen(
        [node, str(kit_dir("js") / "run.js"), str(tmp_path / "bot.js"), "--socket", str(socket)],
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not socket.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            assert time.monotonic() < deadline, "the runtime never served"
            time.sleep(0.02)
        yield unix_target(socket)
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0  # SIGTERM: the runtime stops cleanly


def start(keep: bool = False) -> bot_pb2.ToBot:
    return bot_pb2.ToBot(
        start=bot_pb2.MatchStart(
            protocol_version=1,
            match_id="m-0123456789abcdef",
            game="seizure-v1",
            options_json="{}",
            seat=1,
            num_seats=2,
            seed=2**64 - 1,
            decision_ms=1000,
            bank_ms=5000,
            start_ms=5000,
            keep_stream=keep,
        )
    )


def decision(index: int, legal: list[object]) -> bot_pb2.ToBot:
    return bot_pb2.ToBot(
        decision=bot_pb2.DecisionRequest(
            index=index,
            kind="PLAY",
            observation_json=b"{}",
            legal_json=json.dumps(legal).encode(),
            decision_ms=1000,
            bank_ms=5000,
        )
    )


def held(messages: list[bot_pb2.ToBot], release: threading.Event) -> Iterator[bot_pb2.ToBot]:
    """The messages, then no half-close until ``release`` is set."""
    yield from messages
    release.wait(30)


END = bot_pb2.ToBot(end=bot_pb2.MatchEnd(scores=[1.0, -1.0], ranks=[0, 1]))


def play(channel: grpc.Channel) -> grpc.StreamStreamMultiCallable:
    return channel.stream_stream(
        PLAY_METHOD,
        request_serializer=bot_pb2.ToBot.SerializeToString,
        response_deserializer=bot_pb2.FromBot.FromString,
    )


def test_a_match_on_the_js_runtimes_own_grpc_server_is_the_protocols(runtime: str) -> None:
    with grpc.insecure_channel(runtime) as channel:
        answers = list(play(channel)(iter([start(), decision(7, [1, 2, 3]), END]), timeout=30))
    assert [a.WhichOneof("message") for a in answers] == ["ready", "decision"]
    assert answers[0].ready.protocol_version == 1 and answers[0].ready.bot_name == "bot.js"
    assert not answers[0].ready.keeps_stream
    assert (answers[1].decision.index, answers[1].decision.action) == (7, 2)


def test_a_kept_stream_plays_a_second_match_on_the_js_runtimes_server(runtime: str) -> None:
    requests = [start(True), decision(1, ["a", "b"]), END, start(True), decision(2, [5, 6]), END]
    with grpc.insecure_channel(runtime) as channel:
        answers = list(play(channel)(iter(requests), timeout=30))
    kinds = [a.WhichOneof("message") for a in answers]
    assert kinds == ["ready", "decision", "ended", "ready", "decision", "ended"]
    assert answers[0].ready.keeps_stream and answers[4].decision.action == 1


def test_an_illegal_choice_and_a_decision_before_start_are_bot_errors_not_a_broken_stream(
    runtime: str,
) -> None:
    with grpc.insecure_channel(runtime) as channel:
        answers = list(play(channel)(iter([decision(3, [1, 2]), END]), timeout=30))
    assert [a.WhichOneof("message") for a in answers] == ["error"]
    assert answers[0].error.index == 3 and answers[0].error.kind == bot_pb2.BotError.EXCEPTION


def test_an_unknown_method_is_unimplemented_on_the_js_runtimes_server(runtime: str) -> None:
    with grpc.insecure_channel(runtime) as channel:
        other = channel.unary_unary("/saloon.v1.Bot/Other")
        with pytest.raises(grpc.RpcError) as caught:
            other(b"", timeout=30)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_a_message_over_the_limit_is_refused_and_the_runtime_serves_on(runtime: str) -> None:
    huge = bot_pb2.ToBot(
        decision=bot_pb2.DecisionRequest(index=1, observation_json=b"x" * MAX_REFEREE_MESSAGE_BYTES)
    )
    options = [("grpc.max_send_message_length", 2 * MAX_REFEREE_MESSAGE_BYTES)]
    with grpc.insecure_channel(runtime, options=options) as channel:
        with pytest.raises(grpc.RpcError) as caught:
            list(play(channel)(iter([start(), huge]), timeout=30))
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        answers = list(play(channel)(iter([start(), decision(1, [0, 1]), END]), timeout=30))
    assert [a.WhichOneof("message") for a in answers] == ["ready", "decision"]


def test_gzip_compressed_messages_are_read_by_the_js_runtimes_server(runtime: str) -> None:
    with grpc.insecure_channel(runtime, compression=grpc.Compression.Gzip) as channel:
        answers = list(play(channel)(iter([start(), decision(4, [0, 1]), END]), timeout=30))
    assert [a.WhichOneof("message") for a in answers] == ["ready", "decision"]


def test_a_cancelled_stream_leaves_the_js_runtime_serving_other_streams(runtime: str) -> None:
    with grpc.insecure_channel(runtime) as channel:
        # Two matches at once on one connection, one of them cancelled mid-match (its
        # requests held open, so that the runtime sees a cancel, not a half-close).
        release = threading.Event()
        first = play(channel)(held([start(), decision(1, [0, 1])], release), timeout=30)
        assert next(first).WhichOneof("message") == "ready"
        assert next(first).WhichOneof("message") == "decision"
        second = play(channel)(iter([start(), decision(9, [0, 1, 2]), END]), timeout=30)
        first.cancel()
        release.set()
        answers = list(second)
        with pytest.raises(grpc.RpcError) as caught:
            next(first)
        assert caught.value.code() == grpc.StatusCode.CANCELLED
    assert [a.WhichOneof("message") for a in answers] == ["ready", "decision"]
    assert answers[1].decision.action == 2
