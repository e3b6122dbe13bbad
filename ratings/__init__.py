"""Ratings: TrueSkill per game and leaderboards (to come)."""
