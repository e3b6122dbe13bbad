"""Head-to-head results with 95% intervals, bootstrapped over deals (as the Annual
Computer Poker Competition publishes its crosstables): a resample draws the deals with
replacement, every game of a drawn deal comes with it (duplicates stay together)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from saloon.ratings.finals.records import Comparisons
from saloon.referee.seeds import derive_seed

#: Resamples per crosstable unless the report asks otherwise.
RESAMPLES = 1000
#: The interval's coverage.
COVERAGE = 0.95
#: Resamples drawn at a time (bounds the memory of one draw).
_CHUNK = 50


@dataclass(frozen=True)
class Cell:
    """``entrant`` against ``opponent`` over the ``games`` where both sat: ``score`` =
    (games ahead + half the ties) / games, and its bootstrap interval [low, high]."""

    entrant: str
    opponent: str
    games: int
    score: float
    low: float
    high: float


def crosstable(
    entrants: tuple[str, ...],
    order: tuple[str, ...],
    comp: Comparisons,
    seed: int,
    resamples: int = RESAMPLES,
) -> tuple[Cell, ...]:
    """One cell per pair that met, the entrant placed higher first, in standings order."""
    n = len(entrants)
    if comp.first.size == 0:
        return ()
    place = np.empty(n, dtype=np.int64)
    place[[entrants.index(e) for e in order]] = np.arange(n)
    # orient every comparison: "upper" is the entrant placed higher in the standings
    upper_first = place[comp.first] < place[comp.second]
    upper = np.where(upper_first, comp.first, comp.second)
    lower = np.where(upper_first, comp.second, comp.first)
    won = np.where(comp.tie, 0.5, upper_first.astype(float))
    pair_key = place[upper] * n + place[lower]
    pairs, pair_of = np.unique(pair_key, return_inverse=True)
    # collapse to (deal, pair): the bootstrap's unit is the deal
    cell_key = comp.deal * pairs.size + pair_of
    cells, cell_of = np.unique(cell_key, return_inverse=True)
    cell_won = np.bincount(cell_of, won, cells.size)
    cell_games = np.bincount(cell_of, minlength=cells.size).astype(float)
    cell_deal = cells // pairs.size
    cell_pair = cells % pairs.size
    games = np.bincount(cell_pair, cell_games, pairs.size)
    score = np.bincount(cell_pair, cell_won, pairs.size) / games
    deals = len(comp.deals)
    rng = np.random.default_rng(derive_seed(seed, "finals:crosstable"))
    boot = np.empty((resamples, pairs.size), dtype=np.float32)
    uniform = np.full(deals, 1 / deals)
    for start in range(0, resamples, _CHUNK):
        counts = rng.multinomial(deals, uniform, size=min(_CHUNK, resamples - start))
        for r, weight in enumerate(counts):
            w = weight[cell_deal].astype(float)
            g = np.bincount(cell_pair, w * cell_games, pairs.size)
            s = np.bincount(cell_pair, w * cell_won, pairs.size)
            with np.errstate(invalid="ignore", divide="ignore"):
                boot[start + r] = s / g  # nan where a resample drew none of a pair's deals
    low, high = _interval(boot, score)
    out = []
    for p in range(pairs.size):
        a, b = divmod(int(pairs[p]), n)
        out.append(
            Cell(order[a], order[b], int(games[p]), float(score[p]), float(low[p]), float(high[p]))
        )
    return tuple(out)


def _interval(boot: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's central COVERAGE interval (linear interpolation, as numpy's default
    percentile), ignoring the resamples that drew none of the pair's deals."""
    boot.sort(axis=0)  # nan sorts last
    valid = np.sum(~np.isnan(boot), axis=0)
    columns = np.arange(boot.shape[1])
    tail = (1 - COVERAGE) / 2
    out = []
    for q in (tail, 1 - tail):
        pos = q * np.maximum(valid - 1, 0)
        below = np.floor(pos).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(valid - 1, 0))
        frac = pos - below
        value = boot[below, columns] * (1 - frac) + boot[above, columns] * frac
        out.append(np.where(valid > 0, value, score))
    return out[0], out[1]
