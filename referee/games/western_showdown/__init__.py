"""Western Legends: Showdown: 2 players, win location stacks (engine in :mod:`.engine`)."""

GAMES = {"western-showdown-v1": "saloon.referee.games.western_showdown.engine:GAME"}
# The SDK layer's typed views and house bots of this id (import names only: nothing imported).
SDK_VIEWS = {"western-showdown-v1": "saloon.sdk.games.western_showdown"}
HOUSE_BOTS = {"western-showdown-v1": {"greedy": "saloon.sdk.house.western_showdown:GreedyBot"}}
