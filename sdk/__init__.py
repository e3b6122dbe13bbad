"""The Saloon bot SDK: write a bot as a small class, get typed observations and actions.

Only light imports here: a bot image installs the SDK runtime (grpcio, protobuf) and nothing
heavier.
"""

from saloon.sdk.bot import Bot, Clock, Decision, FunctionBot, MatchInfo, MatchResult

__all__ = ["Bot", "Clock", "Decision", "FunctionBot", "MatchInfo", "MatchResult"]
