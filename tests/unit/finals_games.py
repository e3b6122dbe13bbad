"""Simulated tournaments for the finals' tests: entrants of graded skill, games played
from a seed (a Thurstone world: skill plus N(0, beta^2) per seat)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from saloon.ratings.finals import Batch, FinalsPolicy, Placing, Stop, plan_batch
from saloon.ratings.params import DEFAULT_BETA

#: Neighbours' skills this many betas apart (entrant 0 best).
GAP = 1.0


def entrants(n: int) -> list[str]:
    """``n`` entrant ids, best first ("e00", "e01", ...)."""
    return [f"e{i:02d}" for i in range(n)]


def skill_of(entrant: str) -> float:
    return -int(entrant[1:]) * GAP * DEFAULT_BETA


def play(seats: Sequence[str], rng: random.Random) -> tuple[int, ...]:
    """Places of one game at these seats."""
    perf = [skill_of(e) + rng.gauss(0, DEFAULT_BETA) for e in seats]
    return tuple(sum(1 for q in perf if q > x) for x in perf)


def random_games(names: list[str], count: int, seats: int, seed: int) -> list[Placing]:
    """``count`` games at random tables of ``seats``, each its own deal."""
    rng = random.Random(seed)
    out = []
    for m in range(count):
        table = tuple(rng.sample(names, seats))
        out.append(Placing(f"h{m:05d}", f"h{m}", table, play(table, rng)))
    return out


def run_finals(
    names: list[str], history: list[Placing], policy: FinalsPolicy, seed: int
) -> tuple[Stop, list[Placing]]:
    """Batch after batch until the finals stop: the stop and every result."""
    rng = random.Random(seed)
    results = list(history)
    index = 0
    while True:
        step: Batch | Stop = plan_batch(names, results, policy, seed, index,
                                        finals_from=len(history))  # fmt: skip
        if isinstance(step, Stop):
            return step, results
        for number, table in enumerate(step.tables):
            match_id = f"f{index:04d}.{number:03d}"
            results.append(Placing(match_id, table.deal, table.seats, play(table.seats, rng)))
        index += 1
