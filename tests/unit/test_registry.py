"""The game registry and the generic parts of the engine contract."""

from __future__ import annotations

import pytest

from saloon.games import OptionSpec, competition_ranks, game_ids, get_game
from saloon.games.errors import GameOptionError, SeatCountError, UnknownGameError


def test_builtin_games_are_registered() -> None:
    assert {"seas-of-strife-v1", "seizure-v1", "western-showdown-v1"} <= set(game_ids())
    assert game_ids() == sorted(game_ids())


def test_every_registered_game_loads_with_its_own_id() -> None:
    for game_id in game_ids():
        spec = get_game(game_id)
        assert spec.id == game_id
        assert spec.min_players <= spec.max_players
        assert spec.decision_kinds and spec.max_length > 0


def test_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(UnknownGameError) as err:
        get_game("poker-v1")
    message = str(err.value)
    assert "poker-v1" in message
    for game_id in game_ids():
        assert game_id in message


def test_unknown_version_names_the_known_versions() -> None:
    with pytest.raises(UnknownGameError, match=r"versions of that game: seas-of-strife-v1"):
        get_game("seas-of-strife-v9")


def test_seat_counts_are_checked() -> None:
    spec = get_game("seas-of-strife-v1")
    with pytest.raises(SeatCountError, match="3 to 6 seats, not 2"):
        spec.new_game(2)
    with pytest.raises(SeatCountError, match="not 7"):
        spec.new_game(7)


def test_options_are_validated() -> None:
    spec = get_game("seas-of-strife-v1")
    with pytest.raises(GameOptionError, match="no option 'speed'"):
        spec.parse_options({"speed": "fast"})
    choice = OptionSpec("end", "rounds", "how the game ends", choices=("rounds", "gap"))
    assert choice.parse("gap") == "gap"
    with pytest.raises(GameOptionError, match="expected one of rounds, gap"):
        choice.parse("never")
    numbers = OptionSpec("best_of", 1, "games", choices=(1, 3))
    assert numbers.parse("3") == 3
    assert numbers.describe() == "1|3"
    with pytest.raises(GameOptionError, match="expected one of 1, 3"):
        numbers.parse("2")
    ranged = OptionSpec("rounds", 5, "rounds", int_range=(1, 10))
    assert ranged.parse("7") == 7
    with pytest.raises(GameOptionError, match="from 1 to 10"):
        ranged.parse("11")
    with pytest.raises(GameOptionError, match="integer"):
        ranged.parse("x")


@pytest.mark.parametrize(
    ("values", "lower", "ranks"),
    [
        ([3, 3, 5], True, [0, 0, 2]),
        ([3, 3, 5, 15], True, [0, 0, 2, 3]),
        ([9, 9], False, [0, 0]),
        ([1, 7, 7, 2], False, [3, 0, 0, 2]),
    ],
)
def test_competition_ranks(values: list[float], lower: bool, ranks: list[int]) -> None:
    assert competition_ranks(values, lower) == ranks


def test_sdk_views_and_house_bots_are_registered_by_full_id() -> None:
    from saloon.games import house_bots_table, sdk_views_table
    from saloon.sdk.games import adapter_for
    from saloon.sdk.house import house_bot_names

    for game_id in game_ids():
        assert game_id in sdk_views_table()
        module = adapter_for(game_id)
        assert module is not None and callable(module.decode_observation)
        assert "greedy" in house_bots_table()[game_id]
    # A later version never inherits v1's views or house bots by a stripped id.
    assert adapter_for("seizure-v2") is None
    assert house_bot_names("seizure-v2") == ["random"]
    assert {"greedy", "random", "search"} <= set(house_bot_names("seizure-v1"))


def test_unknown_house_bot_lists_the_game_s_house_bots() -> None:
    from saloon.sdk.errors import UnknownHouseBot
    from saloon.sdk.house import make_house_bot

    with pytest.raises(UnknownHouseBot, match=r"no house bot 'clever' for seizure-v1 .*greedy"):
        make_house_bot("seizure-v1", "clever")
