"""The fold: schedule order, skipped aborts, duplicate deals, new versions, ladders."""

from __future__ import annotations

import dataclasses
import importlib.util
import random

import pytest

from saloon.ratings.fold import fold, rate_groups
from saloon.ratings.ladders import Ladder, default_ladder, ladder_for
from saloon.ratings.leaderboard import BotInfo, build_leaderboard
from saloon.ratings.params import DEFAULT_SIGMA, RatingParams, Scope
from saloon.referee.record import Outcome
from tests.unit.ratings_results import LADDER, result

BOTS = ["ann", "bob", "cat", "dan", "eve"]


def season(n: int, seed: int = 1) -> list:  # type: ignore[type-arg]
    """``n`` random 4-seat results (ties included), some aborted, one deal group in 3."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        seats = rng.sample(BOTS, 4)
        ranks = sorted(rng.choice([0, 0, 1, 2, 3]) for _ in seats)
        outcome = Outcome.ABORTED if rng.random() < 0.05 else Outcome.COMPLETED
        group = f"deal-{i // 4}" if i % 12 < 4 else None
        out.append(result(i, list(zip(seats, ranks, strict=True)), outcome=outcome,
                          deal_group=group))  # fmt: skip
    return out


def test_completion_order_never_changes_the_leaderboard() -> None:
    results = season(120)
    reference = build_leaderboard(fold(results, LADDER))
    for seed in range(3):
        shuffled = list(results)
        random.Random(seed).shuffle(shuffled)  # the order workers finished in
        again = build_leaderboard(fold(shuffled, LADDER))
        assert again.records() == reference.records()
        assert again.standings.history == reference.standings.history
    # ...while the schedule order itself does matter (so the test could fail):
    reordered = [r.__class__(**{**r.__dict__, "order": (0, -r.order[1])}) for r in results]
    assert build_leaderboard(fold(reordered, LADDER)).records() != reference.records()


def test_aborted_matches_are_neither_rated_nor_counted() -> None:
    played = result(0, [("ann", 0), ("bob", 1), ("cat", 2)])
    aborted = result(1, [("ann", 2), ("bob", 1), ("cat", 0)], outcome=Outcome.ABORTED)
    with_abort = fold([played, aborted], LADDER)
    assert with_abort.ratings == fold([played], LADDER).ratings
    assert with_abort.stats["ann"].matches == 1


def test_played_out_seats_rank_as_the_record_says_and_faults_count() -> None:
    # the record already ranks a played-out seat last; the fold takes the ranks as they are
    r = result(0, [("ann", 2), ("bob", 0), ("cat", 1)], played_out=["ann"], faults={"ann": 3})
    s = fold([r], LADDER)
    assert s.ratings[("ann", "v1")][0] < s.ratings[("cat", "v1")][0] < s.ratings[("bob", "v1")][0]
    assert s.stats["ann"].faults == 3 and s.stats["ann"].played_out == 1


def test_a_duplicate_deal_is_one_comparison_of_summed_placings() -> None:
    # One deal replayed three times with the seats rotated: ann 0+2+0, bob 1+0+2, cat 2+1+1.
    deal = [
        result(0, [("ann", 0), ("bob", 1), ("cat", 2)], deal_group="d0"),
        result(1, [("bob", 0), ("cat", 1), ("ann", 2)], deal_group="d0"),
        result(2, [("cat", 1), ("ann", 0), ("bob", 2)], deal_group="d0"),
    ]
    s = fold(deal, LADDER)
    assert s.comparisons == 1 and s.matches == 3
    # sums 2, 3, 4 -> the same update as one match ranked ann, bob, cat
    single = fold([result(0, [("ann", 0), ("bob", 1), ("cat", 2)])], LADDER)
    assert s.ratings == single.ratings
    # equal sums are a draw
    tied = fold(deal[:2], LADDER)  # ann 2, bob 1, cat 3
    assert tied.ratings[("bob", "v1")][0] > tied.ratings[("ann", "v1")][0]


def test_a_deal_is_rated_at_its_first_match_even_when_replays_are_spread() -> None:
    deal_a = [result(0, [("ann", 0), ("bob", 1)], deal_group="a"),
              result(2, [("bob", 0), ("ann", 1)], deal_group="a")]  # fmt: skip
    middle = result(1, [("ann", 0), ("bob", 1)])
    s = fold([*deal_a, middle], LADDER)
    assert s.comparisons == 2
    assert [p.match_id for p in s.history["ann"]] == ["s0-0", "s0-1"]


def test_a_new_version_starts_from_its_predecessor_s_mu_with_the_prior_sigma() -> None:
    old = [result(i, [("ann", 0), ("bob", 1), ("cat", 2)]) for i in range(30)]
    before = fold(old, LADDER)
    mu, sigma = before.ratings[("ann", "v1")]
    new = result(30, [("ann", 1), ("bob", 0), ("cat", 2)], versions={"ann": "v2"})
    after = fold([*old, new], LADDER)
    first = after.history["ann"][-1]
    assert first.version == "v2"
    params = LADDER.params
    assert params.successor_sigma(sigma) == DEFAULT_SIGMA  # the prior's: it may be a rewrite
    narrower = dataclasses.replace(params, version_sigma_floor=DEFAULT_SIGMA / 3)
    assert narrower.successor_sigma(sigma) == pytest.approx(max(2 * sigma, DEFAULT_SIGMA / 3))
    # it lost to bob: it moved from the predecessor's mu (down), not from the prior 25 as a
    # new bot in its place does
    fresh = fold([*old, result(30, [("dan", 1), ("bob", 0), ("cat", 2)])], LADDER)
    assert fresh.history["dan"][-1].mu < first.mu < mu
    assert after.stats["ann"].version == "v2" and after.stats["ann"].versions == {"v1": 30, "v2": 1}
    board = build_leaderboard(after)
    assert next(r for r in board.rows if r.bot == "ann").version == "v2"


def test_season_scope_has_no_drift_all_time_scope_does() -> None:
    results = [result(i, [("ann", 0), ("bob", 1)]) for i in range(200)]
    season_sigma = fold(results, LADDER, Scope.SEASON).ratings[("ann", "v1")][1]
    all_time_sigma = fold(results, LADDER, Scope.ALL_TIME).ratings[("ann", "v1")][1]
    assert all_time_sigma > season_sigma
    assert LADDER.params.tau(Scope.SEASON) == 0.0


def test_ladders_rate_the_options_that_change_a_result_apart() -> None:
    assert ladder_for("seizure-v1", {"end": "gap"}) != ladder_for("seizure-v1", {"end": "rounds"})
    assert ladder_for("western-showdown-v1", {"best_of": 3}).label == (
        "western-showdown-v1 best_of=3"
    )
    assert default_ladder("seizure-v1") == Ladder("seizure-v1", (("end", "rounds"),))
    # an option of a game without a table entry is rated apart, to be safe
    assert ladder_for("new-game-v1", {"speed": "x"}).options == (("speed", "x"),)
    gap = Ladder("seizure-v1", (("end", "gap"),))
    assert gap.params.forced_ties and gap.params.draw_probability_for(4) == pytest.approx(2 / 3)
    other = result(1, [("ann", 1), ("bob", 0)], ladder=gap)
    assert "ann" not in fold([other], LADDER).stats


def test_unrated_bots_are_listed_unrated_not_zero() -> None:
    s = fold([result(0, [("ann", 0), ("bob", 1)])], LADDER)
    board = build_leaderboard(s, known=[BotInfo("zed", "z", "v9"), BotInfo("ann")])
    assert [(r.rank, r.bot) for r in board.rows] == [(1, "ann"), (2, "bob"), (None, "zed")]
    zed = board.records()[-1]
    assert zed["conservative"] is None and zed["mu"] is None and zed["matches"] == 0
    assert board.two_player and "wins" in [f for f, _ in board.columns()]


def test_params_clamp_draw_probability() -> None:
    assert RatingParams(draw_probability=0.0).draw_probability_for(2) == pytest.approx(0.01)
    assert RatingParams(forced_ties=True).draw_probability_for(6) == pytest.approx(0.8)


def test_an_extreme_upset_is_rated_precisely_or_skipped_never_raised() -> None:
    # a 400-point upset underflows trueskill's builtin backend (FloatingPointError)
    env = LADDER.params.environment(Scope.SEASON, 2)
    groups = [(env.create_rating(0, 0.3),), (env.create_rating(400, 0.3),)]
    with pytest.raises(FloatingPointError):
        env.rate(groups, [0, 1])
    rated = rate_groups(env, groups, [0, 1])
    if importlib.util.find_spec("mpmath") is None:
        assert rated is None  # the comparison is skipped (logged), the fold goes on
    else:
        assert rated is not None and rated[0][0].mu > 0
