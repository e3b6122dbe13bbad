"""Submitting a bot version: validate the upload, build its image, qualify it, store it.

The order is the point: everything that can refuse a submission runs before anything is
stored, so a refused submission changes nothing.

1. the name (:data:`~saloon.arena.registry.BOT_NAME_RE`) and the game;
2. the upload: at most :data:`MAX_UPLOAD_BYTES`, its format told by its first bytes (gzip,
   zip, tar, or Python source), then every check of
   :func:`~saloon.worker.sandbox.packages.load_package` (size, file count, paths, links,
   devices, entry point);
3. ownership: a bot name belongs to the first user who stored a version of it, and a bot
   plays one game; files that are another bot's latest version on the game are refused
   (:class:`~saloon.arena.errors.SameCode`): the same code under two names would enter
   the ladder twice (Halite's one-entry rule; the first bot keeps the place, and a
   continuous ladder seats identical files once even if they got in before this check);
4. the qualification match: the bot in a seat its secret seed picks (so neither the
   seat nor the deal tells it that it is being qualified) against house bots (``greedy``, then
   ``random``, ...) with the default clocks, in the submission's sandbox (its image is built
   here, before the match). It passes when the match completes and the bot has no fault;
5. only then: the package, the bot and the version go into the store.

The same files submitted again are the same version: accepted without a new match.
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from saloon.arena.errors import SameCode
from saloon.arena.registry import Registry, check_bot_name
from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.referee.bots import resolve_seat
from saloon.referee.errors import RefereeError
from saloon.referee.limits import DEFAULT_LIMITS, DEFAULT_SANDBOX_LIMITS
from saloon.referee.match import Match
from saloon.referee.seats import Seat
from saloon.referee.seeds import derive_seed, secret_seed
from saloon.sdk.botref import HOUSE_PREFIX, BotRef
from saloon.sdk.errors import BotLoadError
from saloon.worker.errors import (
    BotNameTaken,
    PackageError,
    PackageFormatError,
    PackageTooLarge,
    RegistryError,
)
from saloon.worker.sandbox.base import Sandbox
from saloon.worker.sandbox.packages import MAX_PACKAGE_BYTES, BotPackage, load_package

log = logging.getLogger(__name__)

#: The largest upload taken (an archive of a package at the size limit, plus headroom).
MAX_UPLOAD_BYTES = MAX_PACKAGE_BYTES + 2 * 1024 * 1024
#: The house bots a qualification match seats beside the candidate, in this order.
QUALIFIERS = ("greedy", "random")
#: Bytes of the bot's stderr returned to the submitter.
MAX_STDERR_REPLY = 16 * 1024


@dataclass(frozen=True)
class Qualification:
    """The qualification match of a submitted version."""

    passed: bool
    match_id: str
    opponents: tuple[str, ...]
    #: The candidate's rank (1 = best); 0 when the match was aborted.
    rank: int
    #: "KIND at decision N: detail", the candidate's own faults.
    faults: tuple[str, ...]
    stderr: str
    seconds: float


@dataclass(frozen=True)
class Submission:
    """What a submission did."""

    accepted: bool
    bot: str
    version: str
    #: False when these exact files were accepted before (no new match was played).
    new_version: bool
    qualification: Qualification | None
    message: str


def sniff_suffix(data: bytes, filename: str) -> str:
    """The archive kind of an upload, by its first bytes (never by its name alone)."""
    if data[:2] == b"\x1f\x8b":
        return ".tar.gz"
    if data[:4] == b"PK\x03\x04":
        return ".zip"
    if len(data) > 262 and data[257:262] == b"ustar":
        return ".tar"
    if filename.lower().endswith(".py"):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise PackageFormatError(f"{filename[:80]!r} is not UTF-8 Python source") from None
        return ".py"
    raise PackageFormatError(
        "an upload is a .py file or a .tar.gz, .tar or .zip archive (by its content)"
    )


def read_upload(data: bytes, filename: str) -> BotPackage:
    """The validated package in an upload; a PackageError names what is wrong."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise PackageTooLarge(f"the upload is {len(data)} bytes; at most {MAX_UPLOAD_BYTES}")
    if not data:
        raise PackageFormatError("the upload is empty")
    suffix = sniff_suffix(data, filename)
    with tempfile.TemporaryDirectory(prefix="saloon-upload-") as tmp:
        # The file's own name only matters for a single .py bot (it is the entry file).
        base = Path(filename).name if suffix == ".py" else f"upload{suffix}"
        if suffix == ".py" and (
            not (base.isascii() and base.isprintable())
            or base.startswith(".")
            or "\\" in base
            or len(base) > 100
        ):
            base = "bot.py"
        path = Path(tmp) / base
        path.write_bytes(data)
        # Errors name the user's file, never this server's temporary path.
        return load_package(path, shown=_shown_name(filename, suffix))


def _shown_name(filename: str, suffix: str) -> str:
    """The upload's name for its error messages: the user's file name, printable and short."""
    name = Path(filename.replace("\\", "/")).name
    if not name or not name.isprintable() or len(name) > 100:
        return f"the upload ({suffix})"
    return name


def qualify_seat(seed: int, seats: int) -> int:
    """The seat a qualification match dealt from ``seed`` puts the candidate in."""
    return derive_seed(seed, "qualify-seat") % seats


def qualify(
    package: BotPackage, name: str, game_id: str, sandbox: Sandbox, seed: int
) -> Qualification:
    """Play the qualification match of ``package`` in ``sandbox``."""
    game = get_game(game_id)
    opponents = tuple(
        f"{HOUSE_PREFIX}{QUALIFIERS[i % len(QUALIFIERS)]}" for i in range(game.min_players - 1)
    )
    match_id = f"qualify-{name}-{package.version.partition(':')[2]}"
    me = qualify_seat(seed, game.min_players)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="saloon-qualify-") as tmp:
        package.write(Path(tmp))
        path = package.runtime_path(tmp)
        seats: list[Seat] = []
        try:
            seats += [resolve_seat(ref, game_id) for ref in opponents]
            candidate = sandbox.seat(
                path,
                str(BotRef.stored(name, package.version)),
                package.version,
                DEFAULT_SANDBOX_LIMITS,
            )
            seats.insert(me, candidate)
            match = Match(game, seats, seed, {}, DEFAULT_LIMITS, match_id=match_id)
        except (BotLoadError, PackageError, GameError, RefereeError) as exc:
            for seat in seats:
                seat.close()
            raise RegistryError(f"the bot cannot be seated: {exc}") from None
        record = match.run()
        stderr = seats[me].diagnostics()
    faults = tuple(
        f"{f.kind.value} at decision {f.decision}: {f.detail}"
        for f in record.faults
        if f.seat == me
    )
    rank = record.ranks[me] + 1 if record.ranks else 0  # the record's ranks are 0-based
    passed = record.outcome.value == "completed" and not faults and me not in record.played_out
    return Qualification(
        passed=passed,
        match_id=match_id,
        opponents=opponents,
        rank=rank,
        faults=faults,
        stderr=stderr[-MAX_STDERR_REPLY:],
        seconds=round(time.monotonic() - started, 3),
    )


def submit(
    registry: Registry,
    owner: str,
    name: str,
    game_id: str,
    data: bytes,
    filename: str,
    sandbox: Sandbox,
) -> Submission:
    """Validate, qualify and (when it passes) store a version of bot ``name`` for ``owner``.

    Raises a PackageError / RegistryError / BotNameTaken for a refused upload (nothing
    stored); a failed qualification is a Submission with ``accepted=False`` (nothing stored).
    """
    check_bot_name(name)
    try:
        get_game(game_id)
    except (GameError, RefereeError) as exc:
        raise RegistryError(str(exc)) from None
    package = read_upload(data, filename)
    bot = registry.store.bot(name)
    if bot is not None and bot.owner != owner:
        raise BotNameTaken(f"bot name {name!r} is taken by another user")
    played = registry.bot_game(name)
    if played is not None and played != game_id:
        raise RegistryError(f"bot {name!r} plays {played}; give a {game_id} bot its own name")
    if any(v.version == package.version for v in registry.store.versions(name)):
        return Submission(
            True, name, package.version, False, None, f"{name} {package.version}: accepted before"
        )
    twin = registry.twin(game_id, package.version, name)
    if twin is not None:  # the same code under two names would enter the ladder twice
        raise SameCode(
            f"{name}: these files are bot {twin}'s latest version ({package.version}); "
            "the same code enters a ladder once"
        )
    # A fresh secret seed, not one named by the files (the version): a bot cannot compute
    # its qualification deal, nor tell a qualification match from any other. Kept with
    # the version it accepts (and logged when refused) so the match can be played again.
    seed = secret_seed()
    result = qualify(package, name, game_id, sandbox, seed)
    if not result.passed:
        why = "; ".join(result.faults) or "the match did not complete"
        log.info(
            "%s %s: qualification failed (%s; match %s, seed %d)",
            name, package.version, why, result.match_id, seed,
        )  # fmt: skip
        return Submission(
            False,
            name,
            package.version,
            False,
            result,
            f"{name} {package.version}: refused, the qualification match faulted ({why})",
        )
    meta = {
        "qualification": {
            "match_id": result.match_id,
            "rank": result.rank,
            "seed": seed,
            "seat": qualify_seat(seed, get_game(game_id).min_players),
        },
        "submitted_by": owner,
    }
    row, new = registry.accept(owner, name, game_id, package, meta)
    log.info("%s %s: accepted (seq %d)", name, row.version, row.seq)
    return Submission(
        True,
        name,
        row.version,
        new,
        result,
        f"{name} {row.version}: accepted as version {row.seq} "
        f"(qualification rank {result.rank} of {len(result.opponents) + 1})",
    )
