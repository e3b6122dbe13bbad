"""The referee's exceptions: one base class, specific subclasses.

Anything a bot or a user can trigger raises one of these (never ``assert``), so the CLI can
print one clear line and the gRPC edge can map it to a status code. A game's own errors
(unknown game, bad option, illegal action) are :class:`saloon.games.errors.GameError`.
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base class of every error the referee raises on purpose."""


class RecordError(RefereeError):
    """A match record that is malformed or does not verify."""


class BotSpecError(RefereeError):
    """A seat specification (house:NAME or a path) that cannot be resolved."""


class PlatformStartTimeout(RefereeError):
    """A bot runtime did not come up (the platform's part of a seat's start: the process
    or container started and the runtime about to load the bot) within its bound: the
    machine's fault, not the bot's; the match is retried (a worker: SandboxFailed)."""


class SandboxUnusable(RefereeError):
    """The process sandbox cannot run a bot on this machine as configured (a TMPDIR the
    bot's own uid cannot enter)."""


class ConnectionThreadError(RefereeError):
    """A bot connection (or one of its seats) used from another thread than its own."""
