"""Rating parameters: every default a named, documented constant; one frozen dataclass.

Each ladder (see :mod:`saloon.ratings.ladders`) gets its own :class:`RatingParams` and from
them its own explicit ``trueskill.TrueSkill`` environment (never the library's global
``setup()``). docs/ratings.md explains every figure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # trueskill is imported only where ratings are computed
    import trueskill

#: Prior mean of a new bot (TrueSkill's customary scale: 25).
DEFAULT_MU = 25.0
#: Prior standard deviation of a new bot (mu / 3: a new bot is mu - 3 sigma = 0).
DEFAULT_SIGMA = DEFAULT_MU / 3
#: Performance spread: a beta ahead wins ~76% of 1v1 games (TrueSkill's sigma / 2).
DEFAULT_BETA = DEFAULT_SIGMA / 2
#: Dynamics within one season: a bot version is a fixed program, its skill does not drift.
#: (Measured: trueskill's default tau 0.083 never settles 6 close bots; tau 0 does.)
SEASON_TAU = 0.0
#: Dynamics of the all-time ladder, added to sigma^2 before every rated comparison: a tenth
#: of trueskill's default (0.083), so a settled bot (sigma floor ~0.2-0.3) can still be moved
#: by newer results (opponents improve, versions change) without wandering between them.
ALL_TIME_TAU = DEFAULT_MU / 3000
#: A new version of a bot starts from its predecessor's mu with sigma widened by this factor
#: (capped at the prior sigma) ...
VERSION_SIGMA_FACTOR = 2.0
#: ... and never narrower than this: the prior's own sigma. A new version may be a one-line
#: change or a rewrite, so its predecessor's mu is only where its search starts. (Measured,
#: bench/matchmaking.py: with a floor of 25/9 a version that jumps from the last place to
#: place 10 of 50 is still ~25 places off after 40 of its matches, with 5, ~8; with the
#: prior's sigma and the matchmaker's placement, ~2.)
VERSION_SIGMA_FLOOR = DEFAULT_SIGMA
#: Draw probability when a ladder says nothing: TrueSkill's own default.
DEFAULT_DRAW_PROBABILITY = 0.10
#: Highest draw probability any environment gets (trueskill needs it < 1; above this a draw
#: margin is so wide that a win moves ratings by absurd amounts).
MAX_DRAW_PROBABILITY = 0.80
#: Smallest draw probability: a game without draws still gets a tiny margin, so the one tie
#: a rule allows (Seizure's lowest-total tie) rates as a draw instead of dividing by ~0.
MIN_DRAW_PROBABILITY = 0.01


class Scope(StrEnum):
    """Which results a leaderboard folds, which sets the dynamics (tau)."""

    #: One season: tau = SEASON_TAU.
    SEASON = "season"
    #: Every season of a ladder, oldest first: tau = ALL_TIME_TAU.
    ALL_TIME = "all-time"


@dataclass(frozen=True)
class RatingParams:
    """The TrueSkill parameters of one ladder.

    ``draw_probability`` is the chance that two neighbours in a result tie. When
    ``forced_ties`` is set, the rules themselves tie every seat but the winner (Seizure
    ``end=gap``): the chance a neighbour pair ties is then (n - 2) / (n - 1) for n seats, and
    the environment for n seats uses that instead (so the forced ties carry ~no evidence).
    """

    draw_probability: float = DEFAULT_DRAW_PROBABILITY
    forced_ties: bool = False
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    beta: float = DEFAULT_BETA
    season_tau: float = SEASON_TAU
    all_time_tau: float = ALL_TIME_TAU
    version_sigma_factor: float = VERSION_SIGMA_FACTOR
    version_sigma_floor: float = VERSION_SIGMA_FLOOR

    def tau(self, scope: Scope) -> float:
        """The dynamics factor for ``scope``."""
        return self.season_tau if scope is Scope.SEASON else self.all_time_tau

    def draw_probability_for(self, seats: int) -> float:
        """The draw probability of a comparison among ``seats`` bots."""
        p = self.draw_probability
        if self.forced_ties and seats > 2:
            p = max(p, (seats - 2) / (seats - 1))
        return min(MAX_DRAW_PROBABILITY, max(MIN_DRAW_PROBABILITY, p))

    def environment(self, scope: Scope, seats: int = 2) -> trueskill.TrueSkill:
        """A fresh, explicit TrueSkill environment (builtin backend) for these parameters."""
        import trueskill

        return trueskill.TrueSkill(
            mu=self.mu,
            sigma=self.sigma,
            beta=self.beta,
            tau=self.tau(scope),
            draw_probability=self.draw_probability_for(seats),
            backend=None,
        )

    def successor_sigma(self, sigma: float) -> float:
        """The starting sigma of a new version whose predecessor ended at ``sigma``."""
        return min(self.sigma, max(sigma * self.version_sigma_factor, self.version_sigma_floor))

    def with_draw_probability(self, p: float) -> RatingParams:
        """A copy with another draw probability."""
        return replace(self, draw_probability=p)


#: Parameters for a game this module has no figures for.
DEFAULT_PARAMS = RatingParams()
