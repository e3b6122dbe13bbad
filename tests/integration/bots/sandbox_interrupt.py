"""Raises KeyboardInterrupt in on_match_start."""

from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo


class Interrupt(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        raise KeyboardInterrupt

    def act(self, decision: Decision[Any, Any]) -> Any:
        return decision.legal[0]
