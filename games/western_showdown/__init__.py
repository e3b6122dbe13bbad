"""Western Legends: Showdown: 2 players, win location stacks (engine in :mod:`.engine`)."""

GAMES = {"western-showdown-v1": "saloon.games.western_showdown.engine:GAME"}
# The SDK layer's typed views and house bots of this id (import names only: nothing imported).
SDK_VIEWS = {"western-showdown-v1": "saloon.sdk.games.western_showdown"}
# house:search and its grades house:search-N (saloon.sdk.house.search).
_SEARCH = {"search": "saloon.sdk.house.search:Search"} | {
    f"search-{n}": f"saloon.sdk.house.search:Search{n}" for n in (25, 50, 100, 200, 400, 800)
}
HOUSE_BOTS = {
    "western-showdown-v1": {"greedy": "saloon.sdk.house.western_showdown:GreedyBot"} | _SEARCH
}
