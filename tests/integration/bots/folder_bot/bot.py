"""A bot folder: bot.py imports its own helper module."""

from typing import Any

from helper import pick  # a module next to bot.py

from saloon.sdk import Bot, Decision


class FolderBot(Bot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        return pick(decision.legal)
