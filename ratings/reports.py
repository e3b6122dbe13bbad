"""Season reports: the leaderboard a finished season prints.

``saloon demo`` (a season runner in ``saloon.worker``) may not import this layer: the
``saloon`` command (:mod:`saloon.arena.cli`) hands it :func:`season_report` instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from saloon.ratings.boards import season_leaderboard
from saloon.ratings.leaderboard import render_table

if TYPE_CHECKING:
    from saloon.worker.store.store import Store


def season_report(store: Store, season_id: str, out: TextIO) -> None:
    """Print the TrueSkill leaderboard of season ``season_id`` as a table."""
    render_table(season_leaderboard(store, season_id), out)
