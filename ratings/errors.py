"""The ratings package's exceptions: one base class, specific subclasses."""

from __future__ import annotations


class RatingsError(Exception):
    """Base class of every error the ratings package raises on purpose."""


class UnknownLadderError(RatingsError):
    """A game (or game option) that no ladder answers to."""


class NoResultsError(RatingsError):
    """A leaderboard asked for where the store holds nothing to rate or list."""


class UnknownBotError(RatingsError):
    """A bot name the store does not know."""


class OutputError(RatingsError):
    """A leaderboard that cannot be written where it was asked to go."""


class ResultError(RatingsError):
    """A result that cannot be rated as given (seats and ranks disagree, ...)."""
