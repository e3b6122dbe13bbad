"""Playouts per decision at the default clock, early and late in a game (not a test; run
by hand): the rule of thumb of docs/bot-guide.md's search section.

    python bench/decision_playouts.py [--games 4] [--per-phase 8] [--game ID ...]

For each game at its smallest table: seeded games of house:greedy in every seat; from each
game, seat 0's decisions with 2+ legal actions of the first third of its decisions
("early") and of the last third ("late"), ``--per-phase`` of each spread over the games.
Each decision is searched by two searches with an iteration budget too large to reach and
the time cap a ``SearchBot`` has at the default clock (a quarter of 1000 ms: 250 ms), and
the playouts done in that time are counted:

* ``Searcher``: the guide's generic ``InformationSetSearch`` (random playouts to the end
  of the hand or round, the default evaluation);
* ``greedy rollouts``: ``RolloutSearch`` with the game's greedy fast playout and reward,
  as the guide's strongest examples and house:search (its playout caches cold at each
  game's first decision).

Printed: the median playouts per decision, early and late, per search; and the machine's
load average, which these figures follow (one process, one core).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
from typing import Any

from saloon.games import CHANCE, TERMINAL, game_ids, get_game
from saloon.referee.limits import DEFAULT_LIMITS
from saloon.sdk.bot import Decision
from saloon.sdk.games import make_decision
from saloon.sdk.house import make_house_bot
from saloon.sdk.house.playouts import clear_caches
from saloon.sdk.house.search import KNOWLEDGE
from saloon.sdk.search import (
    CLOCK_SHARE,
    InformationSetSearch,
    RolloutSearch,
    SearchBudget,
)

CAP_MS = DEFAULT_LIMITS.decision_ms * CLOCK_SHARE


def phase_decisions(
    game_id: str, games: int, per_phase: int
) -> dict[str, list[tuple[int, Decision[Any, Any]]]]:
    """Seat 0's early and late decisions (2+ legal actions) from seeded greedy games."""
    spec = get_game(game_id)
    players = spec.min_players
    out: dict[str, list[tuple[int, Decision[Any, Any]]]] = {"early": [], "late": []}
    for seed in range(games):
        rng = random.Random(seed)
        bots = [make_house_bot(game_id, "greedy") for _ in range(players)]
        state = spec.new_game(players)
        mine: list[Decision[Any, Any]] = []
        while state.current_player() != TERMINAL:
            player = state.current_player()
            if player == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            raw = [state.action_to_json(a) for a in legal]
            decision = make_decision(game_id, state.decision_kind(), state.observation(player), raw)
            if player == 0 and len(legal) > 1:
                mine.append(decision)
            state.apply_action(legal[decision.index_of(bots[player].act(decision))])
        third = max(1, len(mine) // 3)
        take = max(1, per_phase // games)
        out["early"] += [(0, d) for d in mine[:third][:: max(1, third // take)][:take]]
        out["late"] += [(0, d) for d in mine[-third:][:: max(1, third // take)][:take]]
    return out


def playouts_in_cap(game_id: str, kind: str, seat: int, decision: Decision[Any, Any]) -> int:
    """Playouts one search does in CAP_MS on this decision."""
    budget = SearchBudget(iterations=10_000_000, time_ms=CAP_MS)
    rng = random.Random(0)
    if kind == "Searcher":
        return InformationSetSearch(game_id, seat, rng, budget).run(decision).iterations
    knowledge = KNOWLEDGE[game_id]
    search = RolloutSearch(
        game_id,
        seat,
        rng,
        budget,
        playout=knowledge.playout,
        evaluate=knowledge.evaluate,
        playout_depth=knowledge.playout_depth,
        rollout=knowledge.playout_loop,
    )
    return search.run(decision).iterations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=4, help="seeded games per game id")
    parser.add_argument("--per-phase", type=int, default=8, help="decisions early and late")
    parser.add_argument("--game", action="append", help="only these game ids")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"playouts per decision in {CAP_MS:.0f} ms (a SearchBot's cap at the default clock)")
    print(f"{'game':<22} {'search':<16} {'early':>8} {'late':>8}")
    for game_id in args.game or game_ids():
        if game_id not in KNOWLEDGE:
            continue
        cases = phase_decisions(game_id, args.games, args.per_phase)
        for kind in ("Searcher", "greedy rollouts"):
            medians = []
            for phase in ("early", "late"):
                clear_caches()
                counts = [playouts_in_cap(game_id, kind, s, d) for s, d in cases[phase]]
                medians.append(statistics.median(counts))
            print(f"{game_id:<22} {kind:<16} {medians[0]:>8.0f} {medians[1]:>8.0f}")
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    print(f"load average at the end: {load[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
