"""Western Legends: Showdown: 2 players, win location stacks (engine in :mod:`.engine`)."""

GAMES = {"western-showdown-v1": "saloon.referee.games.western_showdown.engine:GAME"}
