"""Ratings: TrueSkill per ladder (a pure fold over results in schedule order), leaderboards.

Layer: imports ``saloon.worker`` and below, nothing above. ``trueskill`` and ``rich`` are
imported inside the modules that need them (never by ``saloon play``). See docs/ratings.md.
"""
