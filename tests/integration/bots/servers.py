"""Hand-written misbehaving servers, where the SDK runtime would never misbehave.

    python servers.py MODE --socket PATH

stall           accepts connections on the socket and never answers (not even HTTP/2)
garbage-socket  answers every connection with garbage bytes instead of HTTP/2
garbage         speaks gRPC, says ready, then answers every decision with garbage bytes
huge            speaks gRPC, says ready, then answers a decision with a 8 MiB message
flood           speaks gRPC, says ready, then answers a decision with 5000 answers
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc

from saloon.sdk.proto import bot_pb2
from saloon.sdk.protocol import PROTOCOL_VERSION, unix_target


def raw_server(path: str, garbage: bool) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(16)
    held = []
    while True:
        conn, _ = sock.accept()
        held.append(conn)  # keep it open: a stall, not a close
        if garbage:
            with contextlib.suppress(OSError):
                conn.sendall(b"garbage!" * 512)


def replies(mode: str, requests: Iterator[bytes]) -> Iterator[bytes]:
    for raw in requests:
        message = bot_pb2.ToBot.FromString(raw)
        which = message.WhichOneof("message")
        if which == "start":
            ready = bot_pb2.Ready(protocol_version=PROTOCOL_VERSION, bot_name=mode)
            yield bot_pb2.FromBot(ready=ready).SerializeToString()
        elif which == "decision":
            index = message.decision.index
            if mode == "garbage":
                yield b"\xff\xff\xff\xff\xff\xff"
            elif mode == "huge":
                yield bot_pb2.FromBot(
                    error=bot_pb2.BotError(index=index, detail="x" * (8 << 20))
                ).SerializeToString()
            elif mode == "flood":
                answer = bot_pb2.FromBot(decision=bot_pb2.Decision(index=index, action=0))
                for _ in range(5000):
                    yield answer.SerializeToString()


def grpc_server(path: str, mode: str) -> None:
    def play(requests: Iterator[bytes], context: Any) -> Iterator[bytes]:
        return replies(mode, requests)

    handler = grpc.method_handlers_generic_handler(
        "saloon.v1.Bot", {"Play": grpc.stream_stream_rpc_method_handler(play)}
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers([handler])
    server.add_insecure_port(unix_target(path))
    server.start()
    while True:
        time.sleep(3600)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode")
    parser.add_argument("--socket", required=True)
    args = parser.parse_args()
    if args.mode in ("stall", "garbage-socket"):
        threading.Thread(target=raw_server, args=(args.socket, args.mode != "stall")).start()
    else:
        grpc_server(args.socket, args.mode)


if __name__ == "__main__":
    main()
