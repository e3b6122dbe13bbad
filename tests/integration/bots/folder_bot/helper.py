"""A helper module of folder_bot."""

from collections.abc import Sequence
from typing import Any


def pick(legal: Sequence[Any]) -> Any:
    return legal[-1]
