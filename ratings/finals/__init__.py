"""A tournament's finals and its final result (docs/finals.md).

* :func:`final_ranking`: the ranking from the whole history at once (a Thurstone MAP with
  ties), each adjacent pair's probability of being in the right order;
* :func:`plan_batch`: the finals' next batch of tables, chosen from the results so far
  where the order is unsure, or :class:`Stop` (confident, or the budget spent); a pure
  function of its arguments;
* :func:`build_report`: standings, a crosstable with intervals bootstrapped over deals,
  the finals' match count; JSON and CSV.

Bad input raises :class:`FinalsInputError`, a ``ValueError``.
"""

from __future__ import annotations

from saloon.ratings.finals.crosstable import Cell
from saloon.ratings.finals.fit import Ranking, final_ranking
from saloon.ratings.finals.policy import FinalsPolicy
from saloon.ratings.finals.records import FinalsInputError, Placing
from saloon.ratings.finals.report import Report, Standing, build_report
from saloon.ratings.finals.schedule import Batch, Stop, Table, contention, plan_batch, settled

__all__ = [
    "Batch",
    "Cell",
    "FinalsInputError",
    "FinalsPolicy",
    "Placing",
    "Ranking",
    "Report",
    "Standing",
    "Stop",
    "Table",
    "build_report",
    "contention",
    "final_ranking",
    "plan_batch",
    "settled",
]
