"""The web side's errors: each becomes one status code and a short page or JSON body."""

from __future__ import annotations

from saloon.arena.errors import ArenaError


class WebError(ArenaError):
    """Base of the web side's errors; ``status`` is the HTTP status it answers with."""

    status = 400


class NotFound(WebError):
    """No such game, ladder, season, bot or match."""

    status = 404


class SignInRequired(WebError):
    """The page is for a bot's owner: sign in first."""

    status = 401


class Forbidden(WebError):
    """Signed in, but not as the owner of what was asked for (or sign-in refused here)."""

    status = 403


class TooManyAttempts(WebError):
    """Too many failed sign-ins from one address lately."""

    status = 429
