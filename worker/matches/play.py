"""Playing one :class:`~saloon.worker.matches.spec.MatchSpec` on this worker: seats, match, record.

:func:`seat_for` is the one place a bot reference becomes a live seat: house bots through
the referee's ``resolve_seat`` (in-process), bot paths and stored versions
(``bot:NAME@VERSION``, unpacked from the store's package registry) in the match's sandbox
(``saloon.worker.sandbox.open_sandbox``).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from saloon.games import get_game
from saloon.games.errors import GameError
from saloon.referee.botprocess import BotProcess
from saloon.referee.bots import resolve_seat
from saloon.referee.errors import PlatformStartTimeout, RefereeError
from saloon.referee.limits import SandboxLimits
from saloon.referee.match import Match
from saloon.referee.record import MatchRecord
from saloon.referee.remote import ProcessSeat
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
from saloon.worker.sandbox.base import Sandbox, sweep_orphans

log = logging.getLogger(__name__)

#: Runs in a bot process (Linux): ask the kernel to SIGKILL it when its parent dies
#: (PR_SET_PDEATHSIG; a worker killed with -9 cannot clean up), THEN check that what it
#: hangs on still lives, so that a death before the prctl is never missed: the pidfds
#: given (readable once their process has exited) and, when a pid is given, that it is
#: still the parent. Exits if not; else execs the rest of its command line, with a pidfd
#: of its own in place of ``{pidfd}`` when the rest names it (left open for a later
#: watch); without it, the pidfds are closed first (the runtime never holds them). This
#: same interpreter is exec'd as /proc/self/exe: after setpriv, the bot's uid may not walk
#: its path (a Python under /root), which setpriv could with the capabilities it keeps
#: until its own exec.
#: argv: PARENT_PID (0: none) PIDFD... -- COMMAND...
_PARENT_WATCH = (
    "import ctypes,os,select,sys\n"
    "i = sys.argv.index('--')\n"
    "pid, fds, argv = int(sys.argv[1]), [int(a) for a in sys.argv[2:i]], sys.argv[i + 1 :]\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)\n"
    "poll = select.poll()\n"
    "for fd in fds:\n"
    "    poll.register(fd, select.POLLIN)\n"
    "if poll.poll(0) or (pid and os.getppid() != pid):\n"
    "    os._exit(1)\n"
    "if '{pidfd}' in argv:\n"
    "    own = os.pidfd_open(os.getpid())\n"
    "    os.set_inheritable(own, True)\n"
    "    argv = [str(own) if a == '{pidfd}' else a for a in argv]\n"
    "else:\n"
    "    for fd in fds:\n"
    "        os.close(fd)\n"
    "if argv[0] == sys.executable:\n"
    "    os.execv('/proc/self/exe', argv)\n"
    "os.execvp(argv[0], argv)\n"
)
_pidfd: tuple[int, int] | None = None
_pidfd_lock = threading.Lock()


def worker_pidfd() -> int | None:
    """A pidfd of this process (Linux 5.3+; opened once, kept open), or None."""
    global _pidfd
    with _pidfd_lock:
        if _pidfd is None or _pidfd[0] != os.getpid():
            try:
                _pidfd = (os.getpid(), os.pidfd_open(os.getpid()))
            except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
                return None
        return _pidfd[1]


class WatchedBotProcess(BotProcess):
    """A bot runtime process that also dies when its worker dies (Linux).

    The whole command line runs under a parent-death watch (``_PARENT_WATCH``) tied to the
    worker; the sandbox's tools pass the signal on (unshare's --kill-child, setpriv's
    --pdeathsig), but each sets it again only after a fork or a change of uid has cleared
    it, and never checks the parent is still there (and under process-group containment
    as root, setpriv's change of uid cleared it for good): a worker that died in between
    left its runtime running. So the watch runs again right before the runtime, after the
    last fork or change of uid, and checks the worker and the first watch's process
    (unshare's parent, which the runtime's signal is tied to) by their pidfds, which work
    across the runtime's PID namespace, where the parent's pid is not visible.
    """

    def argv(self) -> list[str]:
        """The sandbox's command line, started under the parent-death watch."""
        inner = super().argv()
        if not sys.platform.startswith("linux"):
            return inner
        fd = worker_pidfd()
        fds = [] if fd is None else [str(fd)]
        return [*self._watch(), str(os.getpid()), *fds, "--", *inner]

    def after_setup(self, runtime: list[str]) -> list[str]:
        """The runtime, under the watch again: after the last fork or change of uid."""
        fd = worker_pidfd()
        if not sys.platform.startswith("linux") or fd is None:
            return runtime
        return [*self._watch(), "0", str(fd), "{pidfd}", "--", *runtime]

    def inherited_fds(self) -> tuple[int, ...]:
        """The worker's pidfd, for the watches to check."""
        fd = worker_pidfd() if sys.platform.startswith("linux") else None
        return () if fd is None else (fd,)

    @staticmethod
    def _watch() -> list[str]:
        return [sys.executable, "-S", "-c", _PARENT_WATCH]


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
        if isinstance(seat, ProcessSeat):
            # Its whole command line under the worker's parent-death watch.
            seat.process.__class__ = WatchedBotProcess
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
    """This process's open sandbox of ``kind`` (opened on first use, then kept warm)."""
    with _sandboxes_lock:
        box = _sandboxes.get(kind)
        if box is None:
            box = _sandboxes[kind] = open_sandbox(kind.value)
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
