"""Answers something that is never a legal action."""

from typing import Any

from saloon.sdk import Bot, Decision


class Illegal(Bot):
    def act(self, decision: Decision[Any, Any]) -> Any:
        return "not an action"
