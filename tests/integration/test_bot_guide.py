"""The complete example bots of docs/bot-guide.md play their game over gRPC, fault-free."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from saloon.referee.games import game_ids, get_game
from saloon.referee.limits import MatchLimits
from saloon.referee.match import play_local

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "bot-guide.md"
EXAMPLES = {
    "strife_bot.py": "seas-of-strife-v1",
    "seizure_bot.py": "seizure-v1",
    "showdown_bot.py": "western-showdown-v1",
}
LIMITS = MatchLimits(decision_ms=2_000, bank_ms=10_000, start_ms=20_000)


def examples() -> dict[str, str]:
    """file name -> code of every ``# file: NAME`` python block of the guide."""
    blocks = re.findall(r"```python\n# file: (\S+)\n(.*?)```", GUIDE.read_text(), re.S)
    return dict(blocks)


def test_every_game_has_an_example() -> None:
    assert set(examples()) == set(EXAMPLES)
    assert set(EXAMPLES.values()) >= set(game_ids())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_guide_example_plays(name: str, tmp_path: Path) -> None:
    game = EXAMPLES[name]
    if game not in game_ids():
        pytest.fail(f"{game} is not registered")
    path = tmp_path / name
    path.write_text(examples()[name])

    seats = [str(path)] + ["house:random"] * (get_game(game).min_players - 1)
    record = play_local(game, seats, seed=21, limits=LIMITS)
    assert record.faults == []
