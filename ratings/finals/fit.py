"""The final ranking from the whole history at once: a Thurstone model's MAP.

Every seat pair of every game is one comparison: the seat placed ahead performed better,
each performance its skill plus N(0, beta^2) noise, so P(a ahead of b) = Phi((s_a - s_b) /
(sqrt 2 beta)); a tie counts half a comparison each way. Skills have the prior N(mu0,
sigma0^2) of the ladders (25, 25/3; beta 25/6). The MAP is found by Newton's method on the
pairs' totals (exact, whatever the number of games: the log posterior depends on the games
only through how often each pair finished each way round).

The uncertainty is the sandwich (robust) covariance H^-1 (J + P) H^-1 around the MAP, J
summing each *deal's* score outer product: the pairs of one 4-seat game are not
independent comparisons, and the games of one duplicate deal share its luck, so the plain
Laplace covariance H^-1 would be too sure. From it, for each adjacent pair of the order,
the probability that the order is right. docs/finals.md has the measured calibration.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from saloon.ratings.finals.records import (
    Comparisons,
    Placing,
    check_entrants,
    check_results,
    comparisons,
)
from saloon.ratings.params import DEFAULT_BETA, DEFAULT_MU, DEFAULT_SIGMA

#: Performance noise of one seat in one game (the ladders' beta).
BETA = DEFAULT_BETA
#: The prior of every skill: the ladders' new-bot prior.
PRIOR_MU = DEFAULT_MU
PRIOR_SIGMA = DEFAULT_SIGMA
#: The prior's spread is refitted to the field at most this many times ...
PRIOR_ROUNDS = 20
#: ... until its variance changes by less than this share.
PRIOR_CHANGE = 0.01
#: Newton's method stops when no skill moves by more than this ...
TOLERANCE = 1e-7
#: ... or after this many steps (it takes ~5-10 from zero).
MAX_STEPS = 100

_SCALE = math.sqrt(2) * BETA
_SQRT2 = math.sqrt(2)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class Ranking:
    """A final order and how sure it is.

    ``order``: entrant ids, best first (equal skills: by id). ``skill``: each entrant's
    (mu, sigma) on the ladders' scale. ``p_next[i]``: the probability that ``order[i]``
    is truly better than ``order[i + 1]`` (one fewer than the entrants). ``games``: games
    played by each entrant in the results.
    """

    order: tuple[str, ...]
    skill: dict[str, tuple[float, float]]
    p_next: tuple[float, ...]
    games: dict[str, int]
    #: The skills' covariance (entrant index order of ``entrants``), for :meth:`p_above`.
    covariance: np.ndarray = field(repr=False, compare=False)
    entrants: tuple[str, ...] = field(repr=False, default=())

    def p_above(self, a: str, b: str) -> float:
        """The probability that entrant ``a`` is truly better than entrant ``b``."""
        i, j = self.entrants.index(a), self.entrants.index(b)
        return _p_above(self.skill[a][0] - self.skill[b][0], self.covariance, i, j)


def final_ranking(entrants: Sequence[str], results: Sequence[Placing]) -> Ranking:
    """The whole-history ranking of ``entrants`` from ``results`` (any order)."""
    field_ = check_entrants(entrants)
    ordered = check_results(field_, results)
    return rank(field_, comparisons(field_, ordered))


def rank(entrants: tuple[str, ...], comp: Comparisons) -> Ranking:
    """The ranking from checked comparisons (what :func:`final_ranking` and the report
    share)."""
    n = len(entrants)
    s, hessian, prior = _fit(n, comp)
    cov = _sandwich(n, comp, s, hessian, prior)
    mu = PRIOR_MU + s
    order_idx = sorted(range(n), key=lambda i: (-float(mu[i]), entrants[i]))
    sd = np.sqrt(np.maximum(np.diag(cov), 0.0))
    skill = {entrants[i]: (float(mu[i]), float(sd[i])) for i in range(n)}
    p_next = tuple(
        _p_above(float(mu[a] - mu[b]), cov, a, b) for a, b in itertools.pairwise(order_idx)
    )
    games = _games_per_entrant(n, comp)
    return Ranking(
        tuple(entrants[i] for i in order_idx),
        skill,
        p_next,
        {entrants[i]: int(games[i]) for i in range(n)},
        cov,
        entrants,
    )


def _games_per_entrant(n: int, comp: Comparisons) -> np.ndarray:
    keys = np.unique(np.concatenate([comp.game * n + comp.first, comp.game * n + comp.second]))
    return np.bincount(keys % n, minlength=n)


def _p_above(diff: float, cov: np.ndarray, i: int, j: int) -> float:
    var = float(cov[i, i] + cov[j, j] - 2 * cov[i, j])
    if var <= 0:
        return 0.5 if diff == 0 else float(diff > 0)
    return 0.5 * math.erfc(-diff / math.sqrt(2 * var))


def _log_erfc(x: np.ndarray) -> np.ndarray:
    """log erfc(x) for x >= 0 (Numerical Recipes' erfcc: relative error < 1.2e-7), computed
    in the log so it never underflows."""
    t: np.ndarray = 1 / (1 + 0.5 * x)
    poly: np.ndarray = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277))))))))  # fmt: skip
    out: np.ndarray = np.log(t) - x * x + poly
    return out


def _log_phi_and_ratio(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log Phi(d) and phi(d) / Phi(d), vectorised and stable for very negative d."""
    x = -d / _SQRT2
    log_cdf = np.where(
        x >= 0,
        _log_erfc(np.abs(x)) - math.log(2),
        np.log1p(-0.5 * np.exp(_log_erfc(np.abs(x)))),
    )
    ratio = np.exp(-0.5 * d * d - _LOG_SQRT_2PI - log_cdf)
    return log_cdf, ratio


def _pair_totals(
    n: int, comp: Comparisons
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, wins of i, wins of j) for each pair i < j that met; a tie is half each."""
    lo = np.minimum(comp.first, comp.second)
    hi = np.maximum(comp.first, comp.second)
    key = lo * n + hi
    keys, inverse = np.unique(key, return_inverse=True)
    win_lo = np.where(comp.tie, 0.5, (comp.first == lo).astype(float))
    w_i = np.bincount(inverse, weights=win_lo, minlength=keys.size)
    w_j = np.bincount(inverse, weights=1 - win_lo, minlength=keys.size)
    return keys // n, keys % n, w_i, w_j


def _fit(n: int, comp: Comparisons) -> tuple[np.ndarray, np.ndarray, float]:
    """The MAP skills, the Hessian there and the prior's precision, the prior's spread
    fitted to the field (empirical Bayes, by EM): never narrower than the ladders' prior,
    wider when the field is (a fixed prior would pull far-apart skills together and
    understate how sure their order is)."""
    totals = _pair_totals(n, comp)
    variance = PRIOR_SIGMA**2
    s = np.zeros(n)
    for _ in range(PRIOR_ROUNDS):
        s, hessian = _map(n, totals, 1 / variance, s)
        spread = float(np.mean(s * s + np.diag(np.linalg.inv(hessian))))
        updated = max(spread, PRIOR_SIGMA**2)
        if abs(updated - variance) <= PRIOR_CHANGE * variance:
            break
        variance = updated
    return s, hessian, 1 / variance


def _map(
    n: int,
    totals: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    prior: float,
    start: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The MAP skills (relative to the prior mean) and the posterior's Hessian there."""
    i, j, w_i, w_j = totals
    s = start.copy()

    def objective(x: np.ndarray) -> float:
        d = (x[i] - x[j]) / _SCALE
        a, _ = _log_phi_and_ratio(d)
        b, _ = _log_phi_and_ratio(-d)
        return float(w_i @ a + w_j @ b - 0.5 * prior * (x @ x))

    def derivatives(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = (x[i] - x[j]) / _SCALE
        _, va = _log_phi_and_ratio(d)
        _, vb = _log_phi_and_ratio(-d)
        g = (w_i * va - w_j * vb) / _SCALE
        c = (w_i * va * (va + d) + w_j * vb * (vb - d)) / _SCALE**2
        grad = -prior * x + np.bincount(i, g, n) - np.bincount(j, g, n)
        hess = prior * np.eye(n)
        flat = hess.reshape(-1)
        flat += np.bincount(i * n + i, c, n * n) + np.bincount(j * n + j, c, n * n)
        flat -= np.bincount(i * n + j, c, n * n) + np.bincount(j * n + i, c, n * n)
        return grad, hess

    current = objective(s)
    for _ in range(MAX_STEPS):
        grad, hess = derivatives(s)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while True:  # Newton with backtracking: the posterior is log-concave
            trial = s + t * step
            value = objective(trial)
            if value >= current - 1e-12 or t < 1e-6:
                break
            t /= 2
        s, current = trial, value
        if float(np.max(np.abs(t * step), initial=0.0)) < TOLERANCE:
            break
    _, hess = derivatives(s)
    return s, hess


def _sandwich(
    n: int, comp: Comparisons, s: np.ndarray, hessian: np.ndarray, prior: float
) -> np.ndarray:
    """H^-1 (J + P) H^-1, J the sum over deals of each deal's score outer product."""
    inv = np.linalg.inv(hessian)
    if comp.first.size == 0:
        return inv
    d = (s[comp.first] - s[comp.second]) / _SCALE
    _, va = _log_phi_and_ratio(d)
    _, vb = _log_phi_and_ratio(-d)
    g = np.where(comp.tie, 0.5 * (va - vb), va) / _SCALE  # d log L / d s_first
    keys = np.concatenate([comp.deal * n + comp.first, comp.deal * n + comp.second])
    values = np.concatenate([g, -g])
    uniq, inverse = np.unique(keys, return_inverse=True)
    u = np.bincount(inverse, values, uniq.size)
    deal, who = uniq // n, uniq % n
    starts = np.flatnonzero(np.r_[True, deal[1:] != deal[:-1]])
    sizes = np.diff(np.r_[starts, deal.size])
    pos = np.arange(deal.size) - np.repeat(starts, sizes)
    size = np.repeat(sizes, sizes)
    j_flat = np.zeros(n * n)
    for offset in range(int(sizes.max())):
        a = np.flatnonzero(pos + offset < size)
        b = a + offset
        prod = u[a] * u[b]
        j_flat += np.bincount(who[a] * n + who[b], prod, n * n)
        if offset:
            j_flat += np.bincount(who[b] * n + who[a], prod, n * n)
    meat = j_flat.reshape(n, n) + prior * np.eye(n)
    cov = inv @ meat @ inv
    return 0.5 * (cov + cov.T)
