"""The golden playthroughs: (file name, game id, players, seed, options)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent

CASES: list[tuple[str, str, int, int, dict[str, str | int]]] = [
    ("seas-of-strife-v1-4p-seed1.txt", "seas-of-strife-v1", 4, 1, {}),
    ("seas-of-strife-v1-3p-seed2.txt", "seas-of-strife-v1", 3, 2, {}),
    ("western-showdown-v1-seed55.txt", "western-showdown-v1", 2, 55, {}),
    ("western-showdown-v1-bo3-seed2.txt", "western-showdown-v1", 2, 2, {"best_of": 3}),
    ("seizure-v1-4p-seed2.txt", "seizure-v1", 4, 2, {}),
    ("seizure-v1-2p-gap-seed5.txt", "seizure-v1", 2, 5, {"end": "gap"}),
]
