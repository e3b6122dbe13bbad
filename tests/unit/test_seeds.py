"""Seed derivation (saloon.referee.seeds): the formulas are pinned, since records replay by them.

The expected values were computed with the code before seed derivation had its own module
(the match loop's derive_seed, the submission's inline qualification seed).
"""

from __future__ import annotations

import pytest

from saloon.referee.match import play_match
from saloon.referee.seats import InProcessSeat
from saloon.referee.seeds import derive_seed, text_seed
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


def test_a_match_seeds_each_seat_through_derive_seed() -> None:
    """Seat i's bot gets derive_seed(match seed, "seat:i")."""
    seen: list[int] = []
    seats = [InProcessSeat(_SeedRecorder(seen), "house:random") for _ in range(3)]
    play_match("seizure-v1", seats, seed=11)
    assert seen == [derive_seed(11, f"seat:{i}") for i in range(3)]


def test_a_season_seeds_its_matches_through_derive_seed() -> None:
    """A season's match i gets derive_seed(season seed, "match:i"); a deal d "deal:d"."""
    plain = SeasonSpec("s", "seizure-v1", ("house:random", "house:greedy"), seats=2, seed=5)
    assert [m.seed for m in expand(plain)] == [derive_seed(5, f"match:{i}") for i in range(2)]
    dup = SeasonSpec(
        "d", "seizure-v1", ("house:random", "house:greedy"), seats=2, seed=5, duplicate=True
    )
    assert [m.seed for m in expand(dup)] == [derive_seed(5, "deal:0")] * 2
