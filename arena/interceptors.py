"""The arena API's edge, written once for every RPC: who is calling, and what a failure answers.

:class:`ArenaInterceptor` wraps each method of the ``saloon.v1.Arena`` service, unary or
streaming either way. Before the method runs it authenticates the caller from the
``authorization: Bearer <user>.<secret>`` metadata (so an upload is refused before a byte
of it is read) and makes that user the method's :func:`current_user`. An exception from
the method, or from iterating its responses, is answered with the status code of
:data:`saloon.arena.errors.STATUS_OF` and the exception's one-line message; one of no
known kind (a bug) or one mapped to INTERNAL is logged with its traceback and answered
``<Method>: internal error``, so no detail of it reaches the caller. Methods of other
services on the same server (the standard health service) pass through untouched: they
need no token.

The servicer's methods therefore raise exceptions rather than call ``context.abort``.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

import grpc

from saloon.arena.errors import status_of
from saloon.arena.metrics import observe_grpc
from saloon.arena.registry import User
from saloon.worker.errors import BadToken

log = logging.getLogger(__name__)

#: A refusal's details are cut to this many characters.
MAX_DETAILS = 1000

#: The caller of the arena RPC being served; set in a context of the call's own.
_caller: contextvars.ContextVar[User] = contextvars.ContextVar("saloon_arena_caller")

_DONE = object()

Behavior = Callable[[Any, Any], Any]


def current_user() -> User:
    """The authenticated caller of the arena RPC being served."""
    try:
        return _caller.get()
    except LookupError:
        raise RuntimeError("current_user() outside an arena RPC") from None


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token of the call's ``authorization: Bearer <token>`` metadata; BadToken if none."""
    for key, value in metadata or ():
        if key == "authorization":
            scheme, _, token = str(value).partition(" ")
            if scheme.lower() == "bearer" and token:
                return token.strip()
    raise BadToken("no API token: send 'authorization: Bearer <token>' metadata")


def _abort(context: Any, method: str, exc: Exception) -> NoReturn:
    """End the call with the status of ``exc`` (a bug: logged, INTERNAL, no details)."""
    code = status_of(exc)
    if code is None or code is grpc.StatusCode.INTERNAL:
        log.error("%s failed", method, exc_info=exc)
        context.abort(grpc.StatusCode.INTERNAL, f"{method}: internal error")
    else:
        context.abort(code, str(exc)[:MAX_DETAILS] or type(exc).__name__)
    raise AssertionError("context.abort raises")


class ArenaInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]  # grpc is untyped
    """Authentication and error mapping around every method of one gRPC service."""

    def __init__(self, authenticate: Callable[[str], User], service: str) -> None:
        self._authenticate = authenticate
        self._prefix = f"/{service}/"

    def intercept_service(
        self, continuation: Callable[[Any], Any], handler_call_details: Any
    ) -> Any:
        """The service's handler for this call, wrapped; another service's as it is."""
        handler = continuation(handler_call_details)
        method = str(handler_call_details.method)
        if handler is None or not method.startswith(self._prefix):
            return handler
        name = method[len(self._prefix) :]
        codec = (handler.request_deserializer, handler.response_serializer)
        if handler.request_streaming and handler.response_streaming:
            return grpc.stream_stream_rpc_method_handler(
                self._streaming(name, handler.stream_stream), *codec
            )
        if handler.request_streaming:
            return grpc.stream_unary_rpc_method_handler(
                self._unary(name, handler.stream_unary), *codec
            )
        if handler.response_streaming:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(name, handler.unary_stream), *codec
            )
        return grpc.unary_unary_rpc_method_handler(self._unary(name, handler.unary_unary), *codec)

    def _enter(self, context: Any) -> None:
        """Authenticate the caller into the current context (run inside the call's own)."""
        _caller.set(self._authenticate(bearer_token(context.invocation_metadata())))

    def _unary(self, name: str, behavior: Behavior) -> Behavior:
        def serve(request: Any, context: Any) -> Any:
            # A context of the call's own: the user never outlives the call in its thread.
            call = contextvars.copy_context()
            started = time.perf_counter()
            try:
                call.run(self._enter, context)
                return call.run(behavior, request, context)
            except Exception as exc:
                _abort(context, name, exc)
            finally:
                observe_grpc(name, _code(context), time.perf_counter() - started)

        return serve

    def _streaming(self, name: str, behavior: Behavior) -> Behavior:
        def serve(request: Any, context: Any) -> Iterator[Any]:
            call = contextvars.copy_context()
            started = time.perf_counter()
            try:
                call.run(self._enter, context)
                responses = iter(call.run(behavior, request, context))
                # Each step of the method's generator runs in the call's context too.
                while (response := call.run(next, responses, _DONE)) is not _DONE:
                    yield response
            except Exception as exc:
                _abort(context, name, exc)
            finally:
                observe_grpc(name, _code(context), time.perf_counter() - started)

        return serve


def _code(context: Any) -> str:
    """The status code a call ended with (its name: OK, NOT_FOUND, ...)."""
    try:
        code = context.code()
    except Exception:  # a context without code(): an answer was sent, so OK
        code = None
    if code is None:
        return "OK"
    return str(getattr(code, "name", code))
