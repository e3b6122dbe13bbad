"""The arena API's interceptor: authentication and error mapping for every Arena RPC.

A real gRPC server on a loopback port with the interceptor and a probe servicer (each
method answers with its caller, or raises what the request asks for), a real SQLite
registry for the tokens, real channels. Then the real server: every method of the
service refuses a call without a token, the health service answers one.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from saloon.arena.errors import PermissionDenied
from saloon.arena.interceptors import ArenaInterceptor, current_user
from saloon.arena.registry import Registry, Role
from saloon.sdk.arena_proto import arena_pb2 as pb
from saloon.sdk.arena_proto import arena_pb2_grpc as pb_grpc
from saloon.worker.errors import PackageError, UnknownSeason, WorkerError
from saloon.worker.store.store import Store

from .arena_fixtures import Arena, arena

__all__ = ["arena"]

SERVICE = "saloon.v1.Arena"
NO_TOKEN = "no API token: send 'authorization: Bearer <token>' metadata"
BAD_TOKEN = "the API token is not valid"
SECRET = "hunter2-do-not-leak"

#: What ListBots raises for a request's ``game``.
FAILURES: dict[str, Exception] = {
    "bad": PackageError("the package has no bot.py"),
    "empty": PackageError(""),
    "long": PackageError("x" * 5000),
    "denied": PermissionDenied("not yours"),
    "bug": KeyError(SECRET),
    "worker": WorkerError(f"the store said {SECRET}"),
}


class Probe(pb_grpc.ArenaServicer):
    """Answers with its caller's name; raises what the request names."""

    def ListBots(self, request: pb.ListBotsRequest, context: Any) -> pb.ListBotsReply:
        if request.game in FAILURES:
            raise FAILURES[request.game]
        user = current_user()
        reply = pb.ListBotsReply()
        reply.bots.add(name=user.name, owner=user.role.value)
        return reply

    def SubmitBot(self, request_iterator: Iterator[pb.SubmitChunk], context: Any) -> Any:
        chunks = sum(1 for _ in request_iterator)
        return pb.SubmitReply(bot=current_user().name, message=f"{chunks} chunks")

    def WatchSeason(self, request: pb.SeasonRef, context: Any) -> Iterator[pb.SeasonInfo]:
        for done in range(2):
            yield pb.SeasonInfo(organiser=current_user().name, done=done)
        if request.season_id == "gone":
            raise UnknownSeason("no season 'gone'")
        if request.season_id == "bug":
            raise ZeroDivisionError(SECRET)


def _echo(requests: Iterator[bytes], context: Any) -> Iterator[bytes]:
    for request in requests:
        if request == b"bug":
            raise KeyError(SECRET)
        yield current_user().name.encode() + b":" + request


@pytest.fixture
def tokens(tmp_path: Path) -> Iterator[tuple[Registry, dict[str, str]]]:
    with Store.open(tmp_path / "probe.db") as store:
        registry = Registry(store)
        yield (
            registry,
            {
                "alice": registry.add_user("alice"),
                "olga": registry.add_user("olga", Role.ORGANISER),
            },
        )


@pytest.fixture
def channel(tokens: tuple[Registry, dict[str, str]]) -> Iterator[grpc.Channel]:
    """A channel to the probe service behind the interceptor, the health service beside."""
    registry, _ = tokens
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=4),
        interceptors=[ArenaInterceptor(registry.authenticate, SERVICE)],
    )
    pb_grpc.add_ArenaServicer_to_server(Probe(), server)
    # The service has no bidirectional stream; one beside it, raw bytes, covers that kind.
    echo = grpc.stream_stream_rpc_method_handler(_echo)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(SERVICE, {"Echo": echo})])
    checks = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    checks.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as opened:
            yield opened
    finally:
        server.stop(0).wait()


@pytest.fixture
def probe(channel: grpc.Channel) -> pb_grpc.ArenaStub:
    return pb_grpc.ArenaStub(channel)


def _as(token: str, scheme: str = "Bearer") -> tuple[tuple[str, str], ...]:
    return (("authorization", f"{scheme} {token}"),)


def _refusal(call: Any, *args: Any, **kwargs: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        result = call(*args, timeout=10, **kwargs)
        if isinstance(result, Iterator):
            list(result)
    return err.value


def test_a_call_without_a_token_is_refused_with_the_same_line_as_before(
    probe: pb_grpc.ArenaStub,
) -> None:
    for metadata in ((), (("authorization", "Basic YWxpY2U6cHc="),), _as(""), (("x", "y"),)):
        err = _refusal(probe.ListBots, pb.ListBotsRequest(), metadata=metadata)
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED, metadata
        assert err.details() == NO_TOKEN


def test_a_bad_token_is_refused_with_one_line_for_every_cause(
    probe: pb_grpc.ArenaStub, tokens: tuple[Registry, dict[str, str]]
) -> None:
    secret = tokens[1]["alice"].partition(".")[2]
    for token in ("garbage", "alice.wrong-secret-of-some-length", f"nobody.{secret}"):
        err = _refusal(probe.ListBots, pb.ListBotsRequest(), metadata=_as(token))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED, token
        assert err.details() == BAD_TOKEN


def test_the_method_sees_the_authenticated_caller(
    probe: pb_grpc.ArenaStub, tokens: tuple[Registry, dict[str, str]]
) -> None:
    _, token = tokens
    for name, role in (("alice", "user"), ("olga", "organiser")):
        for scheme in ("Bearer", "bearer", "BEARER"):
            reply = probe.ListBots(pb.ListBotsRequest(), metadata=_as(token[name], scheme))
            assert [(b.name, b.owner) for b in reply.bots] == [(name, role)]


def test_a_refusal_is_its_status_code_and_one_capped_line(
    probe: pb_grpc.ArenaStub, tokens: tuple[Registry, dict[str, str]]
) -> None:
    alice = _as(tokens[1]["alice"])
    expected = {
        "bad": (grpc.StatusCode.INVALID_ARGUMENT, "the package has no bot.py"),
        "empty": (grpc.StatusCode.INVALID_ARGUMENT, "PackageError"),
        "long": (grpc.StatusCode.INVALID_ARGUMENT, "x" * 1000),
        "denied": (grpc.StatusCode.PERMISSION_DENIED, "not yours"),
    }
    for game, (code, details) in expected.items():
        err = _refusal(probe.ListBots, pb.ListBotsRequest(game=game), metadata=alice)
        assert (err.code(), err.details()) == (code, details), game


def test_an_internal_error_is_logged_and_answered_without_its_details(
    probe: pb_grpc.ArenaStub,
    tokens: tuple[Registry, dict[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    alice = _as(tokens[1]["alice"])
    with caplog.at_level(logging.ERROR, logger="saloon.arena.interceptors"):
        for game in ("bug", "worker"):  # not one of ours, and a WorkerError mapped to INTERNAL
            err = _refusal(probe.ListBots, pb.ListBotsRequest(game=game), metadata=alice)
            assert err.code() == grpc.StatusCode.INTERNAL, game
            assert err.details() == "ListBots: internal error"
            assert SECRET not in str(err.debug_error_string())
    failures = [r for r in caplog.records if r.getMessage() == "ListBots failed"]
    assert len(failures) == 2 and all(r.exc_info for r in failures)
    assert SECRET in caplog.text  # the operator sees the traceback


def test_a_client_stream_is_authenticated_before_it_is_read(
    probe: pb_grpc.ArenaStub, tokens: tuple[Registry, dict[str, str]]
) -> None:
    chunks = [pb.SubmitChunk(data=b"x")] * 3
    err = _refusal(probe.SubmitBot, iter(chunks))
    assert (err.code(), err.details()) == (grpc.StatusCode.UNAUTHENTICATED, NO_TOKEN)
    reply = probe.SubmitBot(iter(chunks), metadata=_as(tokens[1]["alice"]), timeout=10)
    assert (reply.bot, reply.message) == ("alice", "3 chunks")


def test_a_server_stream_is_authenticated_and_its_errors_mapped(
    probe: pb_grpc.ArenaStub, tokens: tuple[Registry, dict[str, str]]
) -> None:
    _, token = tokens
    err = _refusal(probe.WatchSeason, pb.SeasonRef(season_id="s1"))
    assert (err.code(), err.details()) == (grpc.StatusCode.UNAUTHENTICATED, NO_TOKEN)
    # Two streams of two users, interleaved: each step sees its own stream's caller.
    a = probe.WatchSeason(pb.SeasonRef(season_id="s1"), metadata=_as(token["alice"]))
    o = probe.WatchSeason(pb.SeasonRef(season_id="s1"), metadata=_as(token["olga"]))
    firsts = [next(a), next(o)]
    seen = [*firsts, *a, *o]
    assert [(i.organiser, i.done) for i in seen] == [
        ("alice", 0),
        ("olga", 0),
        ("alice", 1),
        ("olga", 1),
    ]
    # An error after the first messages: they arrive, then the mapped status.
    stream = probe.WatchSeason(pb.SeasonRef(season_id="gone"), metadata=_as(token["alice"]))
    got = []
    with pytest.raises(grpc.RpcError) as raised:
        for info in stream:
            got.append(info.done)
    assert got == [0, 1]
    assert (raised.value.code(), raised.value.details()) == (
        grpc.StatusCode.NOT_FOUND,
        "no season 'gone'",
    )
    err = _refusal(probe.WatchSeason, pb.SeasonRef(season_id="bug"), metadata=_as(token["alice"]))
    assert (err.code(), err.details()) == (grpc.StatusCode.INTERNAL, "WatchSeason: internal error")


def test_a_bidirectional_stream_is_covered_too(
    channel: grpc.Channel, tokens: tuple[Registry, dict[str, str]]
) -> None:
    echo = channel.stream_stream(f"/{SERVICE}/Echo")
    err = _refusal(echo, iter([b"a"]))
    assert (err.code(), err.details()) == (grpc.StatusCode.UNAUTHENTICATED, NO_TOKEN)
    replies = echo(iter([b"a", b"b"]), metadata=_as(tokens[1]["olga"]), timeout=10)
    assert list(replies) == [b"olga:a", b"olga:b"]
    err = _refusal(echo, iter([b"a", b"bug"]), metadata=_as(tokens[1]["olga"]))
    assert (err.code(), err.details()) == (grpc.StatusCode.INTERNAL, "Echo: internal error")


def test_other_services_need_no_token(channel: grpc.Channel) -> None:
    reply = health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=SERVICE), timeout=10
    )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_current_user_outside_an_rpc_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        current_user()


def test_every_method_of_the_served_api_needs_a_token(arena: Arena) -> None:
    """ArenaServer: each method of the service refuses a call without a token, whatever
    its kind; the health service answers one."""
    methods = pb.DESCRIPTOR.services_by_name["Arena"].methods
    assert len(methods) == 19  # five tournament methods (docs/tournaments.md) beside the fourteen
    with grpc.insecure_channel(arena.address) as channel:
        for m in methods:
            path = f"/{SERVICE}/{m.name}"
            # Raw bytes both ways: an empty message is a valid request of every method.
            if m.client_streaming:
                call = channel.stream_unary(path)
                request: Any = iter([b""])
            elif m.server_streaming:
                call, request = channel.unary_stream(path), b""
            else:
                call, request = channel.unary_unary(path), b""
            err = _refusal(call, request)
            assert (err.code(), err.details()) == (grpc.StatusCode.UNAUTHENTICATED, NO_TOKEN), m
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=SERVICE), timeout=10
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
