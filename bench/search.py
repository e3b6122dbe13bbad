"""House search speed and strength (not a test; run by hand).

    python bench/search.py [--positions 20] [--iterations 200] [--runs 3] [--games 20]
                           [--game ID ...] [--no-strength]

Speed, per game and seat count, in the same run:

* engine decisions/s: bench/engines.py's random playouts (the engine alone);
* search iterations/s: ``house:search``'s search (rollouts of each game's greedy policy,
  :class:`saloon.sdk.search.RolloutSearch`) run for ``--iterations`` playouts on
  ``--positions`` decisions taken from seeded random games, no time cap; median of ``--runs`` runs;
* engine share: the share of the search's time spent inside the engine (functions of
  ``saloon.games``: legal_actions, apply_action, chance, clone, resample_hidden,
  from_observation), measured with cProfile over one run (the profiler slows every call
  alike; a share, not a speed); the overhead ratio is total time / engine time. Every run
  starts with the playouts' caches empty (saloon.sdk.house.playouts.clear_caches): a run
  repeats the same searches, which would otherwise find every choice remembered.

Strength: ``house:search`` at its default budget against ``house:greedy`` in every other
seat, ``--games`` seeded games per seat count, the search seat rotating. Two seats: win
rate and its one-sided sign-test p-value under "no better than greedy" (p = 1/2). More
seats: the search seat's average placing (0 best) and a one-sided z-test p-value of it
against the placing of a seat no better than the others (the mean placing of the greedy
seats in the same games, permutation-free approximation).
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import saloon.games
from saloon.games import CHANCE, TERMINAL, game_ids, get_game
from saloon.referee.match import play_local
from saloon.sdk.bot import Decision, MatchInfo
from saloon.sdk.games import make_decision
from saloon.sdk.house.playouts import clear_caches
from saloon.sdk.house.search import Search
from saloon.sdk.search import SearchBudget, Searcher

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines import run_playouts

ENGINE_DIR = str(Path(saloon.games.__file__).resolve().parent)


def positions(
    game_id: str, players: int, count: int, seed: int
) -> list[tuple[int, Decision[Any, Any]]]:
    """``count`` (seat, decision) pairs with 2+ legal actions from seeded random games."""
    spec = get_game(game_id)
    rng = random.Random(seed)
    out: list[tuple[int, Decision[Any, Any]]] = []
    while len(out) < count:
        state = spec.new_game(players)
        while state.current_player() != TERMINAL and len(out) < count:
            player = state.current_player()
            if player == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            if len(legal) > 1 and rng.random() < 0.05:
                raw = [state.action_to_json(a) for a in legal]
                kind = state.decision_kind()
                out.append((player, make_decision(game_id, kind, state.observation(player), raw)))
            state.apply_action(legal[rng.randrange(len(legal))])
    return out


class Graded(Search):
    """house:search with the budget given to make_search (not the game's default)."""

    GRADED = True


def make_search(game_id: str, players: int, seat: int, iterations: int) -> Searcher:
    """The search house:search runs, with an iteration budget and no time cap."""
    bot = Graded()
    info = MatchInfo(game_id, {}, seat, players, seed=seat)
    return bot.make_search(info, SearchBudget(iterations, 1e9))


def search_speed(
    game_id: str, players: int, cases: list[tuple[int, Decision[Any, Any]]], iterations: int
) -> float:
    """Iterations per second over the cases (the playouts' caches cold at the start)."""
    clear_caches()
    done = 0
    start = time.perf_counter()
    for seat, decision in cases:
        done += make_search(game_id, players, seat, iterations).run(decision).iterations
    return done / (time.perf_counter() - start)


def engine_share(
    game_id: str, players: int, cases: list[tuple[int, Decision[Any, Any]]], iterations: int
) -> float:
    """The share of the search's time inside the engine package, by cProfile. Time in
    builtins and the standard library (list methods, random) counts for whoever called
    them, split by the calls' share of that time."""
    clear_caches()
    profile = cProfile.Profile()
    profile.enable()
    for seat, decision in cases:
        make_search(game_id, players, seat, iterations).run(decision)
    profile.disable()
    table = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    project = str(Path(ENGINE_DIR).parent.parent)
    memo: dict[Any, float] = {}

    def fraction(func: Any, depth: int = 0) -> float:
        if func in memo:
            return memo[func]
        filename = str(Path(func[0]).resolve()) if func[0] not in ("~", "") else "~"
        if filename.startswith(project):
            value = 1.0 if filename.startswith(ENGINE_DIR) else 0.0
        else:
            callers = table[func][4] if func in table else {}
            weight = sum(row[2] for row in callers.values())
            if not callers or depth > 20 or weight <= 0:
                value = 0.0
            else:
                value = (
                    sum(row[2] * fraction(caller, depth + 1) for caller, row in callers.items())
                    / weight
                )
        memo[func] = value
        return value

    inside = total = 0.0
    for func, row in table.items():
        total += row[2]
        inside += row[2] * fraction(func)
    return inside / total if total else 0.0


def strength(game_id: str, players: int, games: int) -> tuple[str, str]:
    """(result, p-value) of house:search against house:greedy at this seat count."""
    wins = 0
    mine: list[float] = []
    theirs: list[float] = []
    for seed in range(games):
        seat = seed % players
        bots = ["house:greedy"] * players
        bots[seat] = "house:search"
        record = play_local(game_id, bots, seed)
        wins += record.ranks[seat] == 0 and record.ranks.count(0) == 1
        mine.append(record.ranks[seat])
        theirs.append(statistics.mean(r for s, r in enumerate(record.ranks) if s != seat))
    if players == 2:
        # One-sided sign test: P(X >= wins | Binomial(games, 1/2)).
        p = sum(math.comb(games, k) for k in range(wins, games + 1)) / 2**games
        return f"{wins}/{games} wins ({wins / games:.0%})", f"{p:.2g}"
    diffs = [t - m for m, t in zip(mine, theirs, strict=True)]
    mean = statistics.mean(diffs)
    sd = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    z = mean / (sd / math.sqrt(len(diffs))) if sd else math.inf
    p = 0.5 * math.erfc(z / math.sqrt(2))
    return f"placing {statistics.mean(mine):.2f} vs {statistics.mean(theirs):.2f}", f"{p:.2g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=20, help="decisions searched per row")
    parser.add_argument("--iterations", type=int, default=200, help="iterations per decision")
    parser.add_argument("--runs", type=int, default=3, help="speed runs per row (median)")
    parser.add_argument("--seconds", type=float, default=1.0, help="engine playout run length")
    parser.add_argument("--games", type=int, default=20, help="strength games per seat count")
    parser.add_argument("--game", action="append", help="only these game ids")
    parser.add_argument("--no-strength", action="store_true", help="speed table only")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    console = Console()
    speed = Table(title=f"house:search speed ({args.iterations} iterations per decision)")
    for name in ("game", "seats", "engine decisions/s", "search iterations/s", "ms/decision"):
        speed.add_column(name, justify="right")
    speed.add_column("engine share", justify="right")
    speed.add_column("overhead ratio", justify="right")
    rows: list[tuple[str, int]] = []
    for game_id in args.game or game_ids():
        spec = get_game(game_id)
        if spec.from_observation is None:
            continue
        for players in range(spec.min_players, spec.max_players + 1):
            rows.append((game_id, players))
    for game_id, players in rows:
        spec = get_game(game_id)
        if players not in (spec.min_players, spec.max_players):
            continue
        cases = positions(game_id, players, args.positions, seed=players)
        engine = statistics.median(
            run_playouts(game_id, players, args.seconds, r)[0] for r in range(args.runs)
        )
        its = statistics.median(
            search_speed(game_id, players, cases, args.iterations) for _ in range(args.runs)
        )
        share = engine_share(game_id, players, cases, args.iterations)
        speed.add_row(
            game_id,
            str(players),
            f"{engine:,.0f}",
            f"{its:,.0f}",
            f"{1000 * args.iterations / its:,.0f}",
            f"{share:.0%}",
            f"{1 / share:.2f}x" if share else "-",
        )
        console.print(f"[dim]{game_id} {players} seats done[/dim]")
    console.print(speed)
    if args.no_strength:
        return 0
    table = Table(title=f"house:search (default budget) vs house:greedy, {args.games} games each")
    for name in ("game", "seats", "result", "p (no better than greedy)", "s/game"):
        table.add_column(name, justify="right")
    for game_id, players in rows:
        start = time.perf_counter()
        result, p = strength(game_id, players, args.games)
        per_game = (time.perf_counter() - start) / args.games
        table.add_row(game_id, str(players), result, p, f"{per_game:.1f}")
        console.print(f"[dim]{game_id} {players} seats: {result} p={p}[/dim]")
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
