"""Playthroughs: a readable dump of one whole seeded random game, for golden-file tests.

Any change to a game's rules changes its playthrough, so a diff against the checked-in
golden file catches rule drift (the idea of OpenSpiel's playthrough files). One line per
step; the full state after every chance event and at the end.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Mapping, Sequence

from saloon.games import CHANCE, TERMINAL, get_game


def playthrough(
    game_id: str, players: int, seed: int, options: Mapping[str, str | int] | None = None
) -> str:
    """The playthrough text of one game played with uniformly random actions from ``seed``."""
    spec = get_game(game_id)
    state = spec.new_game(players, options)
    parsed = spec.parse_options(options)
    rng = random.Random(seed)
    lines = [
        f"# playthrough of {game_id}, {players} players, seed {seed}, "
        f"options {json.dumps(parsed, sort_keys=True)}",
        "# regenerate: python tests/golden/regen.py",
    ]
    step = 0
    while True:
        player = state.current_player()
        if player == TERMINAL:
            break
        kind = state.decision_kind()
        if player == CHANCE:
            outcome = state.sample_chance(rng)
            lines.append(f"{step:5} chance {kind}: {state.outcome_to_string(outcome)}")
            state.apply_chance(outcome)
            lines.extend("      | " + line for line in state.render().splitlines())
        else:
            legal = state.legal_actions()
            action = legal[rng.randrange(len(legal))]
            lines.append(
                f"{step:5} seat {player} {kind} ({len(legal)} legal): "
                f"{state.action_to_string(action)}"
            )
            state.apply_action(action)
        step += 1
    lines.extend("      | " + line for line in state.render().splitlines())
    lines.append(f"final scores {state.scores()} ranks {state.ranks()}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m saloon.referee.playthrough GAME PLAYERS SEED [NAME=VALUE ...]``."""
    parser = argparse.ArgumentParser(prog="python -m saloon.referee.playthrough")
    parser.add_argument("game")
    parser.add_argument("players", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("options", nargs="*", metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    options = dict(o.split("=", 1) for o in args.options)
    sys.stdout.write(playthrough(args.game, args.players, args.seed, options))
    return 0


if __name__ == "__main__":
    sys.exit(main())
