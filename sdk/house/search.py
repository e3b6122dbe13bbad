"""``house:search`` and its graded variants ``house:search-N``: information-set search
(:mod:`saloon.sdk.search`) with N iterations per decision, for every game that builds a
state from an observation. Larger N plays stronger (tests/unit/test_search_strength.py)."""

from __future__ import annotations

from saloon.sdk.search import DEFAULT_TIME_MS, SearchBot, SearchBudget

#: The graded variants: ``house:search-N`` for each N here (``house:search`` is the default).
GRADES = (25, 50, 100, 200, 400, 800)


class Search(SearchBot):
    """The default budget (saloon.sdk.search.DEFAULT_ITERATIONS, time-capped)."""


class Search25(SearchBot):
    """25 iterations per decision."""

    BUDGET = SearchBudget(25, DEFAULT_TIME_MS)


class Search50(SearchBot):
    """50 iterations per decision."""

    BUDGET = SearchBudget(50, DEFAULT_TIME_MS)


class Search100(SearchBot):
    """100 iterations per decision."""

    BUDGET = SearchBudget(100, DEFAULT_TIME_MS)


class Search200(SearchBot):
    """200 iterations per decision."""

    BUDGET = SearchBudget(200, DEFAULT_TIME_MS)


class Search400(SearchBot):
    """400 iterations per decision (time-capped like every grade)."""

    BUDGET = SearchBudget(400, DEFAULT_TIME_MS)


class Search800(SearchBot):
    """800 iterations per decision (time-capped like every grade)."""

    BUDGET = SearchBudget(800, DEFAULT_TIME_MS)

