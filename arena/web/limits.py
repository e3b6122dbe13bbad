"""What the web side allows one client and all of them together (docs/arena.md)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WebLimits:
    """Timeouts and bounds of the web server; the defaults suit a public arena."""

    #: Seconds a connection may take to send a request's headers (slowloris bound).
    header_timeout_s: float = 10.0
    #: Seconds an idle keep-alive connection stays open between requests.
    keep_alive_s: int = 5
    #: Seconds a request may take to send its body.
    body_timeout_s: float = 10.0
    #: Open connections at once; past it every request is answered 503 at once.
    max_connections: int = 1024
    #: Bytes of a request line plus headers (h11 answers 431 past it).
    max_header_bytes: int = 16 * 1024
    #: Bytes of a request body (only the sign-in form has one): 413 past it.
    max_body_bytes: int = 8 * 1024
    #: Threads that read the store at once (requests past it wait for one).
    store_threads: int = 8
    #: Seconds the server waits for requests in flight when it stops.
    graceful_s: int = 5
