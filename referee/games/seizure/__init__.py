"""Seizure: 2-6 players, shed cards, dodge points (engine in :mod:`.engine`)."""

GAMES = {"seizure-v1": "saloon.referee.games.seizure.engine:GAME"}
# The SDK layer's typed views and house bots of this id (import names only: nothing imported).
SDK_VIEWS = {"seizure-v1": "saloon.sdk.games.seizure"}
HOUSE_BOTS = {"seizure-v1": {"greedy": "saloon.sdk.house.seizure:GreedyBot"}}
