"""The web server: uvicorn on its own thread and event loop, with the arena's limits.

uvicorn bounds idle keep-alive connections and header size, but not the time a client may
take to send its headers: a connection that never finishes a request would stay open for
as long as the client liked. :class:`GuardedH11Protocol` closes any connection whose
request headers are not complete ``header_timeout_s`` after its first byte (or after it
opened). It also gives uvicorn's own answers, which never reach the app and its
:class:`~saloon.arena.web.guard.Guard`, the same security headers as every other answer:
to a request h11 cannot parse (400), and to one past ``max_connections`` (503; uvicorn's
check is made here instead, the same way, so that the answer can carry them). The socket
is bound at construction, so a port in use fails ``saloon serve`` at once with OSError,
before anything starts.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from saloon.arena.web.guard import HSTS, SECURITY_HEADERS, plain_answer
from saloon.arena.web.limits import WebLimits

log = logging.getLogger(__name__)


class WebConfig(uvicorn.Config):
    """uvicorn's configuration plus the header timeout its protocols do not have."""

    def __init__(self, app: Any, limits: WebLimits, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.limits = limits


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol that also closes connections slow to send their headers."""

    def __init__(self, config: WebConfig, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self._header_timeout = config.limits.header_timeout_s
        self._header_timer: asyncio.TimerHandle | None = None
        # uvicorn answers a request past the limit with its own 503, which has no security
        # headers: the same check, made as the request's app instead.
        self._limit = self.limit_concurrency
        self.limit_concurrency = None
        if self._limit is not None:
            self.app = self._limited(self.app)

    def _limited(self, app: Any) -> Any:
        async def limited(scope: Any, receive: Any, send: Any) -> None:
            # uvicorn's own test, made before the request's task joined self.tasks.
            limit = self._limit or 0
            if len(self.connections) >= limit or len(self.tasks) > limit:
                self.logger.warning("Exceeded concurrency limit.")
                extra = [*SECURITY_HEADERS, HSTS] if self.scheme == "https" else SECURITY_HEADERS
                await plain_answer(send, 503, b"service unavailable: too many connections\n", extra)
                return
            await app(scope, receive, send)

        return limited

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of a next request on a kept-alive connection
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        waiting_for = self.cycle
        self._header_timer = self.loop.call_later(self._header_timeout, self._expire, waiting_for)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expire(self, waiting_for: object) -> None:
        self._header_timer = None
        if self.cycle is waiting_for:  # no request's headers completed since it was armed
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to a request h11 cannot parse, with the security headers (its
        own has none) and without uvicorn's words: ``400 bad request``, then close. Written
        as bytes: h11 has given up on the connection, and nothing more is read from it."""
        body = b"bad request\n"
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *SECURITY_HEADERS,
            *([HSTS] if self.scheme == "https" else []),
        ]
        head = b"".join(b"%s: %s\r\n" % (name, value) for name, value in headers)
        self.transport.write(b"HTTP/1.1 400 Bad Request\r\n" + head + b"\r\n" + body)
        self.transport.close()


def bind(address: tuple[str, int]) -> socket.socket:
    """A listening TCP socket on ``address`` (IPv6 when the host has a colon)."""
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted sockets inherit it: uvicorn writes a response's head and body apart, and
        # with Nagle's algorithm against the client's delayed ACK each read waited ~40 ms.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class WebServer:
    """An ASGI app served by uvicorn on a background thread (``start``/``stop``)."""

    def __init__(
        self,
        address: tuple[str, int],
        app: Any,
        *,
        limits: WebLimits | None = None,
        tls_cert: str = "",
        tls_key: str = "",
    ) -> None:
        self.limits = limits or WebLimits()
        self.tls = bool(tls_cert)
        self.socket = bind(address)
        config = WebConfig(
            app,
            self.limits,
            http=GuardedH11Protocol,
            ws="none",
            lifespan="on",
            # No "Server: uvicorn" banner; the Date header stays (caches need it).
            server_header=False,
            proxy_headers=False,
            access_log=False,
            log_config=None,
            timeout_keep_alive=self.limits.keep_alive_s,
            timeout_graceful_shutdown=self.limits.graceful_s,
            limit_concurrency=self.limits.max_connections,
            h11_max_incomplete_event_size=self.limits.max_header_bytes,
            ssl_certfile=tls_cert or None,
            ssl_keyfile=tls_key or None,
        )
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port it listens on (useful after binding port 0)."""
        return int(self.socket.getsockname()[1])

    @property
    def scheme(self) -> str:
        """``https`` when serving TLS, else ``http``."""
        return "https" if self.tls else "http"

    def start(self) -> None:
        """Serve on a background thread; returns once the server accepts connections."""
        self._thread = threading.Thread(target=self._run, name="web", daemon=True)
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            self._thread.join(0.01)
        if not self.server.started:
            raise OSError("the web server did not start (see the log)")

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.socket]))

    def stop(self) -> None:
        """Stop accepting, let requests in flight finish (bounded), close the socket."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(self.limits.graceful_s + 5)
        self.socket.close()
