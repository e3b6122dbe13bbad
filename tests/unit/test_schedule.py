"""Season schedules: deterministic, balanced within the stated bounds, duplicate deals."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from saloon.referee.limits import wall_cap_ms
from saloon.worker.errors import SeasonSpecError
from saloon.worker.matches.spec import JOB_TIMEOUT_MARGIN_S, MatchSpec
from saloon.worker.seasons.schedule import (
    CYCLIC_PAIR_SPREAD,
    CyclicOffsets,
    SeasonSpec,
    expand,
    matches_per_round,
    round_tables,
    uses_full_set,
)


def season(n: int, k: int, rounds: int = 1, duplicate: bool = False, seed: int = 1) -> SeasonSpec:
    game = "western-showdown-v1" if k == 2 else "seas-of-strife-v1"
    if k == 2 and n > 2:
        game = "seizure-v1"
    return SeasonSpec(
        season_id="s1",
        game=game,
        participants=tuple(f"house:b{i}" for i in range(n)),
        seats=k,
        rounds=rounds,
        seed=seed,
        duplicate=duplicate,
    )


def seat_counts(specs: list[MatchSpec]) -> Counter[tuple[str, int]]:
    return Counter((bot, pos) for s in specs for pos, bot in enumerate(s.seats))


def pair_counts(specs: list[MatchSpec], bots: tuple[str, ...]) -> list[int]:
    met = Counter(frozenset(p) for s in specs for p in itertools.combinations(s.seats, 2))
    return [met[frozenset(p)] for p in itertools.combinations(bots, 2)]


def test_two_players_every_pair_in_both_seat_orders_each_round() -> None:
    spec = season(4, 2, rounds=2)
    specs = expand(spec)
    assert len(specs) == 2 * 4 * 3
    ordered = Counter(s.seats for s in specs)
    assert set(ordered.values()) == {2}  # every ordered pair, once per round
    assert len(ordered) == 12
    assert [s.match_id for s in specs] == [f"s1-{i}" for i in range(24)]
    assert len({s.seed for s in specs}) == 24


@given(n=st.integers(3, 8), k=st.integers(3, 6), rounds=st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_full_set_is_exactly_balanced(n: int, k: int, rounds: int) -> None:
    if k > n or not uses_full_set(n, k):
        return
    spec = season(n, k, rounds)
    specs = expand(spec)
    assert len(specs) == rounds * math.comb(n, k) * k
    assert set(seat_counts(specs).values()) == {rounds * math.comb(n - 1, k - 1)}
    assert set(pair_counts(specs, spec.participants)) == {rounds * k * math.comb(n - 2, k - 2)}


@given(n=st.integers(4, 16), k=st.integers(3, 6), rounds=st.integers(1, 4))
@settings(max_examples=40, deadline=None)
def test_cyclic_rounds_stay_within_the_stated_bounds(n: int, k: int, rounds: int) -> None:
    """Every bot sits in every seat exactly once per round; pair counts spread <= bound."""
    if k >= n:
        return
    offsets = CyclicOffsets(n, k, seed=3)
    tables = [t for _ in range(rounds) for t in round_tables(n, k, offsets.next())]
    positions = Counter((bot, pos) for t in tables for pos, bot in enumerate(t))
    assert len(positions) == n * k and set(positions.values()) == {rounds}
    met = Counter(frozenset(p) for t in tables for p in itertools.combinations(t, 2))
    counts = [met[frozenset(p)] for p in itertools.combinations(range(n), 2)]
    assert max(counts) - min(counts) <= CYCLIC_PAIR_SPREAD


def test_a_large_field_uses_the_cyclic_schedule_and_everyone_meets() -> None:
    spec = season(10, 4, rounds=3)
    assert not uses_full_set(10, 4)
    specs = expand(spec)
    assert len(specs) == 30 == 3 * matches_per_round(10, 4)
    assert set(seat_counts(specs).values()) == {3}
    counts = pair_counts(specs, spec.participants)
    assert min(counts) >= 1 and max(counts) - min(counts) <= CYCLIC_PAIR_SPREAD


def test_the_schedule_is_deterministic_and_seeded() -> None:
    assert expand(season(5, 3, 2)) == expand(season(5, 3, 2))
    other = expand(season(5, 3, 2, seed=2))
    assert [s.seats for s in other] == [s.seats for s in expand(season(5, 3, 2))]
    assert [s.seed for s in other] != [s.seed for s in expand(season(5, 3, 2))]


@pytest.mark.parametrize(("n", "k"), [(2, 2), (4, 3), (10, 4)])
def test_duplicate_deals_replay_one_seed_with_rotated_seats(n: int, k: int) -> None:
    specs = expand(season(n, k, rounds=2, duplicate=True))
    groups: dict[int, list[MatchSpec]] = {}
    for s in specs:
        assert s.deal is not None
        groups.setdefault(s.deal, []).append(s)
    assert sorted(groups) == list(range(len(groups)))
    for group in groups.values():
        assert len(group) == k and len({s.seed for s in group}) == 1
        bots = set(group[0].seats)
        # every bot of the deal plays every seat's hand exactly once
        for pos in range(k):
            assert {s.seats[pos] for s in group} == bots
    assert len({g[0].seed for g in groups.values()}) == len(groups)


def test_spec_json_round_trips() -> None:
    spec = season(4, 3, duplicate=True)
    assert SeasonSpec.from_json(spec.to_json()) == spec
    match = expand(spec)[5]
    assert MatchSpec.from_json(match.to_json()) == match


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"season_id": "local-1"}, "season id"),
        ({"season_id": "Bad Id"}, "season id"),
        ({"game": "nope-v1"}, "nope-v1"),
        ({"seats": 7}, "seats"),
        ({"participants": ("house:a", "house:a", "house:b")}, "distinct"),
        ({"participants": ("house:a", "house:b")}, "cannot fill"),
        ({"rounds": 0}, "rounds"),
    ],
)
def test_bad_seasons_are_refused(change: dict[str, object], message: str) -> None:
    raw = season(4, 3).to_json() | change
    with pytest.raises(SeasonSpecError, match=message):
        expand(SeasonSpec.from_json(raw))


def test_a_job_times_out_after_the_matchs_own_wall_clock_cap() -> None:
    spec = expand(season(4, 3))[0]
    cap = spec.wall_cap_ms(1000)
    assert cap == wall_cap_ms(spec.limits, 3, 1000)
    assert spec.job_timeout_s(1000) == -(-cap // 1000) + JOB_TIMEOUT_MARGIN_S
    fixed = MatchSpec.from_json(spec.to_json() | {"wall_ms": 2500})
    assert fixed.wall_cap_ms(1000) == 2500 and fixed.job_timeout_s(1000) == 3 + JOB_TIMEOUT_MARGIN_S
