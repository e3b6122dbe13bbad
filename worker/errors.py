"""The worker's errors: one base class, a specific subclass per thing that can go wrong."""

from __future__ import annotations


class WorkerError(Exception):
    """Base of every error the worker layer raises for a user's or operator's mistake."""


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
    """The package has no ``bot.py`` at its top."""


class SandboxError(WorkerError):
    """A sandbox cannot do its job (no engine, no base image, unknown kind)."""


class UnknownSandbox(SandboxError):
    """``open_sandbox`` was asked for a kind that does not exist."""


class DockerUnavailable(SandboxError):
    """No Docker engine answers."""


class BaseImageMissing(SandboxError):
    """The bot base image is not in the engine (build it: deploy/bot-image/)."""


class ImageBuildError(SandboxError):
    """Building a bot's image failed."""
