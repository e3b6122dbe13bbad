"""Engine speed: random playouts per registered game (not a test; run by hand).

    python bench/engines.py [--seconds 1.0] [--runs 5] [--game ID ...]

Counts seat decisions (legal_actions + apply_action; chance events are applied but not
counted) per second and whole games per second, single process pinned to one core, median of
``--runs`` runs, printed as a table. For a floor in the same run, ``--floor`` adds a tight
throwaway Seas of Strife loop on plain lists (the ~1 M decisions/s baseline of MEASURED).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time

from saloon.games import CHANCE, TERMINAL, game_ids, get_game


def run_playouts(game_id: str, players: int, seconds: float, seed: int) -> tuple[float, float]:
    """(decisions/s, games/s) of random playouts for about ``seconds``."""
    spec = get_game(game_id)
    rng = random.Random(seed)
    decisions = games = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        state = spec.new_game(players)
        while True:
            player = state.current_player()
            if player == TERMINAL:
                break
            if player == CHANCE:
                state.apply_chance(state.sample_chance(rng))
                continue
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.random() * len(legal))])
            decisions += 1
        games += 1
        now = time.perf_counter()
        if now >= deadline:
            return decisions / (now - start), games / (now - start)


def floor_loop(seconds: float, seed: int) -> float:
    """A tight throwaway 4-player trick loop on plain lists: decisions/s (the floor)."""
    rng = random.Random(seed)
    colour = [c // 10 for c in range(60)]
    decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        deck = list(range(60))
        rng.shuffle(deck)
        hands = [deck[i * 15 : (i + 1) * 15] for i in range(4)]
        leader = 0
        for _trick in range(15):
            trick: list[int] = []
            colours = 0
            for k in range(4):
                hand = hands[(leader + k) % 4]
                legal = [c for c in hand if (colours >> colour[c]) & 1] or hand
                card = legal[int(rng.random() * len(legal))]
                hand.remove(card)
                trick.append(card)
                colours |= 1 << colour[card]
                decisions += 1
            leader = (leader + trick.index(max(trick))) % 4
    return decisions / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one run")
    parser.add_argument("--runs", type=int, default=5, help="runs per row (median reported)")
    parser.add_argument("--game", action="append", help="only these game ids")
    parser.add_argument("--floor", action="store_true", help="also time the throwaway loop")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    print(f"{'game':<22} {'seats':>5} {'decisions/s':>12} {'games/s':>9}  (median of {args.runs})")
    for game_id in args.game or game_ids():
        spec = get_game(game_id)
        for players in sorted({spec.min_players, spec.max_players}):
            runs = [run_playouts(game_id, players, args.seconds, r) for r in range(args.runs)]
            dps = statistics.median(r[0] for r in runs)
            gps = statistics.median(r[1] for r in runs)
            print(f"{game_id:<22} {players:>5} {dps:>12,.0f} {gps:>9,.1f}")
            sys.stdout.flush()
    if args.floor:
        floor = statistics.median(floor_loop(args.seconds, r) for r in range(args.runs))
        print(f"{'floor (throwaway loop)':<22} {4:>5} {floor:>12,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
