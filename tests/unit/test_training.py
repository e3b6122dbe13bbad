"""The PettingZoo environment (saloon.referee.training): PettingZoo's own api_test on every
game, seeded episodes, and a policy written for it playing `saloon play` unchanged through
saloon.sdk.encoding.PolicyBot; docs/training.md's worked example and its figures."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test

from saloon.games import get_game
from saloon.referee.training import env

DOC = Path(__file__).resolve().parents[2] / "docs" / "training.md"
SALOON = [sys.executable, "-m", "saloon.arena.cli"]


def example(name: str) -> str:
    """The ``# file: NAME`` python block of docs/training.md."""
    blocks = dict(re.findall(r"```python\n# file: (\S+)\n(.*?)```", DOC.read_text(), re.S))
    return blocks[name]


@pytest.mark.parametrize(
    ("game", "seats"), [("seas-of-strife-v1", 3), ("seizure-v1", 2), ("western-showdown-v1", 2)]
)
def test_pettingzoo_api_test_passes(game: str, seats: int) -> None:
    api_test(env(game, seats), num_cycles=60)


def episode(game: str, seats: int, seed: int) -> list[int]:
    """The actions of one episode where every seat plays its first legal action."""
    environment = env(game, seats)
    environment.reset(seed=seed)
    actions = []
    for _agent in environment.agent_iter():
        observation, _, terminated, truncated, info = environment.last()
        if terminated or truncated:
            environment.step(None)
            continue
        assert info["decision"].legal  # the typed view beside the numbers
        action = int(np.flatnonzero(observation["action_mask"])[0])
        actions.append(action)
        environment.step(action)
    return actions


def test_a_seeded_episode_replays_exactly() -> None:
    assert episode("seizure-v1", 2, 4) == episode("seizure-v1", 2, 4)
    assert episode("seizure-v1", 2, 4) != episode("seizure-v1", 2, 5)


def test_an_environment_policy_plays_saloon_play_unchanged(tmp_path: Path) -> None:
    """The doc's lowest_bot.py (a policy over the environment's observation) as a bot file:
    no fault, and every move it made is the lowest legal action id, as in the env."""
    bot = tmp_path / "lowest_bot.py"
    bot.write_text(example("lowest_bot.py"))
    game = "seas-of-strife-v1"
    argv = [*SALOON, "play", game, "--seat", str(bot), "--seat", "house:random"]
    out = subprocess.run(
        [*argv, "--seat", "house:random", "--seed", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["faults"] == []
    state = get_game(game).new_game(3)
    mine = 0
    for entry in record["log"]:
        if "chance" in entry:
            state.apply_chance(entry["outcome"])
            continue
        if entry["seat"] == 0:
            assert entry["action"] == min(state.legal_actions())
            mine += 1
        state.apply_action(entry["action"])
    assert mine > 10


def in_env_figures(episodes: int) -> tuple[int, float]:
    """The doc's in-environment evaluation: lowest_bot's policy in a rotating seat, the
    other seats uniformly random (random.Random(0)); (sole first places, mean reward)."""
    namespace: dict[str, Any] = {}
    exec(example("lowest_bot.py"), namespace)  # the doc's own policy function
    lowest = namespace["lowest"]
    rng = random.Random(0)
    firsts, total = 0, 0.0
    environment = env("seas-of-strife-v1", 3)
    for number in range(episodes):
        me = f"seat_{number % 3}"
        environment.reset(seed=number)
        for agent in environment.agent_iter():
            observation, reward, terminated, truncated, info = environment.last()
            if terminated or truncated:
                if agent == me:
                    firsts += reward == 1.0
                    total += reward
                environment.step(None)
                continue
            legal = np.flatnonzero(observation["action_mask"])
            move = lowest(observation, info) if agent == me else int(rng.choice(list(legal)))
            environment.step(move)
    return firsts, total / episodes


def test_the_docs_worked_example_figures_are_current() -> None:
    firsts, mean = in_env_figures(60)
    text = " ".join(DOC.read_text().split())
    stated = f"first alone in {firsts} of 60 episodes, mean reward {mean:.3f}"
    assert stated in text, f"docs/training.md should say: {stated}"
