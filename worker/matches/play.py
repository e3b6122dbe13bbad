"""Playing one :class:`~saloon.worker.matches.spec.MatchSpec` on this worker: seats, match, record.

:func:`seat_for` is the one place a bot reference becomes a live seat: house bots through
the referee's ``resolve_seat`` (in-process), bot paths and stored versions
(``bot:NAME@VERSION``, unpacked from the store's package registry) in the match's sandbox
(``saloon.worker.sandbox.open_sandbox``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.referee.bots import resolve_seat
from saloon.referee.errors import PlatformStartTimeout, RefereeError
from saloon.referee.limits import SandboxLimits
from saloon.referee.match import Match
from saloon.referee.process.factory import watched_process
from saloon.referee.process.orphans import sweep_orphans
from saloon.referee.record import MatchRecord
from saloon.referee.seats import Seat
from saloon.sdk.botref import GRPC, HOUSE, STORED, parse_entry
from saloon.sdk.errors import BotLoadError
from saloon.worker.errors import BotRefError, PackageError, SandboxFailed
from saloon.worker.matches.spec import MatchSpec
from saloon.worker.metrics import (
    SANDBOX_SEAT_SECONDS,
    SANDBOX_SEATS,
    SANDBOX_START_SECONDS,
    SANDBOX_STARTS,
)
from saloon.worker.sandbox import SandboxKind, open_sandbox
from saloon.worker.sandbox.base import Sandbox

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PlayedMatch:
    """A played match: its record and what each seat's bot wrote to stderr (by seat)."""

    record: MatchRecord
    stderr: dict[int, str]


#: Turns a ``bot:NAME@VERSION`` reference into a local path to serve it from (the store's
#: package registry, saloon.worker.sandbox.stored.StoredBots.unpacked) and its version.
StoredResolver = Callable[[str], tuple[str, str]]


def seat_for(
    ref: str,
    game_id: str,
    sandbox: SandboxKind,
    limits: SandboxLimits,
    stored: StoredResolver | None = None,
    deal: int | None = None,
) -> Seat:
    """A live seat for bot reference ``ref``; BotRefError when this worker cannot run it.

    ``limits`` are the sandbox limits a bot path's process runs under; ``stored`` resolves
    stored bot versions (without it they are refused); ``deal`` (the match seed) is the
    match's deal: a bot runtime that has played it is never seated for it again
    (saloon.worker.sandbox.base.Sandbox.seat).
    """
    entry = parse_entry(ref)
    bot, version = entry.body, ""
    if entry.kind == STORED:
        if stored is None:
            raise BotRefError(f"seat {ref!r}: stored bot versions need the results store")
        bot, version = stored(ref)
    elif entry.kind == GRPC:
        raise BotRefError(f"seat {ref!r}: a season cannot seat a grpc target")
    if version or (entry.kind != HOUSE and Path(bot).exists()):
        # A bot path: the match's sandbox, under the season's limits.
        started = time.perf_counter()
        try:
            seat = sandbox_for(sandbox).seat(bot, ref, version, limits=limits, deal=deal)
        except (BotLoadError, PackageError) as exc:  # the bot's own files: not retried
            raise BotRefError(str(exc)) from None
        elapsed = time.perf_counter() - started
        SANDBOX_SEATS.labels(sandbox.value).inc()
        SANDBOX_SEAT_SECONDS.labels(sandbox.value).observe(elapsed)
        if sandbox is SandboxKind.PROCESS:  # every process seat is a bot process started
            SANDBOX_STARTS.labels(sandbox.value).inc()
            SANDBOX_START_SECONDS.labels(sandbox.value).observe(elapsed)
        return seat
    try:
        seat = resolve_seat(bot, game_id)
    except (GameError, RefereeError) as exc:
        raise BotRefError(str(exc)) from None
    seat.bot_id = ref  # the record names the season's entry, tag included
    return seat


_sandboxes: dict[SandboxKind, Sandbox] = {}
_sandboxes_lock = threading.Lock()


def sandbox_for(kind: SandboxKind) -> Sandbox:
    """This process's open sandbox of ``kind`` (opened on first use, then kept warm); a
    process sandbox's bot processes run under this process's parent-death watch, so a
    worker killed with -9 leaves none running (saloon.referee.process.watch)."""
    with _sandboxes_lock:
        box = _sandboxes.get(kind)
        if box is None:
            if kind is SandboxKind.PROCESS:
                box = open_sandbox(kind.value, process=watched_process)
            else:
                box = open_sandbox(kind.value)
            _sandboxes[kind] = box
        return box


def sweep_sandboxes() -> int:
    """Remove what dead processes of this host left: the bot processes of any (whether
    or not this process opened a process sandbox; nothing to do costs a look at /proc)
    and what this process's open sandboxes know of (see :meth:`Sandbox.sweep`: Docker
    containers); how many things were removed."""
    with _sandboxes_lock:
        boxes = [box for box in _sandboxes.values() if box.kind != SandboxKind.PROCESS.value]
    return sweep_orphans() + sum(box.sweep() for box in boxes)


def warm_runtimes() -> int:
    """Idle bot runtimes this process's sandboxes keep warm (Docker containers)."""
    with _sandboxes_lock:
        boxes = list(_sandboxes.values())
    return sum(box.idle_count() for box in boxes)


def close_sandboxes() -> None:
    """Close every sandbox this process opened (removes their containers and processes)."""
    with _sandboxes_lock:
        boxes = list(_sandboxes.values())
        _sandboxes.clear()
    for box in boxes:
        box.close()


def season_seed_label(spec: MatchSpec) -> str | None:
    """What names a season match in its bots' seeds: its place in the season (``#N``),
    not the season's id, so one season spec records the same matches whatever the season
    is called (a duplicate deal's rotations still differ: each has its own place)."""
    return f"#{spec.index}" if spec.season_id else None


def build_match(spec: MatchSpec, stored: StoredResolver | None = None) -> Match:
    """The live match of ``spec`` (seats acquired, nothing started yet)."""
    try:
        game = get_game(spec.game)
    except (GameError, RefereeError) as exc:
        raise BotRefError(str(exc)) from None
    seats: list[Seat] = []
    try:
        for ref in spec.seats:
            # The deal is the seed (a duplicate deal's rotations share it): no warm runtime
            # plays two matches of one seed, whatever the season, batch, job or retry.
            seats.append(
                seat_for(ref, spec.game, spec.sandbox, spec.sandbox_limits, stored, spec.seed)
            )
        return Match(
            game,
            seats,
            spec.seed,
            spec.options,
            spec.limits,
            match_id=spec.match_id,
            wall_ms=spec.wall_cap_ms(game.max_length),
            seed_label=season_seed_label(spec),
        )
    except BaseException:
        for seat in seats:
            seat.close()
        raise


def play_spec(spec: MatchSpec, stored: StoredResolver | None = None) -> PlayedMatch:
    """Play the match of ``spec`` to its end (or its abort) and return what to record."""
    match = build_match(spec, stored)
    try:
        record = match.run()
    except PlatformStartTimeout as exc:  # the machine's fault, not a bot's: retried
        raise SandboxFailed(f"{spec.match_id}: {exc}") from None
    stderr = {i: text for i, seat in enumerate(match.seats) if (text := seat.diagnostics())}
    # DEBUG: a job logs its outcome (a batch, its counts) at INFO; a line per match of a
    # few ms, formatted and flushed to stderr, cost ~1% of the match.
    log.debug("%s: played (%s)", spec.match_id, record.outcome.value)
    return PlayedMatch(record, stderr)
