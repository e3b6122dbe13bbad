"""A PettingZoo AEC environment of every game, for training learning bots
(``pip install 'saloon-arena[train]'``; the bot image stays without it).

    from saloon.referee.training import env

    game = env("seizure-v1", num_seats=2)
    game.reset(seed=1)
    for agent in game.agent_iter():
        observation, reward, terminated, truncated, info = game.last()
        action = None if terminated or truncated else my_policy(observation, info)
        game.step(action)

Agents are ``seat_0`` .. ``seat_{n-1}``. An observation is ``{"observation": float32
vector, "action_mask": int8 vector}`` (saloon.sdk.encoding: the same numbers a
:class:`~saloon.sdk.encoding.PolicyBot` gives the policy in a real match); ``info`` holds
the typed view, ``info["decision"]`` (the :class:`~saloon.sdk.bot.Decision` a bot would
get). An action is an engine action id with a 1 in the mask. Chance (shuffles, draws) is
drawn from the seed given to ``reset``, so a seeded episode replays exactly; unlike the
referee, the environment asks even for a forced move (one legal action), as PettingZoo's
classic games do.

Reward: 0 until the game ends, then each seat's placing, 1 for first alone down to -1
for last (ties share: ``1 - 2 * rank / (n - 1)``). An episode longer than the game's
``max_length`` is truncated.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]

from saloon.games import CHANCE, TERMINAL, State, get_game
from saloon.sdk.encoding import action_count, encode, mask, observation_size
from saloon.sdk.games import make_decision

#: Observation values are counts, scores and flags: well inside this bound.
BOUND = 1e6


class SaloonEnv(AECEnv[str, dict[str, Any], int | None]):  # type: ignore[misc]
    """One game of ``game_id`` with ``num_seats`` seats, as a PettingZoo AEC environment."""

    metadata = {"render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        game_id: str,
        num_seats: int | None = None,
        options: dict[str, str | int] | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.spec_ = get_game(game_id)
        self.game_id = game_id
        self.num_seats = num_seats or self.spec_.min_players
        self.spec_.check_players(self.num_seats)
        self.options = dict(options or {})
        self.spec_.parse_options(self.options)
        self.render_mode = render_mode
        self.metadata = {**self.metadata, "name": f"saloon_{game_id.replace('-', '_')}"}
        self.possible_agents = [f"seat_{i}" for i in range(self.num_seats)]
        size = observation_size(game_id)
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(-BOUND, BOUND, (size,), np.float32),
                "action_mask": spaces.Box(0, 1, (action_count(game_id),), np.int8),
            }
        )
        self._action_space = spaces.Discrete(action_count(game_id))
        self._rng = random.Random(0)
        self.state: State = self.spec_.new_game(self.num_seats, self.options)
        self._steps = 0

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._observation_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._action_space

    # -- the episode ----------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._rng = random.Random(seed)
        self.state = self.spec_.new_game(self.num_seats, self.options)
        self._steps = 0
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._advance()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        legal = self.state.legal_actions()
        if action is None or int(action) not in legal:
            raise ValueError(f"{agent}: action {action!r} is not legal (legal ids: {legal})")
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.state.apply_action(int(action))
        self._steps += 1
        self._advance()
        self._accumulate_rewards()

    def _advance(self) -> None:
        """Play chance steps, then point ``agent_selection`` at the seat to decide (or end)."""
        state = self.state
        while state.current_player() == CHANCE:
            state.apply_chance(state.sample_chance(self._rng))
        player = state.current_player()
        if player == TERMINAL:
            ranks = state.ranks()
            n = self.num_seats
            for seat, agent in enumerate(self.possible_agents):
                self.rewards[agent] = 1.0 - 2.0 * ranks[seat] / (n - 1) if n > 1 else 0.0
                self.terminations[agent] = True
            self.agent_selection = self.agents[0]
            return
        if self._steps >= self.spec_.max_length:
            for agent in self.agents:
                self.truncations[agent] = True
            self.agent_selection = self.agents[0]
            return
        self.agent_selection = self.possible_agents[player]
        self.infos[self.agent_selection] = {"decision": self._decision(player)}

    def _decision(self, player: int) -> Any:
        state = self.state
        raw = [state.action_to_json(a) for a in state.legal_actions()]
        return make_decision(
            self.game_id, state.decision_kind(), state.observation(player), raw, None, self._steps
        )

    def observe(self, agent: str) -> dict[str, Any]:
        seat = self.possible_agents.index(agent)
        state = self.state
        legal = state.legal_actions() if state.current_player() == seat else []
        kind = state.decision_kind() if legal else ""
        return {
            "observation": np.asarray(
                encode(self.game_id, kind, state.observation(seat)), dtype=np.float32
            ),
            "action_mask": np.asarray(mask(self.game_id, legal), dtype=np.int8),
        }

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self.state.render()
        return None

    def close(self) -> None:
        """Nothing to release."""


def env(game_id: str, num_seats: int | None = None, **kwargs: Any) -> SaloonEnv:
    """The AEC environment of ``game_id`` (``num_seats``: default the game's least)."""
    return SaloonEnv(game_id, num_seats, **kwargs)
