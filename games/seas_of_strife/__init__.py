"""Seas of Strife: 3-6 players, trick avoidance (engine in :mod:`.engine`)."""

GAMES = {"seas-of-strife-v1": "saloon.games.seas_of_strife.engine:GAME"}
# The SDK layer's typed views and house bots of this id (import names only: nothing imported).
SDK_VIEWS = {"seas-of-strife-v1": "saloon.sdk.games.seas_of_strife"}
# house:search and its grades house:search-N (saloon.sdk.house.search).
_SEARCH = {"search": "saloon.sdk.house.search:Search"} | {
    f"search-{n}": f"saloon.sdk.house.search:Search{n}" for n in (25, 50, 100, 200, 400, 800)
}
HOUSE_BOTS = {
    "seas-of-strife-v1": {"greedy": "saloon.sdk.house.seas_of_strife:GreedyBot"} | _SEARCH
}
