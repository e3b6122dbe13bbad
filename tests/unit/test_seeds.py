"""Seed derivation (saloon.referee.seeds): the formulas are pinned, since records replay by them.

The expected values were computed with the code before seed derivation had its own module
(the match loop's derive_seed, the submission's inline qualification seed).
"""

from __future__ import annotations

import pytest

from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.referee.seeds import (
    SEED_LIMIT,
    bot_match_id,
    bot_seed,
    derive_seed,
    secret_seed,
    text_seed,
)
from saloon.sdk.bot import MatchInfo
from saloon.sdk.house.random_bot import RandomBot
from saloon.worker.seasons.schedule import SeasonSpec, expand


@pytest.mark.parametrize(
    ("seed", "label", "expected"),
    [
        (0, "chance", 7249772406402692167),
        (1, "seat:0", 1495928185167573336),
        (42, "seat:3", 1639002133577154286),
        (7, "fallback:1", 4256109735977099546),
        (2**63 - 1, "match:0", 1788369995166736731),
        (12345, "deal:2", 464546131505784825),
        (9, "offsets:7:3", 4409200748970287660),
    ],
)
def test_derive_seed_keeps_its_values(seed: int, label: str, expected: int) -> None:
    """derive_seed gives exactly the seeds it always gave."""
    assert derive_seed(seed, label) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sha256:0123456789abcdef", 208830928247374),
        ("sha256:ffffffffffffffff", 81920950051199),
        ("sha256:5f2b9c0d1e3a4b6c", 20570575666615),
        ("", 250348346448124),
    ],
)
def test_text_seed_keeps_the_qualification_values(text: str, expected: int) -> None:
    """text_seed gives exactly the seeds qualification matches were played with."""
    assert text_seed(text) == expected


def test_seed_ranges() -> None:
    """derive_seed fits 63 bits, text_seed 48 bits, over many inputs."""
    assert all(0 <= derive_seed(s, f"seat:{s % 6}") < 2**63 for s in range(500))
    assert all(0 <= text_seed(f"sha256:{s:016x}") < 2**48 for s in range(500))
    assert max(derive_seed(s, "chance") for s in range(500)) >= 2**62  # uses the top bit


class _SeedRecorder(RandomBot):
    """house:random that notes the seed its match start gave it."""

    def __init__(self, seen: list[int]) -> None:
        super().__init__()
        self.seen = seen

    def on_match_start(self, info: MatchInfo) -> None:
        self.seen.append(info.seed)
        super().on_match_start(info)


def test_a_match_seeds_each_seat_through_bot_seed() -> None:
    """Seat i's bot gets bot_seed(match seed, match id, i)."""
    seen: list[int] = []
    seats = [InProcessSeat(_SeedRecorder(seen), "house:random") for _ in range(3)]
    record = play_match("seizure-v1", seats, seed=11, match_id="s-4")
    assert seen == [bot_seed(11, "s-4", i) for i in range(3)]
    assert record.seed == 11  # the record keeps the match seed itself
    assert seen != [derive_seed(11, f"seat:{i}") for i in range(3)]


def test_local_play_keeps_the_seat_seeds_it_always_had() -> None:
    """A match played outside the arena (``local-...``) seeds seat i with
    derive_seed(match seed, "seat:i"), so local records and figures replay as before."""
    seen: list[int] = []
    seats = [InProcessSeat(_SeedRecorder(seen), "house:random") for _ in range(3)]
    record = play_match("seizure-v1", seats, seed=11)
    assert record.match_id == "local-seizure-v1-11"
    assert seen == [derive_seed(11, f"seat:{i}") for i in range(3)]


@pytest.mark.parametrize(
    ("seed", "match_id", "seat", "expected_seed", "expected_id"),
    [
        (11, "local-seizure-v1-11", 0, derive_seed(11, "seat:0"), "m-30c582b5debf20d2"),
        (5, "s-1", 2, 1437948817151342861, "m-30daedb9260af269"),
    ],
)
def test_bot_seed_and_bot_match_id_keep_their_values(
    seed: int, match_id: str, seat: int, expected_seed: int, expected_id: str
) -> None:
    """What a bot is given is pinned: records replay by it."""
    assert bot_seed(seed, match_id, seat) == expected_seed
    assert bot_match_id(seed, match_id, seat) == expected_id


def test_rotations_of_one_deal_give_a_bot_different_seeds_and_ids() -> None:
    """The matches of a duplicate deal share their seed; what their bots get does not."""
    dup = SeasonSpec(
        "d", "seizure-v1", ("house:random", "house:greedy", "house:search-25"), seats=3,
        seed=5, duplicate=True,
    )  # fmt: skip
    deal = [m for m in expand(dup) if m.deal == 0]
    assert len(deal) == 3 and len({m.seed for m in deal}) == 1
    given = {bot_seed(m.seed, m.match_id, s) for m in deal for s in range(3)}
    ids = {bot_match_id(m.seed, m.match_id, s) for m in deal for s in range(3)}
    assert len(given) == 9 and len(ids) == 9
    # Nothing a bot is given is the match seed, or a seed derived from it by a known label.
    labels = ["chance", *(f"seat:{s}" for s in range(3)), *(f"fallback:{s}" for s in range(3))]
    known = {deal[0].seed, *(derive_seed(deal[0].seed, label) for label in labels)}
    assert not given & known
    assert all(len(i) == 18 and m.match_id not in i for i in ids for m in deal)


def test_secret_seeds_come_from_the_os_and_fit_a_seed() -> None:
    """secret_seed: 63-bit, never the same twice in practice, never the old default 0."""
    drawn = [secret_seed() for _ in range(200)]
    assert all(0 <= s < SEED_LIMIT for s in drawn)
    assert len(set(drawn)) == 200 and 0 not in drawn
    assert max(drawn) >= 2**60  # the whole range is used, not a small one


def test_a_season_seeds_its_matches_through_derive_seed() -> None:
    """A season's match i gets derive_seed(season seed, "match:i"); a deal d "deal:d"."""
    plain = SeasonSpec("s", "seizure-v1", ("house:random", "house:greedy"), seats=2, seed=5)
    assert [m.seed for m in expand(plain)] == [derive_seed(5, f"match:{i}") for i in range(2)]
    dup = SeasonSpec(
        "d", "seizure-v1", ("house:random", "house:greedy"), seats=2, seed=5, duplicate=True
    )
    assert [m.seed for m in expand(dup)] == [derive_seed(5, "deal:0")] * 2


def test_a_qualification_seats_the_candidate_where_its_secret_seed_says() -> None:
    """The candidate's seat is the seed's, not always seat 0: every seat comes up."""
    from saloon.arena.submit import qualify_seat

    for seats in (2, 3):
        picked = [qualify_seat(secret_seed(), seats) for _ in range(300)]
        assert set(picked) == set(range(seats))
    assert qualify_seat(5, 2) == derive_seed(5, "qualify-seat") % 2
