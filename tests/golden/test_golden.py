"""Every golden playthrough regenerates byte for byte (rule drift shows up as a diff)."""

from __future__ import annotations

import difflib

import pytest

from saloon.referee.playthrough import playthrough
from tests.golden.cases import CASES, HERE


@pytest.mark.parametrize(
    ("name", "game", "players", "seed", "options"), CASES, ids=[c[0] for c in CASES]
)
def test_playthrough_matches_golden(
    name: str, game: str, players: int, seed: int, options: dict[str, str | int]
) -> None:
    expected = (HERE / name).read_text(encoding="utf-8")
    actual = playthrough(game, players, seed, options)
    if actual != expected:
        diff = "".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(True), actual.splitlines(True), name, "regenerated"
                )
            )[:60]
        )
        pytest.fail(f"{name} drifted (python tests/golden/regen.py to accept):\n{diff}")


def test_every_registered_game_has_a_golden_file() -> None:
    from saloon.games import game_ids

    assert set(game_ids()) <= {c[1] for c in CASES}
