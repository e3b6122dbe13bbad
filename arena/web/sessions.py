"""Owners' sign-in: an API token exchanged for a session cookie.

The token is posted in a form body (never in a URL), checked with the registry's
``authenticate``, and answered with a random session id in a cookie that is HttpOnly
(scripts cannot read it), SameSite=Strict (no other site can make the browser send it, so
no cross-site request acts as the owner) and Secure. Sessions live in this process's memory
and end after :data:`SESSION_S` or on sign-out; restarting the server signs everyone out.
A session also ends the moment the token it was signed in with stops being its user's
(``saloon user rotate``, ``saloon user remove``, from any process): it keeps that token's
fingerprint (``saloon.arena.registry.token_fingerprint``) and every request that presents
it compares it with the user's current one in the store (one read by primary key).
Sign-in is refused unless the request came over TLS or from loopback: a token typed into a
plain-HTTP page on a network would travel in clear.
"""

from __future__ import annotations

import ipaddress
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from saloon.arena.registry import User

COOKIE = "saloon_session"
#: Seconds a session lasts from sign-in.
SESSION_S = 12 * 3600
#: Sessions kept at most (the oldest is dropped first): bounds memory under abuse.
MAX_SESSIONS = 10_000
#: Failed sign-ins one client address may make per :data:`FAILURE_WINDOW_S` (then 429).
MAX_FAILURES, FAILURE_WINDOW_S = 10, 60.0
#: Client addresses whose failures are remembered at most (the oldest dropped first).
MAX_FAILING_CLIENTS = 10_000


@dataclass(frozen=True)
class Session:
    """A signed-in user, the fingerprint of the token they signed in with, and when their
    session ends (monotonic seconds)."""

    user: User
    fingerprint: str
    ends: float


#: A user's name -> the fingerprint of their current token (None: no such user, removed).
CurrentFingerprint = Callable[[str], str | None]


class Sessions:
    """The signed-in sessions of one web server; ``current`` reads a user's current token
    fingerprint (``Registry.fingerprint``)."""

    def __init__(self, current: CurrentFingerprint, max_failures: int = MAX_FAILURES) -> None:
        self.current = current
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}
        self.max_failures = max_failures
        self._failures: dict[str, list[float]] = {}

    def throttled(self, client: str) -> bool:
        """True when ``client`` failed to sign in too often lately (guessing tokens)."""
        now = time.monotonic()
        with self._lock:
            recent = [t for t in self._failures.get(client, []) if now - t < FAILURE_WINDOW_S]
            if recent:
                self._failures[client] = recent
            else:
                self._failures.pop(client, None)
            return len(recent) >= self.max_failures

    def failed(self, client: str) -> None:
        """Note a failed sign-in of ``client``."""
        with self._lock:
            while len(self._failures) >= MAX_FAILING_CLIENTS and client not in self._failures:
                self._failures.pop(next(iter(self._failures)))
            self._failures.setdefault(client, []).append(time.monotonic())

    def open(self, user: User, fingerprint: str) -> str:
        """A new session id for ``user``, signed in with the token of ``fingerprint``."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            while len(self._by_id) >= MAX_SESSIONS:
                self._by_id.pop(next(iter(self._by_id)))
            self._by_id[sid] = Session(user, fingerprint, time.monotonic() + SESSION_S)
        return sid

    def user(self, sid: str | None) -> User | None:
        """The user of session ``sid``, or None (unknown, ended, or its token is not the
        user's any more). Reads the store when ``sid`` is a live session."""
        if not sid:
            return None
        with self._lock:
            session = self._by_id.get(sid)
            if session is None:
                return None
            if session.ends < time.monotonic():
                del self._by_id[sid]
                return None
        if self.current(session.user.name) != session.fingerprint:
            with self._lock:
                self._by_id.pop(sid, None)
            return None
        return session.user

    def close(self, sid: str | None) -> None:
        """End session ``sid`` (sign-out)."""
        if sid:
            with self._lock:
                self._by_id.pop(sid, None)


def same_origin(origin: str | None, scheme: str, host: str | None) -> bool:
    """False when a form post's ``Origin`` names another site (a cross-site sign-in or
    sign-out); a post without one (an older browser, a script) is let through."""
    if not origin:
        return True
    return host is not None and origin == f"{scheme}://{host}"


def sign_in_allowed(scheme: str, client_host: str | None) -> bool:
    """True over TLS, or from a loopback address (local use)."""
    if scheme == "https":
        return True
    try:
        return client_host is not None and ipaddress.ip_address(client_host).is_loopback
    except ValueError:
        return False
