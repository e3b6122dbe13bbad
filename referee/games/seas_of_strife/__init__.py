"""Seas of Strife: 3-6 players, trick avoidance (engine in :mod:`.engine`)."""

GAMES = {"seas-of-strife-v1": "saloon.referee.games.seas_of_strife.engine:GAME"}
