"""The arena service's own refusals, and the gRPC status code of every error an RPC may raise.

The servicer (saloon.arena.service) raises plain exceptions, its own below and the lower
layers'; the interceptor (saloon.arena.interceptors) answers each with the code
:func:`status_of` gives it, so the table is the API's one list of what fails how.
"""

from __future__ import annotations

import grpc

from saloon.games.errors import GameError
from saloon.ratings.errors import NoResultsError, RatingsError
from saloon.referee.errors import RecordError, RefereeError
from saloon.worker.errors import (
    BadToken,
    BotNameTaken,
    BotRefError,
    InvalidSchedule,
    PackageError,
    PackageTooLarge,
    QueueUnavailable,
    RegistryError,
    SandboxError,
    SeasonConflict,
    SeasonError,
    SeasonSpecError,
    StoreUnavailable,
    UnknownBot,
    UnknownMatch,
    UnknownSeason,
    UnknownUser,
    UserExists,
    WorkerError,
)


class ArenaError(Exception):
    """Base of the arena service's own refusals."""


class PermissionDenied(ArenaError):
    """The user may not do that (another user's bot, logs or stderr; not an organiser)."""


class RateLimited(ArenaError):
    """Too many requests of one kind from one user."""


class UploadError(ArenaError):
    """A malformed upload stream (no header first, a second header, an empty upload)."""


class SameCode(ArenaError):
    """A version whose files another bot already entered on the game (it enters once)."""


class NotConfigured(ArenaError):
    """The server was started without what this call needs (e.g. no Redis queue)."""


class ShuttingDown(ArenaError):
    """The server is stopping: a follower's stream ends (the client reconnects)."""


class AddressInUse(ArenaError):
    """``saloon serve`` was asked to listen on an address another process holds."""


class UnknownTournament(RegistryError):
    """No tournament of that id."""


class FieldFrozen(RegistryError):
    """A tournament's deadline has passed (or it is over): its field takes no entry and
    no final mark any more."""


#: Exception -> status code, most specific first (the first isinstance match wins).
STATUS_OF: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (BadToken, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (RateLimited, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (PackageTooLarge, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (BotNameTaken, grpc.StatusCode.ALREADY_EXISTS),
    (SameCode, grpc.StatusCode.ALREADY_EXISTS),
    (UserExists, grpc.StatusCode.ALREADY_EXISTS),
    (SeasonConflict, grpc.StatusCode.ALREADY_EXISTS),
    (UnknownSeason, grpc.StatusCode.NOT_FOUND),
    (UnknownTournament, grpc.StatusCode.NOT_FOUND),
    (FieldFrozen, grpc.StatusCode.FAILED_PRECONDITION),
    (UnknownMatch, grpc.StatusCode.NOT_FOUND),
    (UnknownBot, grpc.StatusCode.NOT_FOUND),
    (UnknownUser, grpc.StatusCode.NOT_FOUND),
    (NoResultsError, grpc.StatusCode.NOT_FOUND),
    (ShuttingDown, grpc.StatusCode.UNAVAILABLE),
    (StoreUnavailable, grpc.StatusCode.UNAVAILABLE),
    (QueueUnavailable, grpc.StatusCode.UNAVAILABLE),
    (SandboxError, grpc.StatusCode.UNAVAILABLE),
    (NotConfigured, grpc.StatusCode.FAILED_PRECONDITION),
    (PackageError, grpc.StatusCode.INVALID_ARGUMENT),
    (UploadError, grpc.StatusCode.INVALID_ARGUMENT),
    (SeasonSpecError, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidSchedule, grpc.StatusCode.INVALID_ARGUMENT),
    (BotRefError, grpc.StatusCode.INVALID_ARGUMENT),
    (RegistryError, grpc.StatusCode.INVALID_ARGUMENT),
    (RatingsError, grpc.StatusCode.INVALID_ARGUMENT),
    (RecordError, grpc.StatusCode.INVALID_ARGUMENT),
    (GameError, grpc.StatusCode.INVALID_ARGUMENT),
    (RefereeError, grpc.StatusCode.INVALID_ARGUMENT),
    (SeasonError, grpc.StatusCode.FAILED_PRECONDITION),
    (WorkerError, grpc.StatusCode.INTERNAL),
)


def status_of(exc: BaseException) -> grpc.StatusCode | None:
    """The status code an exception maps to (None: not one of ours, a bug)."""
    for kind, code in STATUS_OF:
        if isinstance(exc, kind):
            return code
    return None
