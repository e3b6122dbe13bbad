"""The worker's exceptions: one base class, specific subclasses (a plain list).

Anything a user, a bot or the infrastructure can trigger raises one of these (never
``assert``), so the CLI can print one clear line and a job can decide whether to retry.
"""

from __future__ import annotations


class WorkerError(Exception):
    """Base class of every error the worker package raises on purpose."""


class StoreError(WorkerError):
    """The results store refused an operation (bad input, or a state it cannot reach)."""


class StoreUnavailable(StoreError):
    """The database could not be reached or dropped the connection: retry later."""


class BotNameTaken(StoreError):
    """A bot name that another owner registered first."""


class UnknownBot(StoreError):
    """A bot name the store does not know."""


class SeasonConflict(StoreError):
    """A season id that exists already with a different spec (or clashing match ids)."""


class UnknownSeason(StoreError):
    """A season id the store does not know."""


class UnknownMatch(StoreError):
    """A match id that no season scheduled."""


class InvalidSchedule(StoreError):
    """A schedule with repeated match ids or indices, or a spec that is not JSON."""


class InvalidRecord(StoreError):
    """A match record the store cannot accept (malformed, or for another match id)."""
