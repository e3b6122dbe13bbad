"""The referee's exceptions: one base class, specific subclasses.

Anything a bot or a user can trigger raises one of these (never ``assert``), so the CLI can
print one clear line and the gRPC edge can map it to a status code.
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base class of every error the referee raises on purpose."""


class UnknownGameError(RefereeError):
    """A game id that no registered game answers to."""


class GameOptionError(RefereeError):
    """An unknown game option, or a value the option does not take."""


class SeatCountError(RefereeError):
    """A number of seats the game cannot be played with."""


class IllegalActionError(RefereeError):
    """An action that is not legal in the current state (or a chance outcome that is not)."""


class NotChanceError(RefereeError):
    """A chance operation on a state whose pending decision belongs to a seat (or vice versa)."""


class RecordError(RefereeError):
    """A match record that is malformed or does not verify."""


class BotSpecError(RefereeError):
    """A seat specification (house:NAME or a path) that cannot be resolved."""


class ConnectionThreadError(RefereeError):
    """A bot connection (or one of its seats) used from another thread than its own."""
