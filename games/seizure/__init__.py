"""Seizure: 2-6 players, shed cards, dodge points (engine in :mod:`.engine`)."""

GAMES = {"seizure-v1": "saloon.games.seizure.engine:GAME"}
# The SDK layer's typed views and house bots of this id (import names only: nothing imported).
SDK_VIEWS = {"seizure-v1": "saloon.sdk.games.seizure"}
# house:search and its grades house:search-N (saloon.sdk.house.search).
_SEARCH = {"search": "saloon.sdk.house.search:Search"} | {
    f"search-{n}": f"saloon.sdk.house.search:Search{n}" for n in (25, 50, 100, 200, 400, 800)
}
HOUSE_BOTS = {"seizure-v1": {"greedy": "saloon.sdk.house.seizure:GreedyBot"} | _SEARCH}
