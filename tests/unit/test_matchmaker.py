"""The continuous ladders' matchmaker (saloon.arena.matchmaker): its rules, on plain inputs."""

from __future__ import annotations

import random
import statistics
from collections import Counter

from saloon.arena.ladder import repeat_seed
from saloon.arena.matchmaker import Entry, Settings, choose_batch


def _field(n: int, owners: int | None = None, seed: int = 0) -> list[Entry]:
    rng = random.Random(seed)
    return [
        Entry(f"b{i}", f"o{i % owners if owners else i}", 40 - i, rng.uniform(1, 3))
        for i in range(n)
    ]


def test_the_same_inputs_give_the_same_batch_and_another_seed_another() -> None:
    entries = _field(30)
    a = choose_batch(entries, 2, Settings(), 7)
    assert a == choose_batch(list(entries), 2, Settings(), 7)
    assert len(a) == 15
    fresh = [Entry(f"b{i}", f"o{i}") for i in range(30)]  # all alike: the seed breaks ties
    assert choose_batch(fresh, 2, Settings(), 7) != choose_batch(fresh, 2, Settings(), 8)


def test_every_bot_plays_its_minimum_share_of_a_batch() -> None:
    entries = _field(40)
    tables = choose_batch(entries, 2, Settings(batch=40, min_share=0.5), 1)
    seats = Counter(i for t in tables for i in t)
    assert len(tables) == 40 and all(seats[i] >= 1 for i in range(40))


def test_a_bot_that_sat_out_long_enough_plays_even_when_its_share_rounds_to_none() -> None:
    entries = _field(100)
    # settled and unneeded, but it sat out its 1 / (0.5 x 0.2) = 10 batches
    entries[50] = Entry("b50", "o50", 10.0, 0.5, idle=9)
    tables = choose_batch(entries, 2, Settings(batch=10, min_share=0.5), 3)
    assert any(50 in t for t in tables)


def test_no_two_bots_of_one_owner_share_a_match_unless_allowed() -> None:
    entries = _field(24, owners=4)
    for seats in (2, 4):
        tables = choose_batch(entries, seats, Settings(), 5)
        assert tables and all(len({entries[i].owner for i in t}) == seats for t in tables)
    allowed = choose_batch(entries, 4, Settings(one_per_owner=False), 5)
    assert any(len({entries[i].owner for i in t}) < 4 for t in allowed)


def test_house_baselines_play_every_batch_and_may_meet() -> None:
    entries = [Entry(f"house:h{i}", "house", 25 + i, 1.0, house=True) for i in range(3)]
    entries += _field(30)
    tables = choose_batch(entries, 3, Settings(batch=10), 2)
    seated = {i for t in tables for i in t}
    assert {0, 1, 2} <= seated


def test_a_new_version_plays_more_and_meets_a_house_baseline() -> None:
    entries = [Entry("house:greedy", "house", 30.0, 1.0, house=True)]
    entries += [Entry(f"b{i}", f"o{i}", 60.0 - 3 * i, 1.0) for i in range(30)]  # settled
    entries[10] = Entry("b9", "o9", 32.0, 6.0)  # a new version: sigma still wide
    tables = choose_batch(entries, 2, Settings(top_focus=0), 4)
    seats = Counter(i for t in tables for i in t)
    assert seats[10] == max(seats.values()) >= 2 * statistics.median(seats.values())
    assert any(set(t) == {0, 10} for t in tables)


def test_seat_positions_even_out_over_batches() -> None:
    entries = _field(12)
    counts = {i: [0, 0, 0] for i in range(12)}
    for batch in range(30):
        live = [
            Entry(e.bot, e.owner, e.mu, e.sigma, seat_counts=tuple(counts[i]))
            for i, e in enumerate(entries)
        ]
        for table in choose_batch(live, 3, Settings(), batch):
            for pos, i in enumerate(table):
                counts[i][pos] += 1
    assert all(max(c) - min(c) <= 2 for c in counts.values()), counts


def test_fewer_bots_than_seats_make_no_batch() -> None:
    assert choose_batch(_field(3), 4, Settings(), 0) == []


def test_repeating_schedules_derive_their_season_seeds() -> None:
    """Regression: seasons were seeded seed + number - 1, so schedule 0's second season
    and schedule 1's first played the same deals."""
    assert repeat_seed(0, 2) != repeat_seed(1, 1)
    assert repeat_seed(5, 3) == repeat_seed(5, 3) and 0 <= repeat_seed(5, 3) < 2**63


def test_a_newcomer_in_a_settled_field_is_placed_above_and_below_its_mu() -> None:
    # a settled field 40 .. 1 (sigma ~1) and a new version at the bottom with the prior's
    # sigma: its tables alternate between opponents 1.5 sigma above and below its mu
    entries = [Entry(f"b{i}", f"o{i}", 40.0 - i, 1.0) for i in range(40)]
    entries.append(Entry("new", "onew", 5.0, 8.0))
    tables = choose_batch(entries, 2, Settings(), 3)
    opponents = [entries[t[0] if t[1] == 40 else t[1]].mu for t in tables if 40 in t]
    assert len(opponents) >= 4  # it plays more while new
    assert any(mu >= 5.0 + 1.5 * 8.0 - 1 for mu in opponents)  # near 17: far above it
    assert any(mu <= 5.0 for mu in opponents)  # and below
    # without placement it meets only its neighbours in mu order
    plain = choose_batch(entries, 2, Settings(place_spread=0), 3)
    assert all(entries[b].mu < 12 for t in plain if 40 in t for b in t)


def test_nobody_is_placed_in_a_young_field() -> None:
    # every bot is new (the median sigma is high): neighbours in mu order, not placement
    entries = [Entry(f"b{i}", f"o{i}", 25.0 + (20 - i) * 0.5, 7.0) for i in range(40)]
    tables = choose_batch(entries, 2, Settings(), 5)
    assert tables == choose_batch(entries, 2, Settings(place_spread=0), 5)
