"""The ASGI layer around the whole app: security headers on every response (error pages
included), bounds on request bodies (size and time), and redirects that stay on this site.

* A body past ``max_body_bytes`` (declared, or counted as it arrives, chunked or not) is
  answered 413; one slower than ``body_timeout_s`` between its pieces is answered 408; a
  client that goes away mid-body gets nothing. Each logs one line, never a traceback.
* Every ``Location`` the app sends is made relative (a path on this site): the ``Host``
  header is the client's to choose, so a redirect built from it (Starlette's added slash,
  ``/static`` -> ``/static/``) could send a visitor to any host. The site never redirects
  off-site, so no public address needs configuring.
* uvicorn's own answers that never reach the app (a request h11 cannot parse: 400; a
  request past the connection limit: 503) carry the same headers:
  :class:`saloon.arena.web.serve.GuardedH11Protocol` makes them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from saloon.arena.web.errors import WebError
from saloon.arena.web.limits import WebLimits

log = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Any
Send = Any

#: Scripts and styles only from this host's /static/; no inline script, no plug-ins, no
#: framing; fetches only to this host; form posts only to this host.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

#: The headers every answer carries (over HTTPS also :data:`HSTS`).
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
HSTS = (b"strict-transport-security", b"max-age=31536000")


class BodyRefused(WebError):
    """A request body the server will not read to its end; the connection is closed
    after the answer (the rest of the body is never read)."""


class TooLarge(BodyRefused):
    """The request body passed ``max_body_bytes``."""

    status = 413


class TooSlow(BodyRefused):
    """The request body's next piece did not come within ``body_timeout_s``."""

    status = 408


class ClientGone(BodyRefused):
    """The client closed the connection before its body was complete (nobody to answer)."""

    status = 400


def relative_location(location: str) -> str:
    """``location`` as a path on this site (with its query): never a scheme, a host, or a
    path a browser would read as one (``//host``, ``/\\host``)."""
    parts = urlsplit(location)
    path = "/" + parts.path.lstrip("/\\")
    return f"{path}?{parts.query}" if parts.query else path


class Guard:
    """Wraps the ASGI app ``app``: security headers and relative redirects out, body
    bounds in."""

    def __init__(self, app: Any, limits: WebLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [*SECURITY_HEADERS, HSTS] if scope.get("scheme") == "https" else SECURITY_HEADERS
        # h11 bounds headers that arrive in pieces; these bound those that came at once.
        size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        size += sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))
        if size > self.limits.max_header_bytes:
            await plain_answer(send, 431, b"request headers too large\n", extra)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limits.max_body_bytes:
            refused(scope, TooLarge(f"a body of {declared} bytes declared"))
            await plain_answer(send, 413, b"request body too large\n", extra)
            return
        started = complete = False

        async def guarded_send(message: dict[str, Any]) -> None:
            nonlocal started, complete
            if message["type"] == "http.response.start":
                started = True
                headers = [
                    (k, relative_location(v.decode("latin-1")).encode("latin-1"))
                    if k.lower() == b"location"
                    else (k, v)
                    for k, v in message.get("headers", [])
                ]
                message["headers"] = [*headers, *extra]
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                complete = True
            await send(message)

        received = 0
        body_done = False

        async def bounded_receive() -> Any:
            nonlocal received, body_done
            if body_done:  # after the body: only a disconnect comes, whenever it comes
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.limits.body_timeout_s)
            except TimeoutError:
                raise TooSlow(
                    f"the request body did not arrive within {self.limits.body_timeout_s:g} s"
                ) from None
            if message["type"] == "http.disconnect":
                body_done = True
                raise ClientGone("the client closed the connection before its body ended")
            received += len(message.get("body", b""))
            if received > self.limits.max_body_bytes:
                raise TooLarge(f"the request body passed {self.limits.max_body_bytes} bytes")
            body_done = not message.get("more_body", False)
            return message

        try:
            await self.app(scope, bounded_receive, guarded_send)
        except BodyRefused as exc:  # raised where the app did not answer it
            if not started:
                refused(scope, exc)
                if not isinstance(exc, ClientGone):
                    await plain_answer(send, exc.status, f"{exc}\n".encode(), extra)
        except Exception:
            # The app's error handler answered and logged it (Starlette's outermost
            # middleware re-raises after that): a second traceback from uvicorn would only
            # repeat it. An answer cut short is uvicorn's to close.
            if not complete:
                raise


def refused(scope: Mapping[str, Any], exc: BodyRefused) -> None:
    """The one log line of a refused request body."""
    log.warning("%s %s: %s (%d)", scope.get("method"), scope.get("path"), exc, exc.status)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def plain_answer(
    send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]
) -> None:
    """A short plain-text answer with the headers ``extra``; the connection is closed."""
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
