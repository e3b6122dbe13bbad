"""``saloon new GAME DIR``: a starter kit, a bot and a pytest test that plays it.

The bot uses the game's typed SDK view and plays a random legal action, seeded from
``MatchInfo.seed`` (so its matches replay); the test plays it, as the arena does (its own
process over gRPC), against the game's house bots and checks it commits no fault.
"""

from __future__ import annotations

from pathlib import Path

from saloon.games import get_game, sdk_views_table
from saloon.referee.errors import RefereeError
from saloon.sdk.botref import HOUSE_PREFIX
from saloon.sdk.house import house_bot_names

BOT_FILE = "bot.py"
TEST_FILE = "test_bot.py"

_BOT = '''"""My {name} bot ({game}): every field it can read is in docs/reference/{game}.md."""

from __future__ import annotations

import random
from typing import Any

from saloon.sdk import Bot, Decision, MatchInfo
{view_import}

class MyBot(Bot):
    def on_match_start(self, info: MatchInfo) -> None:
        # A seed derived from the match seed and this seat: the same match replays exactly.
        self.rng = random.Random(info.seed)

    def act(self, decision: Decision[{obs_type}, Any]) -> Any:
        # decision.kind says what is asked, decision.observation what this seat sees and
        # decision.legal the typed choices: return one of them. Start here.
        return self.rng.choice(decision.legal)
'''

_TEST = '''"""Plays bot.py against the house bots of {game}, as the arena would (over gRPC)."""

from __future__ import annotations

from pathlib import Path

import pytest

from saloon.referee.match import play_local

GAME = "{game}"
BOT = str(Path(__file__).with_name("bot.py"))
OPPONENTS = {opponents!r}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_my_bot_plays_a_whole_match_without_a_fault(seed: int) -> None:
    record = play_local(GAME, [BOT, *OPPONENTS], seed=seed)
    assert record.faults == [], record.faults
    assert len(record.ranks) == {seats}
    print("my rank (1 = first):", record.ranks[0] + 1, "scores:", record.scores)
'''


class StarterError(RefereeError):
    """A starter kit that cannot be written where asked."""


def write_starter(game_id: str, folder: str | Path) -> list[Path]:
    """Write the starter bot and its test into ``folder`` (new or empty); the paths."""
    spec = get_game(game_id)
    target = Path(folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise StarterError(f"{target} exists and is not an empty folder")
    view = sdk_views_table().get(game_id)
    view_import = f"from {view} import Observation\n" if view else ""
    names = [n for n in house_bot_names(game_id) if n != "random"] + ["random"]
    opponents = [f"{HOUSE_PREFIX}{names[i % len(names)]}" for i in range(spec.min_players - 1)]
    files = {
        BOT_FILE: _BOT.format(
            name=spec.name,
            game=game_id,
            view_import=view_import,
            obs_type="Observation" if view else "Any",
        ),
        TEST_FILE: _TEST.format(game=game_id, opponents=opponents, seats=spec.min_players),
    }
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in files.items():
        path = target / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
