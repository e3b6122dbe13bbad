"""The games' exceptions: one base class, specific subclasses.

Anything a bot or a user can do wrong to a game (an unknown id, a bad option or seat count,
an illegal action) raises one of these, never ``assert`` (``python -O`` strips asserts), so
the CLI can print one clear line and the gRPC edge can map it to a status code. This module
is a leaf: the engines import it and nothing else of the project.
"""

from __future__ import annotations


class GameError(Exception):
    """Base class of every error the games raise on purpose."""


class UnknownGameError(GameError):
    """A game id that no registered game answers to."""


class GameOptionError(GameError):
    """An unknown game option, or a value the option does not take."""


class SeatCountError(GameError):
    """A number of seats the game cannot be played with."""


class IllegalActionError(GameError):
    """An action that is not legal in the current state (or a chance outcome that is not)."""


class NotChanceError(GameError):
    """A chance operation on a state whose pending decision belongs to a seat (or vice versa)."""
