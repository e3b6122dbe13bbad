"""Seizure: 2-6 players, shed cards, dodge points (engine in :mod:`.engine`)."""

GAMES = {"seizure-v1": "saloon.referee.games.seizure.engine:GAME"}
