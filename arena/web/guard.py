"""The ASGI layer around the whole app: security headers on every response (error pages
included), and bounds on request bodies (size and time)."""

from __future__ import annotations

import asyncio
from typing import Any

from saloon.arena.web.limits import WebLimits

Scope = dict[str, Any]
Receive = Any
Send = Any

#: Scripts and styles only from this host's /static/; no inline script, no plug-ins, no
#: framing; fetches only to this host; form posts only to this host.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
_HSTS = (b"strict-transport-security", b"max-age=31536000")


class TooLarge(Exception):
    """The request body passed ``max_body_bytes``."""


class Guard:
    """Wraps the ASGI app ``app``: security headers out, body bounds in."""

    def __init__(self, app: Any, limits: WebLimits) -> None:
        self.app = app
        self.limits = limits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [*_HEADERS, _HSTS] if scope.get("scheme") == "https" else _HEADERS
        # h11 bounds headers that arrive in pieces; these bound those that came at once.
        size = len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
        size += sum(len(k) + len(v) + 4 for k, v in scope.get("headers", ()))
        if size > self.limits.max_header_bytes:
            await _plain(send, 431, b"request headers too large\n", extra)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limits.max_body_bytes:
            await _plain(send, 413, b"request body too large\n", extra)
            return
        started = False

        async def send_with_headers(message: dict[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        received = 0

        async def bounded_receive() -> Any:
            nonlocal received
            message = await asyncio.wait_for(receive(), self.limits.body_timeout_s)
            received += len(message.get("body", b""))
            if received > self.limits.max_body_bytes:
                raise TooLarge
            return message

        try:
            await self.app(scope, bounded_receive, send_with_headers)
        except (TooLarge, TimeoutError) as exc:
            if started:
                raise
            status = 413 if isinstance(exc, TooLarge) else 408
            await _plain(send, status, b"request body too large or too slow\n", extra)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def _plain(send: Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
