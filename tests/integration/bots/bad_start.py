"""Its match start hook raises: the bot cannot play at all."""

from saloon.sdk import Bot, MatchInfo


class BadStart(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        raise RuntimeError("cannot set up")
