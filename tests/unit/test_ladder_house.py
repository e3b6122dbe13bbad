"""A ladder (repeating or continuous) seats only house bots that play its game."""

from __future__ import annotations

import pytest

from saloon.arena.ladder import check_house_bots
from saloon.worker.errors import SeasonSpecError


def test_house_bots_of_the_game_are_accepted() -> None:
    check_house_bots("seizure-v1", ["random", "greedy", "search-25"])


def test_an_unknown_house_bot_is_refused_with_the_game_s_own_list() -> None:
    with pytest.raises(SeasonSpecError, match=r"no house bot 'clever' plays seizure-v1 .*greedy"):
        check_house_bots("seizure-v1", ["greedy", "clever"])
