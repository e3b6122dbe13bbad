"""The Saloon bot SDK: write a bot as a small class, get typed observations and actions.

Only light imports here: a bot image installs the SDK runtime (grpcio, protobuf) and nothing
heavier. ``ArenaClient`` (saloon.sdk.client, the arena API) is imported on first use.
"""

from typing import TYPE_CHECKING, Any

from saloon.sdk.bot import Bot, Clock, Decision, FunctionBot, MatchInfo, MatchResult

if TYPE_CHECKING:
    from saloon.sdk.client import ArenaClient

__all__ = ["ArenaClient", "Bot", "Clock", "Decision", "FunctionBot", "MatchInfo", "MatchResult"]


def __getattr__(name: str) -> Any:
    if name == "ArenaClient":
        from saloon.sdk.client import ArenaClient

        return ArenaClient
    raise AttributeError(f"module 'saloon.sdk' has no attribute {name!r}")
