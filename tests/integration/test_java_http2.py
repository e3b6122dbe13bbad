"""The Java runtime's own gRPC server (kits/java/src/saloon/Http2.java, Hpack.java): HTTP/2
and gRPC framing against real clients, the runtime in its image.

gRPC's own client (grpcio, the referee's C core) plays streams at it: a match, kept streams,
messages larger than a frame and than a window, a message over the 16 MiB limit, many
streams on one connection and several connections, metadata large enough to need
CONTINUATION frames and varied enough to churn the header table, a cancelled stream, a
half-close, a message that is not protobuf, a compressed one, keepalive pings. A raw HTTP/2
client checks what grpcio cannot be made to send: the frames' answers (SETTINGS ACK, PING
ACK), Huffman-coded and table-indexed header fields (RFC 7541's own examples), a
dynamic table size update, and a bad preface ending the connection with a GOAWAY.
"""

from __future__ import annotations

import queue
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from saloon.referee.limits import DEFAULT_SANDBOX_LIMITS
from saloon.sdk.languages import Language
from saloon.sdk.proto import bot_pb2
from saloon.worker.sandbox.docker import DockerSandbox, Runtime
from saloon.worker.sandbox.packages import load_package

from .docker_fixtures import runtime_image_or_skip, sandbox_fixture

pytestmark = pytest.mark.kit_images  # runs last, after the runtime images' build

BOTS = Path(__file__).parent / "bots"
PLAY = "/saloon.v1.Bot/Play"
#: How long a test waits for anything of the runtime.
WAIT_S = 60.0


@pytest.fixture(scope="module")
def sandbox() -> Iterator[DockerSandbox]:
    yield from sandbox_fixture()


@pytest.fixture(scope="module")
def runtime(sandbox: DockerSandbox) -> Iterator[Runtime]:
    """One running container of the java_last bot (it plays the last legal action)."""
    runtime_image_or_skip(sandbox, Language.JAVA)
    package = load_package(str(BOTS / "java_last"))
    tag = sandbox.image(package)
    served = sandbox.acquire(package, tag, DEFAULT_SANDBOX_LIMITS)
    try:
        deadline = time.monotonic() + WAIT_S
        while not served.socket_path.is_socket():
            assert time.monotonic() < deadline, sandbox.logs(served, None)
            time.sleep(0.05)
        yield served
    finally:
        sandbox.release(served, healthy=False)


def channel(runtime: Runtime, *options: tuple[str, int]) -> grpc.Channel:
    return grpc.insecure_channel(
        f"unix:{runtime.socket_path}",
        options=[("grpc.use_local_subchannel_pool", 1), *options],
    )


def play_call(ch: grpc.Channel) -> grpc.StreamStreamMultiCallable:
    return ch.stream_stream(
        PLAY,
        request_serializer=lambda b: b,  # already encoded
        response_deserializer=bot_pb2.FromBot.FromString,
    )


def start(keep: bool = False) -> bytes:
    return bot_pb2.ToBot(
        start=bot_pb2.MatchStart(
            protocol_version=1,
            match_id="m-0123456789abcdef",
            game="seizure-v1",
            options_json="{}",
            seat=0,
            num_seats=2,
            seed=7,
            decision_ms=1000,
            bank_ms=10000,
            start_ms=10000,
            keep_stream=keep,
        )
    ).SerializeToString()


def decision(index: int, observation: bytes = b"{}", legal: bytes = b"[1,2,3]") -> bytes:
    return bot_pb2.ToBot(
        decision=bot_pb2.DecisionRequest(
            index=index,
            kind="PLAY",
            observation_json=observation,
            legal_json=legal,
            decision_ms=1000,
            bank_ms=10000,
        )
    ).SerializeToString()


END = bot_pb2.ToBot(end=bot_pb2.MatchEnd(scores=[1.0, 0.0], ranks=[0, 1])).SerializeToString()


def play(ch: grpc.Channel, messages: list[bytes], **kw: object) -> list[bot_pb2.FromBot]:
    """Every answer of one stream carrying ``messages`` (then a half-close)."""
    return list(play_call(ch)(iter(messages), timeout=WAIT_S, **kw))


def answers(replies: list[bot_pb2.FromBot]) -> list[tuple[str, int, int]]:
    """(kind, index, action) of each answer; ready and ended as (kind, 0, 0)."""
    out = []
    for r in replies:
        which = r.WhichOneof("message")
        if which == "decision":
            out.append(("decision", r.decision.index, r.decision.action))
        else:
            out.append((str(which), 0, 0))
    return out


# -- grpcio against the runtime ----------------------------------------------------------
def test_a_match_on_one_stream_is_answered_and_ends_ok(runtime: Runtime) -> None:
    with channel(runtime) as ch:
        replies = play(ch, [start(), decision(3), decision(5, legal=b"[0,1]"), END])
    assert answers(replies) == [("ready", 0, 0), ("decision", 3, 2), ("decision", 5, 1)]
    assert replies[0].ready.protocol_version == 1 and not replies[0].ready.keeps_stream


def test_a_kept_stream_plays_match_after_match(runtime: Runtime) -> None:
    messages = [start(True), decision(1), END, start(True), decision(2), END]
    with channel(runtime) as ch:
        replies = play(ch, messages)
    assert answers(replies) == [
        ("ready", 0, 0),
        ("decision", 1, 2),
        ("ended", 0, 0),
        ("ready", 0, 0),
        ("decision", 2, 2),
        ("ended", 0, 0),
    ]
    assert replies[0].ready.keeps_stream


def test_a_half_close_without_a_match_end_ends_the_stream_ok(runtime: Runtime) -> None:
    with channel(runtime) as ch:
        assert answers(play(ch, [start()])) == [("ready", 0, 0)]
        assert play(ch, []) == []


def test_the_legal_actions_are_counted_without_being_parsed(runtime: Runtime) -> None:
    """The runtime counts the legal array's values itself (the bot parses it only if it
    reads it): commas and brackets inside strings and nested values are not counted;
    java_last answers the last index, so the answer says the count."""
    tricky = b' [ "a,]b\\"", {"x": [1, 2, {"y": "\\"]"}]}, [], 3 , null] '
    with channel(runtime) as ch:
        replies = play(
            ch,
            [
                start(),
                decision(1, legal=tricky),
                decision(2, legal=b'[{"a": "[,,,]"}, "{"]'),
                decision(3, legal=b'{"not": "an array"}'),
                decision(4, legal=b"[]"),
                END,
            ],
        )
    assert answers(replies)[:3] == [("ready", 0, 0), ("decision", 1, 4), ("decision", 2, 1)]
    assert replies[3].error.kind == bot_pb2.BotError.EXCEPTION
    assert "not a JSON array" in replies[3].error.detail
    assert replies[4].error.kind == bot_pb2.BotError.ILLEGAL_CHOICE


def test_messages_larger_than_a_frame_and_than_a_window_are_taken(runtime: Runtime) -> None:
    """3 MiB observations (frames of 16 KiB, windows of 1 MiB replenished as they come)."""
    big = b'{"x": "' + b"a" * (3 * 1024 * 1024) + b'"}'
    legal = b"[" + b",".join(b"%d" % i for i in range(5000)) + b"]"
    with channel(runtime) as ch:
        replies = play(ch, [start(), decision(1, big), decision(2, big, legal), END])
    assert answers(replies) == [("ready", 0, 0), ("decision", 1, 2), ("decision", 2, 4999)]


def test_a_message_over_16_mib_is_refused_and_the_connection_serves_on(
    runtime: Runtime,
) -> None:
    huge = b'{"x": "' + b"a" * (16 * 1024 * 1024) + b'"}'
    with channel(runtime) as ch:
        with pytest.raises(grpc.RpcError) as refused:
            play(ch, [start(), decision(1, huge)])
        assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "16777216" in str(refused.value.details())
        assert answers(play(ch, [start(), decision(9), END]))[-1] == ("decision", 9, 2)


def test_many_streams_at_once_on_one_connection(runtime: Runtime) -> None:
    results: dict[int, list[tuple[str, int, int]]] = {}
    with channel(runtime) as ch:

        def one(n: int) -> None:
            messages = [start()] + [decision(100 * n + i) for i in range(20)] + [END]
            results[n] = answers(play(ch, messages))

        threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_S)
    for n in range(8):
        assert results[n] == [("ready", 0, 0)] + [("decision", 100 * n + i, 2) for i in range(20)]


def test_two_connections_at_once(runtime: Runtime) -> None:
    with channel(runtime) as one, channel(runtime) as two:
        first = play_call(one)(iter([start(), decision(1)]), timeout=WAIT_S)
        assert answers([next(first)]) == [("ready", 0, 0)]
        assert answers(play(two, [start(), decision(2), END]))[-1] == ("decision", 2, 2)
        assert answers(list(first)) == [("decision", 1, 2)]


def test_metadata_needing_continuation_frames_and_churning_the_header_table(
    runtime: Runtime,
) -> None:
    """A 30 KB header (more than a 16 KiB frame: HEADERS, then CONTINUATION), and metadata
    varied call after call so that the client's encoder indexes, evicts and refers to its
    table; each unknown method's name comes back exactly as sent (it went through HPACK)."""
    with channel(runtime) as ch:
        long = [("x-long", "v" * 30_000)]
        assert answers(play(ch, [start(), END], metadata=long)) == [("ready", 0, 0)]
        for i in range(40):
            metadata = [(f"x-key-{i % 7}", f"value {i} " * (i % 11 + 1)), ("x-same", "same")]
            method = f"/saloon.v1.Bot/Nope{i % 5}"
            unknown = ch.unary_unary(method)
            with pytest.raises(grpc.RpcError) as refused:
                unknown(b"", timeout=WAIT_S, metadata=metadata)
            assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED
            assert refused.value.details() == f"Method not found: {method}"
            assert answers(play(ch, [start(), decision(i + 1), END], metadata=metadata)) == [
                ("ready", 0, 0),
                ("decision", i + 1, 2),
            ]


def test_a_cancelled_stream_leaves_the_connection_serving(runtime: Runtime) -> None:
    with channel(runtime) as ch:
        sent: queue.Queue[bytes | None] = queue.Queue()

        def requests() -> Iterator[bytes]:
            while (m := sent.get(timeout=WAIT_S)) is not None:
                yield m

        call = play_call(ch)(requests(), timeout=WAIT_S)
        sent.put(start())
        assert answers([next(call)]) == [("ready", 0, 0)]
        call.cancel()
        sent.put(None)
        assert answers(play(ch, [start(), decision(4), END]))[-1] == ("decision", 4, 2)


def test_a_message_that_is_not_protobuf_is_invalid_argument(runtime: Runtime) -> None:
    with channel(runtime) as ch:
        with pytest.raises(grpc.RpcError) as refused:
            play(ch, [b"\xff\xff\xff"])
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert "cannot read" in str(refused.value.details())


def test_a_compressed_message_is_refused_unimplemented(runtime: Runtime) -> None:
    big = b'{"x": "' + b"a" * 100_000 + b'"}'
    with channel(runtime) as ch:
        with pytest.raises(grpc.RpcError) as refused:
            play(ch, [start(), decision(1, big)], compression=grpc.Compression.Gzip)
        assert refused.value.code() is grpc.StatusCode.UNIMPLEMENTED
        assert answers(play(ch, [start(), END])) == [("ready", 0, 0)]


def test_keepalive_pings_are_answered_while_a_stream_waits(runtime: Runtime) -> None:
    """The client pings every 100 ms and gives up on an unanswered ping after 500 ms: a
    stream idle for 2 s still answers after it."""
    options = [
        ("grpc.keepalive_time_ms", 100),
        ("grpc.keepalive_timeout_ms", 500),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    with channel(runtime, *options) as ch:
        sent: queue.Queue[bytes | None] = queue.Queue()

        def requests() -> Iterator[bytes]:
            while (m := sent.get(timeout=WAIT_S)) is not None:
                yield m

        call = play_call(ch)(requests(), timeout=WAIT_S)
        sent.put(start())
        assert answers([next(call)]) == [("ready", 0, 0)]
        time.sleep(2.0)
        sent.put(decision(8))
        assert answers([next(call)]) == [("decision", 8, 2)]
        sent.put(END)
        sent.put(None)
        assert list(call) == []


# -- a raw HTTP/2 client -------------------------------------------------------------------
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
#: RFC 7541's Huffman examples (C.4, C.6): the text, its code.
HUFFMAN = {
    "www.example.com": "f1e3c2e5f23a6ba0ab90f4ff",
    "no-cache": "a8eb10649cbf",
    "custom-key": "25a849e95ba97d7f",
    "custom-value": "25a849e95bb8e8b4bf",
    "private": "aec3771a4b",
    "Mon, 21 Oct 2013 20:13:21 GMT": "d07abe941054d444a8200595040b8166e082a62d1bff",
    "https://www.example.com": "9d29ad171863c78f0b97c8e9ae82ae43d3",
}


class RawClient:
    """HTTP/2 by hand: frames out as given, frames in as they come."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(WAIT_S)
        self.sock.connect(str(path))
        self.buffer = b""

    def send(self, kind: int, flags: int, stream: int, payload: bytes = b"") -> None:
        head = struct.pack(">I", len(payload))[1:] + bytes([kind, flags])
        self.sock.sendall(head + struct.pack(">I", stream) + payload)

    def frame(self) -> tuple[int, int, int, bytes] | None:
        """The next frame (type, flags, stream, payload), None at the end of the stream."""
        while True:
            if len(self.buffer) >= 9:
                length = int.from_bytes(self.buffer[:3], "big")
                if len(self.buffer) >= 9 + length:
                    kind, flags = self.buffer[3], self.buffer[4]
                    stream = int.from_bytes(self.buffer[5:9], "big") & 0x7FFFFFFF
                    payload = self.buffer[9 : 9 + length]
                    self.buffer = self.buffer[9 + length :]
                    return kind, flags, stream, payload
            more = self.sock.recv(65536)
            if not more:
                return None
            self.buffer += more

    def until(self, kind: int, stream: int | None = None) -> tuple[int, int, int, bytes]:
        """The first frame of ``kind`` (on ``stream``), skipping others."""
        while (frame := self.frame()) is not None:
            if frame[0] == kind and (stream is None or frame[2] == stream):
                return frame
        raise AssertionError(f"the connection ended before a frame of type {kind}")

    def close(self) -> None:
        self.sock.close()


def literal_fields(block: bytes) -> dict[str, str]:
    """The fields of the runtime's own header blocks: indexed static entries (:status 200)
    and literals without indexing, never Huffman-coded (what Http2.java writes)."""
    static = {8: (":status", "200")}
    names = {31: "content-type"}
    fields: dict[str, str] = {}
    at = 0

    def integer(prefix: int) -> int:
        nonlocal at
        value = block[at] & ((1 << prefix) - 1)
        at += 1
        if value == (1 << prefix) - 1:
            shift = 0
            while True:
                b = block[at]
                at += 1
                value += (b & 0x7F) << shift
                shift += 7
                if not b & 0x80:
                    break
        return value

    def string() -> str:
        nonlocal at
        assert not block[at] & 0x80, "the runtime never Huffman-codes"
        n = integer(7)
        text = block[at : at + n].decode("latin-1")
        at += n
        return text

    while at < len(block):
        if block[at] & 0x80:
            name, value = static[integer(7)]
        else:
            assert block[at] & 0xF0 == 0, "only literals without indexing"
            index = integer(4)
            name = names[index] if index else string()
            value = string()
        fields[name] = value
    return fields


def request_block(path_field: bytes, extra: bytes = b"") -> bytes:
    """A request's header block: :method POST (static 3), :scheme http (6), then the given
    :path field, then ``extra``."""
    return b"\x83\x86" + path_field + extra


def huffman_path(text: str, indexing: bool) -> bytes:
    """:path (static name 4) with a Huffman-coded value, with or without incremental
    indexing."""
    code = bytes.fromhex(HUFFMAN[text])
    assert len(code) < 127
    return bytes([0x44 if indexing else 0x04, 0x80 | len(code)]) + code


def open_raw(runtime: Runtime) -> RawClient:
    raw = RawClient(runtime.socket_path)
    raw.sock.sendall(PREFACE)
    raw.send(SETTINGS, 0, 0)
    return raw


def test_the_servers_preface_and_its_answers_to_settings_and_ping(runtime: Runtime) -> None:
    raw = open_raw(runtime)
    try:
        kind, flags, stream, payload = raw.frame() or (None, 0, 0, b"")
        assert (kind, flags, stream) == (SETTINGS, 0, 0)  # the server's preface comes first
        assert len(payload) % 6 == 0
        raw.until(SETTINGS)  # its ACK of ours (the connection's WINDOW_UPDATE may come first)
        raw.send(PING, 0, 0, b"saloon!!")
        assert raw.until(PING) == (PING, 1, 0, b"saloon!!")
    finally:
        raw.close()


def test_huffman_coded_and_table_indexed_header_fields_are_decoded(runtime: Runtime) -> None:
    """Each RFC 7541 Huffman example as a request's :path (a literal the server's table
    keeps), then the same :path by its index in that table, after a table size update that
    keeps it; the method not found names it."""
    raw = open_raw(runtime)
    try:
        stream = 1
        for text in HUFFMAN:
            for block in (
                request_block(huffman_path(text, indexing=True)),
                # size update to 4096 (0x3f e1 1f), then dynamic entry 62 (the newest)
                b"\x3f\xe1\x1f" + request_block(b"\xbe"),
                request_block(huffman_path(text, indexing=False)),
            ):
                raw.send(HEADERS, 0x4 | 0x1, stream, block)  # END_HEADERS, END_STREAM
                fields = literal_fields(raw.until(HEADERS, stream)[3])
                assert fields["grpc-status"] == "12", fields
                assert fields["grpc-message"] == f"Method not found: {text}"
                stream += 2
    finally:
        raw.close()


def test_a_bad_preface_ends_the_connection_with_a_goaway(runtime: Runtime) -> None:
    raw = RawClient(runtime.socket_path)
    try:
        raw.sock.sendall(b"GET / HTTP/1.1\r\nHost: bot\r\n\r\n")
        _, _, _, payload = raw.until(GOAWAY)
        assert int.from_bytes(payload[4:8], "big") == 1  # PROTOCOL_ERROR
        while raw.frame() is not None:
            pass  # then the server closes the connection
    finally:
        raw.close()
