"""Season reports for lower layers: the leaderboard a finished season prints.

``saloon demo`` (and any season runner in ``saloon.worker``) may not import this layer.
It finds reports through the entry-point group ``saloon.season_reports`` instead, each
entry a ``report(store, season_id, out)`` function, and calls them after a season::

    from importlib.metadata import entry_points
    for entry in sorted(entry_points(group="saloon.season_reports"), key=lambda e: e.name):
        entry.load()(store, season_id, out)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from saloon.ratings.boards import season_leaderboard
from saloon.ratings.leaderboard import render_table

if TYPE_CHECKING:
    from saloon.worker.store import Store

#: The entry-point group season runners call after a season (see the module docstring).
REPORT_GROUP = "saloon.season_reports"


def season_report(store: Store, season_id: str, out: TextIO) -> None:
    """Print the TrueSkill leaderboard of season ``season_id`` as a table."""
    render_table(season_leaderboard(store, season_id), out)
