"""A match as data: everything a worker needs to play one scheduled match (JSON-able).

A :class:`MatchSpec` travels through the queue and into the store's schedule; the worker
builds the live :class:`~saloon.referee.match.Match` from it (saloon.worker.matches.play).

Seats are season entries (:func:`saloon.sdk.botref.parse_entry`):

* ``house:NAME``: a house bot, in the worker's process;
* ``bot:NAME@VERSION``: a stored bot version (the arena's bots, by their content hash);
* a path to a bot file or folder (local seasons; the path must exist on the worker);

each optionally followed by ``#TAG``: another entry of the same bot in one season (self-play
baselines, ``house:greedy#2``); the record names the entry, tag included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from saloon.referee.limits import (
    DEFAULT_LIMITS,
    DEFAULT_SANDBOX_LIMITS,
    MatchLimits,
    SandboxLimits,
    wall_cap_ms,
)
from saloon.worker.errors import SeasonSpecError
from saloon.worker.sandbox import SandboxKind

#: Season ids: short, safe as an RQ job id, a file name and a URL; never ``local-...``.
SEASON_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,47}\Z")
#: Seconds a match's queue job may run past the match's own wall-clock cap (start-up of a
#: sandbox, recording the result) before RQ kills it: the referee's cap fires first.
JOB_TIMEOUT_MARGIN_S = 60


def check_season_id(season_id: str) -> str:
    """The id unchanged if it can name a season; SeasonSpecError otherwise."""
    if not SEASON_ID_RE.match(season_id) or season_id.startswith("local"):
        raise SeasonSpecError(
            f"season id {season_id!r}: use 1-48 lower-case letters, digits, '_' and '-' "
            "(not starting with 'local', which names matches played outside a season)"
        )
    return season_id


def in_season(match_id: str, season_id: str) -> bool:
    """True when ``match_id`` is one of season ``season_id``'s (not of ``<season_id>-x``)."""
    head, sep, index = match_id.rpartition("-")
    return bool(sep) and head == season_id and index.isdigit()


def match_id(season_id: str, index: int) -> str:
    """The id of match ``index`` (0-based, schedule order) of a season: ``<season>-<index>``."""
    return f"{season_id}-{index}"


@dataclass(frozen=True)
class MatchSpec:
    """One scheduled match: game, seats (bot references, in seat order), seed, limits."""

    match_id: str
    game: str
    seats: tuple[str, ...]
    seed: int
    options: dict[str, str | int] = field(default_factory=dict)
    limits: MatchLimits = DEFAULT_LIMITS
    sandbox_limits: SandboxLimits = DEFAULT_SANDBOX_LIMITS
    sandbox: SandboxKind = SandboxKind.PROCESS
    #: The season it belongs to and its place in the schedule ("" / 0 outside a season).
    season_id: str = ""
    index: int = 0
    #: Duplicate deals: matches with the same ``deal`` replay one deal with rotated seats;
    #: results are compared deal by deal. None when the schedule has no duplicate deals.
    deal: int | None = None
    #: The whole-match wall-clock cap in ms; 0: derived from the clocks (wall_cap_ms).
    wall_ms: int = 0

    def wall_cap_ms(self, max_length: int) -> int:
        """The match's wall-clock cap (``wall_ms`` or the one derived from its clocks)."""
        return self.wall_ms or wall_cap_ms(self.limits, len(self.seats), max_length)

    def job_timeout_s(self, max_length: int) -> int:
        """Seconds RQ lets the match's job run: its wall-clock cap plus a margin."""
        return -(-self.wall_cap_ms(max_length) // 1000) + JOB_TIMEOUT_MARGIN_S

    def to_json(self) -> dict[str, Any]:
        """The spec as a JSON object (the queue's and the store's form)."""
        return {
            "match_id": self.match_id,
            "game": self.game,
            "seats": list(self.seats),
            "seed": self.seed,
            "options": dict(self.options),
            "limits": self.limits.to_json(),
            "sandbox_limits": self.sandbox_limits.to_json(),
            "sandbox": self.sandbox.value,
            "season_id": self.season_id,
            "index": self.index,
            "deal": self.deal,
            "wall_ms": self.wall_ms,
        }

    @classmethod
    def from_json(cls, raw: Any) -> MatchSpec:
        """A spec from its JSON form; SeasonSpecError names what is wrong."""
        if not isinstance(raw, dict):
            raise SeasonSpecError("a match spec is a JSON object")
        try:
            deal = raw.get("deal")
            return cls(
                match_id=str(raw["match_id"]),
                game=str(raw["game"]),
                seats=tuple(str(s) for s in raw["seats"]),
                seed=int(raw["seed"]),
                options=dict(raw.get("options", {})),
                limits=MatchLimits.from_json(dict(raw.get("limits", {}))),
                sandbox_limits=SandboxLimits.from_json(dict(raw.get("sandbox_limits", {}))),
                sandbox=SandboxKind(raw.get("sandbox", SandboxKind.PROCESS.value)),
                season_id=str(raw.get("season_id", "")),
                index=int(raw.get("index", 0)),
                deal=None if deal is None else int(deal),
                wall_ms=int(raw.get("wall_ms", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SeasonSpecError(f"malformed match spec: {type(exc).__name__}: {exc}") from None
