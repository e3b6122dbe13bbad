"""Ladders: a game id plus the options that change what a result means.

A leaderboard belongs to one ladder; results of different ladders are never rated together.

Per game (see docs/rules/*.md and ``saloon games``):

* ``seas-of-strife-v1``: no options; one ladder. Seat count (3-6) is not rated apart:
  free-for-all TrueSkill already weighs a 6-seat win above a 3-seat one.
* ``seizure-v1``: ``end`` is rated apart. ``end=rounds`` ranks every seat by its total;
  ``end=gap`` ranks only the winner against the rest (every other seat ties for second),
  so one of its results says far less than a ``rounds`` result.
* ``western-showdown-v1``: ``best_of`` is rated apart: a best-of-three result is one unit
  of three games, not one game.

An option of a game not listed here (a new game, a new option) is rated apart: being
conservative costs a split leaderboard, never a mixed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from saloon.ratings.params import DEFAULT_PARAMS, RatingParams

#: Per game: the options rated apart (every other option is pooled into one ladder).
RATED_APART: dict[str, tuple[str, ...]] = {
    "seas-of-strife-v1": (),
    "seizure-v1": ("end",),
    "western-showdown-v1": ("best_of",),
}

#: Per game, then per rated-apart option value: the TrueSkill parameters. The draw
#: probabilities are the measured share of neighbour pairs (sorted by rank) that tie, in
#: house-bot matches (greedy and random, seeds 0..N, see docs/ratings.md):
#: Seas of Strife 0.107 (4 seats, 200 matches); Seizure rounds 0.030 (4 seats) and 0.000
#: (2 seats); Seizure gap 0.667 = (n-2)/(n-1) (forced ties); Western 0.000 (both units).
LADDER_PARAMS: dict[str, RatingParams] = {
    "seas-of-strife-v1": RatingParams(draw_probability=0.10),
    "seizure-v1": RatingParams(draw_probability=0.03),
    "seizure-v1 end=gap": RatingParams(draw_probability=0.01, forced_ties=True),
    "western-showdown-v1": RatingParams(draw_probability=0.01),
}


@dataclass(frozen=True, order=True)
class Ladder:
    """A game id and the values of its rated-apart options (sorted by option name)."""

    game: str
    options: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """``game`` or ``game name=value ...`` (how tables, files and the CLI name it)."""
        return " ".join([self.game, *(f"{k}={v}" for k, v in self.options)])

    @property
    def params(self) -> RatingParams:
        """The ladder's TrueSkill parameters (game-wide unless an option value overrides)."""
        for key in (self.label, self.game):
            if key in LADDER_PARAMS:
                return LADDER_PARAMS[key]
        return DEFAULT_PARAMS


def ladder_for(game: str, options: Mapping[str, object]) -> Ladder:
    """The ladder a result of ``game`` played with ``options`` belongs to."""
    apart = RATED_APART.get(game)
    keep = sorted(options) if apart is None else sorted(k for k in options if k in apart)
    return Ladder(game, tuple((k, str(options[k])) for k in keep))


def default_ladder(game: str, options: Mapping[str, object] | None = None) -> Ladder:
    """The ladder of ``game`` with its default options (overridden by ``options``).

    Game defaults come from the engine registry so ``--game seizure-v1`` means
    ``end=rounds`` exactly as a match played without options does.
    """
    from saloon.games import get_game

    spec = get_game(game)
    values: dict[str, object] = {o.name: o.default for o in spec.options}
    values.update(options or {})
    return ladder_for(game, spec.parse_options({k: str(v) for k, v in values.items()}))
