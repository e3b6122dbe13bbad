"""Random playouts through the engine contract alone (no referee), for the conformance suite."""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from saloon.games import CHANCE, TERMINAL, GameSpec, Options, State, game_ids, get_game


@dataclass(frozen=True)
class Case:
    """One configuration to check: a game, a seat count, options."""

    game: str
    players: int
    options: Options = field(default_factory=dict)

    @property
    def id(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return f"{self.game}-{self.players}p" + (f"-{opts}" if opts else "")

    @property
    def spec(self) -> GameSpec:
        return get_game(self.game)


def all_cases() -> list[Case]:
    """Every registered game x every seat count x (defaults, each non-default choice)."""
    cases = []
    only = os.environ.get("SALOON_TEST_GAMES")  # developers: restrict to a comma list of ids
    for game_id in game_ids():
        if only and game_id not in only.split(","):
            continue
        spec = get_game(game_id)
        variants: list[Options] = [{}]
        for opt in spec.options:
            variants += [{opt.name: c} for c in opt.choices if c != opt.default]
            if opt.int_range is not None:
                variants += [{opt.name: v} for v in sorted(set(opt.int_range)) if v != opt.default]
        for n in range(spec.min_players, spec.max_players + 1):
            cases += [Case(game_id, n, v) for v in variants]
    return cases


Entry = tuple[int, int | tuple[int, ...]]
StepHook = Callable[[State, random.Random], None]


def playout(case: Case, seed: int, on_step: StepHook | None = None) -> tuple[State, list[Entry]]:
    """Play one game with uniformly random actions; returns the final state and the log."""
    spec = case.spec
    state = spec.new_game(case.players, case.options)
    rng = random.Random(seed)
    log: list[Entry] = []
    while True:
        if on_step is not None:
            on_step(state, rng)
        player = state.current_player()
        if player == TERMINAL:
            return state, log
        if len(log) > spec.max_length:
            raise AssertionError(f"{case.id} seed {seed}: longer than max_length {spec.max_length}")
        if player == CHANCE:
            outcome = state.sample_chance(rng)
            state.apply_chance(outcome)
            log.append((CHANCE, outcome))
        else:
            legal = state.legal_actions()
            action = legal[rng.randrange(len(legal))]
            state.apply_action(action)
            log.append((player, action))


def replay_log(case: Case, log: list[Entry]) -> State:
    """Rebuild a game from its log alone."""
    state = case.spec.new_game(case.players, case.options)
    for player, action in log:
        if player == CHANCE:
            assert isinstance(action, tuple)
            state.apply_chance(action)
        else:
            assert isinstance(action, int)
            state.apply_action(action)
    return state


def card_multiset(state: State) -> list[int]:
    """Every card id in every zone, sorted."""
    return sorted(c for zone in state.cards().values() for c in zone)
