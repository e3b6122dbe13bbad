"""A bot as one function: the first legal action."""

from typing import Any

from saloon.sdk import Decision


def act(decision: Decision[Any, Any]) -> Any:
    return decision.legal[0]
