"""Clock and fault limits of a match: every default in this one place.

A season may override any of them (``MatchLimits(**overrides)``); the match record keeps the
limits it was played under.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: Time a bot has for one decision before its time bank is drawn on.
DEFAULT_DECISION_MS = 1_000
#: Extra time a bot may spend over all its decisions of one match.
DEFAULT_BANK_MS = 10_000
#: Faults (timeouts, invalid answers) before a seat is played out by house:random.
DEFAULT_STRIKE_LIMIT = 3
#: Time a bot has to connect and answer the match start.
DEFAULT_START_MS = 10_000


@dataclass(frozen=True)
class MatchLimits:
    """The clocks and the strike limit one match is played with."""

    decision_ms: int = DEFAULT_DECISION_MS
    bank_ms: int = DEFAULT_BANK_MS
    strike_limit: int = DEFAULT_STRIKE_LIMIT
    start_ms: int = DEFAULT_START_MS

    def to_json(self) -> dict[str, Any]:
        """The limits as a JSON object (every record and queued spec carries one: spelled
        out, as ``dataclasses.asdict`` would give it at several times the cost)."""
        return {
            "decision_ms": self.decision_ms,
            "bank_ms": self.bank_ms,
            "strike_limit": self.strike_limit,
            "start_ms": self.start_ms,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MatchLimits:
        """Limits from their JSON form (unknown keys are an error)."""
        try:
            return _match_limits(tuple(raw.items()))
        except TypeError:  # a value that cannot be a cache key: parsed (and refused) anew
            return _match_limits.__wrapped__(tuple(raw.items()))


DEFAULT_LIMITS = MatchLimits()


# -- the platform's part of a seat's start ---------------------------------------------------
#: The platform's part of a seat's start (the runtime's process or container up, Python and
#: the SDK imported, until the runtime says it is about to load the bot; and the referee's
#: own gRPC connection to a runtime that answers the HTTP/2 handshake) is bounded by this,
#: never by the bot's start time: an overrun is PlatformStartTimeout (the match retried),
#: never a fault of the bot's. ``$SALOON_PLATFORM_START_S`` sets it (a slower machine or
#: runtime; a test that wants an overrun): read each time a seat starts, not at import.
DEFAULT_PLATFORM_START_S = 60.0
PLATFORM_START_ENV = "SALOON_PLATFORM_START_S"


def platform_start_s() -> float:
    """The platform's start bound now: ``$SALOON_PLATFORM_START_S`` (seconds > 0), else
    :data:`DEFAULT_PLATFORM_START_S` (with one warning per bad value when it is set to
    something else)."""
    return _platform_start_s(os.environ.get(PLATFORM_START_ENV, "").strip())


@functools.lru_cache(maxsize=8)
def _platform_start_s(raw: str) -> float:
    if not raw:
        return DEFAULT_PLATFORM_START_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if 0 < value < math.inf:
        return value
    log.warning(
        "$%s=%r is not a number of seconds > 0: %.0f s",
        PLATFORM_START_ENV,
        raw,
        DEFAULT_PLATFORM_START_S,
    )
    return DEFAULT_PLATFORM_START_S


# -- the whole-match wall-clock cap ---------------------------------------------------------
#: Decisions counted into the wall-clock cap: a bound on how many full per-decision deadlines
#: a match may spend (a 4-player Seas of Strife match asks ~240 decisions, Seizure ~100-400).
WALL_CAP_DECISIONS = 600
#: The cap never goes below this, however short the clocks (start-up, engine, scheduling).
WALL_CAP_FLOOR_MS = 10_000
#: ... nor above this: a match that runs an hour is stuck, not slow.
WALL_CAP_CEILING_MS = 3_600_000


def wall_cap_ms(limits: MatchLimits, num_seats: int, max_length: int) -> int:
    """The wall-clock cap of a whole match, derived from its clocks (docs/match-record.md).

    ``seats x (start_ms + bank_ms) + min(max_length, WALL_CAP_DECISIONS) x decision_ms``,
    clamped to ``[WALL_CAP_FLOOR_MS, WALL_CAP_CEILING_MS]``: every seat may use its whole
    start-up time and its whole bank, and the match may spend a full deadline on each of
    its (bounded) decisions. Slow-but-legal bots finish under it; a stuck match does not.
    """
    decisions = min(max_length, WALL_CAP_DECISIONS)
    raw = num_seats * (limits.start_ms + limits.bank_ms) + decisions * limits.decision_ms
    return max(WALL_CAP_FLOOR_MS, min(WALL_CAP_CEILING_MS, raw))


# -- sandbox limits: what a bot runtime may use (Docker container or local process) ------
#: Memory a bot runtime may use, swap included (the container's memory = memory-swap;
#: RLIMIT_AS headroom for a process, see the process sandbox).
DEFAULT_MEMORY_MB = 256
#: CPU a bot runtime may use, in cores (Docker --cpus; a process gets RLIMIT_CPU instead).
DEFAULT_CPUS = 1.0
#: Processes and threads a bot runtime may have at once (Docker --pids-limit, RLIMIT_NPROC).
DEFAULT_PIDS = 64
#: Size of the writable scratch space (/tmp tmpfs in a container; RLIMIT_FSIZE per file).
DEFAULT_TMPFS_MB = 16
#: Open files a bot runtime may hold (RLIMIT_NOFILE / the container's nofile ulimit).
DEFAULT_OPEN_FILES = 256
#: CPU seconds a bot process may burn in one match before the kernel stops it (RLIMIT_CPU).
DEFAULT_CPU_SECONDS = 600


@dataclass(frozen=True)
class SandboxLimits:
    """What one bot runtime may use; a season overrides them and the record keeps them."""

    memory_mb: int = DEFAULT_MEMORY_MB
    cpus: float = DEFAULT_CPUS
    pids: int = DEFAULT_PIDS
    tmpfs_mb: int = DEFAULT_TMPFS_MB
    open_files: int = DEFAULT_OPEN_FILES
    cpu_seconds: int = DEFAULT_CPU_SECONDS

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SandboxLimits:
        """Limits from their JSON form (unknown keys are an error)."""
        try:
            return _sandbox_limits(tuple(raw.items()))
        except TypeError:  # a value that cannot be a cache key: parsed (and refused) anew
            return _sandbox_limits.__wrapped__(tuple(raw.items()))

    def to_json(self) -> dict[str, Any]:
        """The limits as a JSON object (spelled out: ``dataclasses.asdict`` costs ~5x)."""
        return {
            "memory_mb": self.memory_mb,
            "cpus": self.cpus,
            "pids": self.pids,
            "tmpfs_mb": self.tmpfs_mb,
            "open_files": self.open_files,
            "cpu_seconds": self.cpu_seconds,
        }


DEFAULT_SANDBOX_LIMITS = SandboxLimits()


# Limits are frozen values, and every match of a season carries the same ones: a spec read
# back from the queue or the store reuses the one parsed before (MatchSpec.from_json).
@functools.lru_cache(maxsize=64)
def _match_limits(items: tuple[tuple[str, Any], ...]) -> MatchLimits:
    return MatchLimits(**{k: int(v) for k, v in items})


@functools.lru_cache(maxsize=64)
def _sandbox_limits(items: tuple[tuple[str, Any], ...]) -> SandboxLimits:
    values: dict[str, Any] = {k: float(v) if k == "cpus" else int(v) for k, v in items}
    return SandboxLimits(**values)


@dataclass(frozen=True)
class SandboxInfo:
    """Where a seat's bot ran: the sandbox kind, the container runtime, and its limits."""

    #: ``docker`` or ``process``.
    kind: str
    limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS
    #: The container runtime (``runc``, ``runsc`` for gVisor); "" for a process.
    runtime: str = ""

    def to_json(self) -> dict[str, Any]:
        """The sandbox as a JSON object."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.runtime:
            out["runtime"] = self.runtime
        out["limits"] = self.limits.to_json()
        return out

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> SandboxInfo:
        """A sandbox from its JSON form."""
        return cls(
            kind=str(raw["kind"]),
            limits=SandboxLimits.from_json(dict(raw.get("limits", {}))),
            runtime=str(raw.get("runtime", "")),
        )
