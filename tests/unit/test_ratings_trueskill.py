"""The published Microsoft Research TrueSkill examples, through our fold.

The expected numbers are the ones sublee/trueskill checks against the MSR online
calculator (``trueskilltests.py``: ``n_vs_n``, ``individual``, ``custom_environment``;
``test.py``: ``test_1vs1``), with MSR's parameters: mu 25, sigma 25/3, beta 25/6,
tau 25/300, draw probability 0.10. Three decimals, one unit of the last allowed (as there).
"""

from __future__ import annotations

import pytest

from saloon.ratings.fold import fold
from saloon.ratings.params import RatingParams, Scope
from tests.unit.ratings_results import LADDER, result

#: MSR's calculator settings, expressed as one ladder's parameters (season scope uses tau).
MSR = RatingParams(draw_probability=0.10, season_tau=25 / 300)


def rated(ranks: list[int], params: RatingParams = MSR) -> list[tuple[float, float]]:
    """Fresh bots p0..pn-1 play one match with ``ranks``: their (mu, sigma) after it."""
    standings = fold([result(0, [(f"p{i}", r) for i, r in enumerate(ranks)])], LADDER,
                     Scope.SEASON, params)  # fmt: skip
    return [standings.ratings[(f"p{i}", "v1")] for i in range(len(ranks))]


def check(got: list[tuple[float, float]], expected: list[tuple[float, float]]) -> None:
    assert len(got) == len(expected)
    for (mu, sigma), (emu, esigma) in zip(got, expected, strict=True):
        assert mu == pytest.approx(emu, abs=1.0005e-3)
        assert sigma == pytest.approx(esigma, abs=1.0005e-3)


def test_one_vs_one_win_and_draw() -> None:
    check(rated([0, 1]), [(29.396, 7.171), (20.604, 7.171)])
    check(rated([0, 0]), [(25.000, 6.458), (25.000, 6.458)])


def test_free_for_all_three_four_five_players() -> None:
    check(rated([0, 1, 2]), [(31.675, 6.656), (25.000, 6.208), (18.325, 6.656)])
    check(rated([0, 0, 0]), [(25.000, 5.698), (25.000, 5.695), (25.000, 5.698)])
    check(
        rated([0, 1, 2, 3]),
        [(33.207, 6.348), (27.401, 5.787), (22.599, 5.787), (16.793, 6.348)],
    )
    check(
        rated([0, 1, 2, 3, 4]),
        [(34.363, 6.136), (29.058, 5.536), (25.000, 5.420), (20.942, 5.536), (15.637, 6.136)],
    )


def test_unsorted_ranks_rate_by_rank_not_seat() -> None:
    check(rated([2, 1, 0]), [(18.325, 6.656), (25.000, 6.208), (31.675, 6.656)])


def test_the_ladder_environment_is_used_not_the_global_one() -> None:
    # trueskilltests.py custom_environment: draw probability 0.50 changes a plain win.
    check(rated([0, 1], MSR.with_draw_probability(0.50)), [(30.267, 7.077), (19.733, 7.077)])
    import trueskill

    assert trueskill.global_env().draw_probability == pytest.approx(0.10)
