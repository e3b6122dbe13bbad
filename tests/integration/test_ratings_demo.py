"""`saloon demo` ends with each season's TrueSkill leaderboard (the season-report hook)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from saloon.arena.cli import season_leaderboard
from saloon.worker.seasons import cli as cli_season
from saloon.worker.seasons.schedule import SeasonSpec


def test_the_demo_ends_with_each_seasons_leaderboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = SeasonSpec(
        season_id="demo-tiny",
        game="seas-of-strife-v1",
        participants=("house:greedy", "house:random", "house:greedy#2"),
        seats=3,
        rounds=2,
        seed=7,
    )
    monkeypatch.setattr(cli_season, "demo_seasons", lambda rounds: [tiny])
    out = io.StringIO()
    args = argparse.Namespace(
        rounds=1, store=str(tmp_path / "demo.db"), game=None, reports=(season_leaderboard,)
    )
    assert cli_season.cmd_demo(args, out) == 0
    text = out.getvalue()
    board = text[text.index("seas-of-strife-v1 · season demo-tiny") :]  # after the standings
    assert "mu-3sigma" in board
    for bot in ("house:greedy", "house:random", "house:greedy#2"):
        assert bot in board
