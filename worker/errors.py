"""The worker's exceptions: one base class, specific subclasses (a plain list).

Anything a user, a bot or the infrastructure can trigger raises one of these (never
``assert``), so the CLI can print one clear line and a job can decide whether to retry.
"""

from __future__ import annotations


class WorkerError(Exception):
    """Base class of every error the worker package raises on purpose."""


class SeasonError(WorkerError):
    """A season that cannot be created, started or run as asked."""


class SeasonSpecError(SeasonError):
    """A season or match spec that is malformed or asks for something impossible."""


class BotRefError(SeasonError):
    """A seat's bot reference that names no bot this worker can run."""


class QueueUnavailable(SeasonError):
    """No Redis answers at the queue URL (use --local to play on this machine)."""
