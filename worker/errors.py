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


class PackageError(WorkerError):
    """A bot package was refused; nothing of it was stored or built."""


class PackageNotFound(PackageError):
    """No bot package at the given path."""


class PackageFormatError(PackageError):
    """The file is not a bot package (not a folder, .py, .tar.gz/.tgz or .zip, or corrupt)."""


class PackageTooLarge(PackageError):
    """The package holds more bytes than the size limit."""


class TooManyFiles(PackageError):
    """The package holds more files than the file-count limit."""


class UnsafePath(PackageError):
    """An entry's path is absolute, climbs out with ``..``, or is otherwise unsafe."""


class ForbiddenEntry(PackageError):
    """An entry is a symlink, a hard link, a device, a fifo or a socket."""


class MissingEntryPoint(PackageError):
    """The package's language and entry cannot be told: no entry file (``bot.py``, or
    another language's), several and no ``saloon.toml``, or a bad ``saloon.toml``."""


class UnsupportedLanguage(PackageError):
    """A package in a language this sandbox has no runtime for."""


class BuildFailed(PackageError):
    """A compiled version's build failed, overran its clock or flooded its output; the
    message carries the compiler's own, with the author's paths."""


class SandboxError(WorkerError):
    """A sandbox cannot do its job (no engine, no base image, unknown kind)."""


class UnknownSandbox(SandboxError):
    """``open_sandbox`` was asked for a kind that does not exist."""


class DockerUnavailable(SandboxError):
    """No Docker engine answers."""


class BaseImageMissing(SandboxError):
    """The bot base image is not in the engine (build it: deploy/bot-image/)."""


class SandboxFailed(SandboxError):
    """The sandbox failed a match it was playing (the engine errored, or lost or removed a
    bot's container): not the bot's doing, so no fault of its; the match's job fails and
    retries with backoff."""


class ImageBuildError(SandboxError):
    """Building a bot's image failed."""


class SeasonError(WorkerError):
    """A season that cannot be created, started or run as asked."""


class SeasonSpecError(SeasonError):
    """A season or match spec that is malformed or asks for something impossible."""


class BotRefError(SeasonError):
    """A seat's bot reference that names no bot this worker can run."""


class QueueUnavailable(SeasonError):
    """No Redis answers at the queue URL (use --local to play on this machine)."""


class RedisLostAtStart(WorkerError):
    """Redis went away while a worker was starting a job: the job never ran. It goes
    back to its queue with its retries untouched (the platform's outage, not the match's),
    and the worker logs the outage's one line, not a traceback."""


class RegistryError(WorkerError):
    """The arena's registry refused: a bad name, an unknown user or schedule."""


class UserExists(RegistryError):
    """A user of that name exists."""


class UnknownUser(RegistryError):
    """No user of that name."""


class BadToken(RegistryError):
    """An API token that is missing, malformed or not any user's."""


class QualificationFailed(RegistryError):
    """A submitted version lost its qualification match by a fault (not stored)."""
