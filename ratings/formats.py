"""How a leaderboard is written: the one list of output formats (light to import: the
command line offers them before anything heavy is loaded)."""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """How a leaderboard is written (``saloon leaderboard --format``)."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    HTML = "html"
