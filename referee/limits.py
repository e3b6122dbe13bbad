"""Clock and fault limits of a match: every default in this one place.

A season may override any of them (``MatchLimits(**overrides)``); the match record keeps the
limits it was played under.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

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
        """The limits as a JSON object."""
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MatchLimits:
        """Limits from their JSON form (unknown keys are an error)."""
        return cls(**{k: int(v) for k, v in raw.items()})


DEFAULT_LIMITS = MatchLimits()
